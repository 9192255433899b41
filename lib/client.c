/* client.c - the client object, its curl handle pool, and one HTTP request
 * with retries (kube_request_raw); JSON verbs are in verbs.c. */
#include "kube/client.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client_int.h"
#include "kube/http.h"
#include "kube/log.h"
#include "kube/util.h"

#define POOL_MAX 8
#define MAX_BODY (64u << 20) /* one reply; lists are paged, objects are <= 1.5 MiB in etcd */

struct kube_client {
    struct kube_config *cfg;
    struct kube_client_opts opts;
    char *user_agent;
    struct kube_cancel *cancel;
    pthread_mutex_t mu;
    CURL *pool[POOL_MAX];
    size_t npool;
    unsigned seed;
};

void kube_client_opts_default(struct kube_client_opts *o)
{
    memset(o, 0, sizeof *o);
    o->connect_timeout_ms = 5000;
    o->request_timeout_ms = 30000;
    kube_retry_policy_default(&o->retry);
    o->user_agent = "mpi-k8s/0.1";
}

struct kube_client *kube_client_new(struct kube_config *cfg, const struct kube_client_opts *opts, char **errmsg)
{
    if (!cfg || !cfg->server) {
        kube_set_err(errmsg, "kube_client_new: no config");
        kube_config_free(cfg);
        return NULL;
    }
    if (kube_http_global_init()) {
        kube_set_err(errmsg, "curl_global_init failed");
        kube_config_free(cfg);
        return NULL;
    }
    struct kube_client *c = calloc(1, sizeof *c);
    if (!c || pthread_mutex_init(&c->mu, NULL)) {
        free(c);
        kube_config_free(cfg);
        kube_set_err(errmsg, "out of memory");
        return NULL;
    }
    c->cfg = cfg;
    const char *bad = cfg->ca_file && access(cfg->ca_file, R_OK) ? cfg->ca_file
                      : cfg->cert_file && access(cfg->cert_file, R_OK) ? cfg->cert_file
                      : cfg->key_file && access(cfg->key_file, R_OK) ? cfg->key_file : NULL;
    if (bad) {
        kube_set_err(errmsg, "%s: %s: %m", cfg->origin ? cfg->origin : "config", bad);
        kube_client_free(c);
        return NULL;
    }
    kube_client_opts_default(&c->opts);
    if (opts) {
        if (opts->connect_timeout_ms > 0)
            c->opts.connect_timeout_ms = opts->connect_timeout_ms;
        if (opts->request_timeout_ms > 0)
            c->opts.request_timeout_ms = opts->request_timeout_ms;
        if (opts->retry.max_attempts > 0)
            c->opts.retry = opts->retry;
        if (opts->user_agent)
            c->opts.user_agent = opts->user_agent;
    }
    c->user_agent = strdup(c->opts.user_agent);
    c->opts.user_agent = c->user_agent;
    c->seed = (unsigned)kube_realtime_ms() ^ (unsigned)(uintptr_t)c;
    if (!c->user_agent) {
        kube_set_err(errmsg, "out of memory");
        kube_client_free(c);
        return NULL;
    }
    return c;
}

const struct kube_config *kube_client_config(const struct kube_client *c) { return c->cfg; }
const char *kube_client_namespace(const struct kube_client *c)
{
    return c->cfg->namespace ? c->cfg->namespace : "default";
}
void kube_client_set_cancel(struct kube_client *c, struct kube_cancel *cancel) { c->cancel = cancel; }
struct kube_cancel *kube_client_cancel(const struct kube_client *c) { return c->cancel; }
const struct kube_client_opts *kube_client_opts(const struct kube_client *c) { return &c->opts; }

void kube_client_free(struct kube_client *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->npool; i++)
        curl_easy_cleanup(c->pool[i]);
    pthread_mutex_destroy(&c->mu);
    kube_config_free(c->cfg);
    free(c->user_agent);
    free(c);
}

CURL *kube_client_take_handle(struct kube_client *c)
{
    CURL *h = NULL;
    pthread_mutex_lock(&c->mu);
    if (c->npool > 0)
        h = c->pool[--c->npool];
    pthread_mutex_unlock(&c->mu);
    return h ? h : curl_easy_init();
}

void kube_client_put_handle(struct kube_client *c, CURL *h)
{
    if (!h)
        return;
    pthread_mutex_lock(&c->mu);
    if (c->npool < POOL_MAX) {
        c->pool[c->npool++] = h;
        h = NULL;
    }
    pthread_mutex_unlock(&c->mu);
    if (h)
        curl_easy_cleanup(h);
}

int kube_client_prepare(struct kube_client *c, CURL *h, const char *method, const char *url,
                        const char *content_type, struct curl_slist **headers, char **errmsg)
{
    curl_easy_reset(h); /* keeps live connections, DNS and TLS session caches */
    *headers = NULL;
    if (kube_curl_apply_config(h, c->cfg, headers, errmsg))
        return -1;
    struct curl_slist *l = curl_slist_append(*headers, "Accept: application/json");
    if (l)
        *headers = l;
    if (l && content_type) {
        char *ct = kube_strdup_printf("Content-Type: %s", content_type);
        l = ct ? curl_slist_append(*headers, ct) : NULL;
        free(ct);
        if (l)
            *headers = l;
    }
    if (l)
        l = curl_slist_append(*headers, "Expect:");
    if (!l) {
        kube_set_err(errmsg, "out of memory");
        return -1;
    }
    *headers = l;
    if (curl_easy_setopt(h, CURLOPT_URL, url) != CURLE_OK ||
        curl_easy_setopt(h, CURLOPT_HTTPHEADER, *headers) != CURLE_OK ||
        curl_easy_setopt(h, CURLOPT_USERAGENT, c->user_agent) != CURLE_OK ||
        curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, c->opts.connect_timeout_ms) != CURLE_OK ||
        (strcmp(method, "GET") && curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method) != CURLE_OK)) {
        kube_set_err(errmsg, "curl: cannot set request options for %s", url);
        return -1;
    }
    return 0;
}

/* ---- one exchange ---- */

struct xfer {
    char *buf;
    size_t len, cap;
    int overflow;
    long retry_after;
    struct kube_cancel *c1, *c2;
};

static size_t on_body(char *data, size_t sz, size_t n, void *ud)
{
    struct xfer *x = ud;
    size_t add = sz * n;
    if (x->len + add + 1 > x->cap) {
        if (x->len + add + 1 > MAX_BODY) {
            x->overflow = 1;
            return 0;
        }
        size_t ncap = x->cap ? x->cap : 4096;
        while (ncap < x->len + add + 1)
            ncap *= 2;
        char *nb = realloc(x->buf, ncap);
        if (!nb)
            return 0;
        x->buf = nb;
        x->cap = ncap;
    }
    memcpy(x->buf + x->len, data, add);
    x->len += add;
    x->buf[x->len] = '\0';
    return add;
}

static size_t on_header(char *data, size_t sz, size_t n, void *ud)
{
    struct xfer *x = ud;
    size_t len = sz * n;
    if (len > 12 && !strncasecmp(data, "Retry-After:", 12)) {
        char *v = strndup(data + 12, len - 12);
        if (v)
            x->retry_after = kube_parse_retry_after(v);
        free(v);
    }
    return len;
}

static int on_progress(void *ud, curl_off_t a, curl_off_t b, curl_off_t c, curl_off_t d)
{
    struct xfer *x = ud;
    (void)a, (void)b, (void)c, (void)d;
    return kube_cancel_requested(x->c1) || kube_cancel_requested(x->c2);
}

/* Turns a failed transfer into err. Returns 1 when the request certainly never reached the
 * server (safe to retry any verb), -1 when retrying cannot help, 0 otherwise. */
static int transport_error(struct kube_client *c, CURLcode rc, const char *ebuf, const char *url,
                           struct xfer *x, struct kube_error *err)
{
    if (rc == CURLE_ABORTED_BY_CALLBACK) {
        kube_error_set(err, 0, KUBE_CANCELLED, "request to %s cancelled", url);
        return 0;
    }
    if (x->overflow) {
        kube_error_set(err, 0, KUBE_PROTOCOL, "reply from %s larger than %u bytes", url, MAX_BODY);
        return 0;
    }
    char *m = kube_curl_describe_error(rc, ebuf, url, c->cfg);
    kube_error_set(err, 0, rc == CURLE_OPERATION_TIMEDOUT ? KUBE_TIMEOUT : KUBE_TRANSPORT, "%s",
                   m ? m : curl_easy_strerror(rc));
    free(m);
    if (kube_curl_error_permanent(rc)) {
        err->permanent = 1;
        return -1;
    }
    return rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_HOST;
}

/* One request. Returns the 2xx body or NULL with err; *unsent as transport_error returns. */
static char *exchange(struct kube_client *c, const char *method, const char *url, const char *body,
                      size_t body_len, const char *content_type, struct kube_cancel *extra, size_t *len,
                      struct kube_error *err, int *unsent)
{
    CURL *h = kube_client_take_handle(c);
    struct curl_slist *headers = NULL;
    struct xfer x = {.retry_after = -1, .c1 = c->cancel, .c2 = extra};
    char ebuf[CURL_ERROR_SIZE] = "", *emsg = NULL, *out = NULL;
    *unsent = 0;
    if (!h) {
        kube_error_set(err, 0, KUBE_TRANSPORT, "out of memory (curl handle)");
        return NULL;
    }
    if (kube_client_prepare(c, h, method, url, body ? content_type : NULL, &headers, &emsg)) {
        kube_error_set(err, 0, KUBE_TRANSPORT, "%s", emsg ? emsg : "cannot prepare request");
        free(emsg);
        goto done;
    }
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, ebuf);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, c->opts.request_timeout_ms);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &x);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, &x);
    curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(h, CURLOPT_XFERINFODATA, &x);
    curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
    if (!strcmp(method, "HEAD"))
        curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
    if (body) {
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body_len);
    }
    CURLcode rc = curl_easy_perform(h);
    long code = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
    if (rc != CURLE_OK) {
        *unsent = transport_error(c, rc, ebuf, url, &x, err);
    } else if (code < 200 || code > 299) {
        kube_status_decode(x.buf, x.len, (int)code, err);
        if (err->retry_after_s < 0)
            err->retry_after_s = x.retry_after;
    } else {
        kube_error_clear(err);
        err->http_code = (int)code;
        out = x.buf ? x.buf : strdup("");
        x.buf = NULL;
        if (len)
            *len = out ? x.len : 0;
        if (!out)
            kube_error_set(err, (int)code, KUBE_TRANSPORT, "out of memory");
    }
done:
    free(x.buf);
    curl_slist_free_all(headers);
    kube_client_put_handle(c, h);
    return out;
}

/* ---- retries ---- */

char *kube_request_raw_cancel(struct kube_client *c, const char *method, const char *path, const char *query,
                              const char *body, size_t body_len, const char *content_type, int idempotent,
                              struct kube_cancel *extra, size_t *len, struct kube_error *err)
{
    char *url = kube_http_url(c->cfg, path, query);
    if (!url) {
        kube_error_set(err, 0, KUBE_TRANSPORT, "cannot build a URL from server %s and path %s", c->cfg->server, path);
        return NULL;
    }
    int64_t start = kube_now_ms();
    char *out = NULL;
    for (int attempt = 1;; attempt++) {
        int unsent = 0;
        out = exchange(c, method, url, body, body_len, content_type, extra, len, err, &unsent);
        if (out || err->reason == KUBE_CANCELLED || unsent < 0)
            break;
        int64_t delay = 0;
        pthread_mutex_lock(&c->mu);
        int again = kube_retry_next(&c->opts.retry, err, idempotent || unsent > 0, attempt, kube_now_ms() - start,
                                    &c->seed, &delay);
        pthread_mutex_unlock(&c->mu);
        if (!again)
            break;
        kube_log(attempt >= 2 ? KUBE_LOG_WARN : KUBE_LOG_DEBUG, "%s %s: %s; retry %d in %lld ms", method, path,
                 err->message ? err->message : kube_reason_name(err->reason), attempt, (long long)delay);
        if (kube_cancel_sleep_any_ms(extra, c->cancel, delay)) {
            kube_error_set(err, 0, KUBE_CANCELLED, "%s %s cancelled", method, path);
            break;
        }
    }
    free(url);
    return out;
}

char *kube_request_raw(struct kube_client *c, const char *method, const char *path, const char *query,
                       const char *body, size_t body_len, const char *content_type, int idempotent, size_t *len,
                       struct kube_error *err)
{
    return kube_request_raw_cancel(c, method, path, query, body, body_len, content_type, idempotent, NULL, len,
                                   err);
}
