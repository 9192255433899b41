/* client.c - the client object, its pool of libcurl handles (each with its multi handle,
 * which keeps its keep-alive connection), one HTTP exchange over them (Kube_client_call:
 * cancellable at once through the cancel tokens' eventfds) and the retries and client-side
 * rate limit around it (kube_request_raw); JSON verbs are in verbs.c, watches in watch.c. */
#include "kube/client.h"

#include <pthread.h>
#include <stdio.h>
#include <strings.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <curl/curl.h>

#include "client_int.h"
#include "curl_setup.h"
#include "kube/log.h"
#include "kube/util.h"

#define POOL_MAX 8
#define MAX_BODY (64u << 20) /* one reply; lists are paged, objects are <= 1.5 MiB in etcd */

/* A pooled handle: the easy handle and the multi handle that holds its connection. */
struct handle {
    CURLM *m;
    CURL *h;
};

struct kube_client {
    struct kube_config *cfg;
    struct kube_client_opts opts;
    char *user_agent;
    struct kube_cancel *cancel;
    pthread_mutex_t mu;
    struct handle pool[POOL_MAX]; /* idle handles, their connections kept alive */
    size_t npool;
    unsigned seed;
    double tokens;                                               /* the rate limit's bucket (opts.qps > 0) */
    int64_t tokens_at;                                           /* when it was last filled (monotonic ms) */
    void (*on_request)(void *ud, const char *method, long code); /* kube_client_on_request */
    void *on_request_ud;
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
    if (Kube_curl_global_init()) {
        kube_set_err(errmsg, "libcurl: global initialisation failed");
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
    const char *bad = cfg->ca_file && access(cfg->ca_file, R_OK)       ? cfg->ca_file
                      : cfg->cert_file && access(cfg->cert_file, R_OK) ? cfg->cert_file
                      : cfg->key_file && access(cfg->key_file, R_OK)   ? cfg->key_file
                                                                       : NULL;
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
        if (opts->qps > 0) {
            c->opts.qps = opts->qps;
            c->opts.burst = opts->burst > 0 ? opts->burst : 1;
        }
    }
    c->tokens = c->opts.burst;
    c->tokens_at = kube_now_ms();
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
const char *kube_client_namespace(const struct kube_client *c) { return c->cfg->namespace ? c->cfg->namespace : "default"; }
void kube_client_set_cancel(struct kube_client *c, struct kube_cancel *cancel) { c->cancel = cancel; }
struct kube_cancel *Kube_client_cancel(const struct kube_client *c) { return c->cancel; }
const struct kube_client_opts *kube_client_opts(const struct kube_client *c) { return &c->opts; }

void kube_client_on_request(struct kube_client *c, void (*fn)(void *ud, const char *method, long code), void *ud)
{
    c->on_request = fn;
    c->on_request_ud = ud;
}

void kube_client_free(struct kube_client *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->npool; i++) {
        curl_easy_cleanup(c->pool[i].h);
        curl_multi_cleanup(c->pool[i].m);
    }
    pthread_mutex_destroy(&c->mu);
    kube_config_free(c->cfg);
    free(c->user_agent);
    free(c);
}

/* ---- the handle pool ---- */

static int take_handle(struct kube_client *c, struct handle *out)
{
    int got = 0;
    pthread_mutex_lock(&c->mu);
    if (c->npool > 0) {
        *out = c->pool[--c->npool];
        got = 1;
    }
    pthread_mutex_unlock(&c->mu);
    if (got)
        return 0;
    out->m = curl_multi_init();
    out->h = curl_easy_init();
    if (out->m && out->h)
        return 0;
    curl_easy_cleanup(out->h);
    curl_multi_cleanup(out->m);
    return -1;
}

static void put_handle(struct kube_client *c, struct handle *hd, int keep)
{
    pthread_mutex_lock(&c->mu);
    if (keep && c->npool < POOL_MAX) {
        c->pool[c->npool++] = *hd;
        hd = NULL;
    }
    pthread_mutex_unlock(&c->mu);
    if (hd) {
        curl_easy_cleanup(hd->h);
        curl_multi_cleanup(hd->m);
    }
}

/* ---- the rate limit ---- */

int Kube_client_throttle(struct kube_client *c, struct kube_cancel *extra)
{
    if (c->opts.qps <= 0)
        return 0;
    for (;;) {
        int64_t wait = 0, now = kube_now_ms();
        pthread_mutex_lock(&c->mu);
        c->tokens += (double)(now - c->tokens_at) * c->opts.qps / 1000.0;
        if (c->tokens > c->opts.burst)
            c->tokens = c->opts.burst;
        c->tokens_at = now;
        if (c->tokens >= 1.0)
            c->tokens -= 1.0;
        else
            wait = (int64_t)((1.0 - c->tokens) * 1000.0 / c->opts.qps) + 1;
        pthread_mutex_unlock(&c->mu);
        if (!wait)
            return 0;
        if (kube_cancel_sleep_any_ms(extra, c->cancel, wait))
            return -1;
    }
}

/* ---- one exchange ---- */

static size_t on_write(char *data, size_t sz, size_t n, void *ud)
{
    struct kube_call *call = ud;
    size_t len = sz * n;
    if (call->drop_401 && call->code == 401)
        return len; /* the exec plugin runs again and the request is repeated */
    return call->on_body && call->on_body(data, len, call->ud) ? 0 : len;
}

static size_t on_read(char *buf, size_t sz, size_t n, void *ud)
{
    struct kube_call *call = ud;
    size_t room = sz * n, left = call->body_len - call->sent;
    size_t k = left < room ? left : room;
    memcpy(buf, call->body + call->sent, k);
    call->sent += k;
    return k;
}

/* libcurl asks to rewind the body only to send it again on a new connection: refused, so a
 * request that may have reached the server is never repeated behind the caller's back. */
static int on_seek(void *ud, curl_off_t off, int origin)
{
    struct kube_call *call = ud;
    if (origin == SEEK_SET && off == 0 && call->sent == 0)
        return CURL_SEEKFUNC_OK;
    return CURL_SEEKFUNC_CANTSEEK;
}

static size_t on_header(char *data, size_t sz, size_t n, void *ud)
{
    struct kube_call *call = ud;
    size_t len = sz * n;
    if (len > 5 && !strncmp(data, "HTTP/", 5)) {
        const char *sp = memchr(data, ' ', len);
        long long code = 0; /* "HTTP/1.1 200 OK": three digits after the first space */
        if (!sp || (size_t)(sp - data) + 4 > len || kube_parse_int_n(sp + 1, 3, 100, 599, &code) < 0)
            code = 0;
        call->code = code;
        call->retry_after = -1;
    } else if (len > 12 && !strncasecmp(data, "Retry-After:", 12)) {
        char *v = strndup(data + 12, len - 12);
        if (v)
            call->retry_after = kube_parse_retry_after(v);
        free(v);
    }
    return len;
}

/* Sets everything for one request on hd->h. 0, or -1 with *errmsg. */
static int prepare(struct kube_client *c, CURL *h, const char *method, const char *url, const char *content_type,
                   struct kube_call *call, const struct kube_credential *cred, long timeout_ms, struct kube_curl_lists *l,
                   char *ebuf, char **errmsg)
{
    curl_easy_reset(h); /* keeps the live connection and caches */
    if (Kube_curl_apply_config(h, c->cfg, cred, l, errmsg))
        return -1;
    struct curl_slist *nl = curl_slist_append(l->headers, "Accept: application/json");
    if (nl)
        l->headers = nl;
    if (nl && content_type) {
        char *ct = kube_strdup_printf("Content-Type: %s", content_type);
        nl = ct ? curl_slist_append(l->headers, ct) : NULL;
        free(ct);
        if (nl)
            l->headers = nl;
    }
    if (nl && (nl = curl_slist_append(l->headers, "Expect:")))
        l->headers = nl;
    if (!nl)
        return kube_set_err(errmsg, "out of memory");
    int rc = curl_easy_setopt(h, CURLOPT_URL, url) || curl_easy_setopt(h, CURLOPT_HTTPHEADER, l->headers) ||
             curl_easy_setopt(h, CURLOPT_USERAGENT, c->user_agent) ||
             curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, c->opts.connect_timeout_ms) ||
             curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_ms > 0 ? timeout_ms : 0L) ||
             curl_easy_setopt(h, CURLOPT_ERRORBUFFER, ebuf) || curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_write) ||
             curl_easy_setopt(h, CURLOPT_WRITEDATA, call) || curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header) ||
             curl_easy_setopt(h, CURLOPT_HEADERDATA, call) ||
             (!strcmp(method, "HEAD") && curl_easy_setopt(h, CURLOPT_NOBODY, 1L)) ||
             (strcmp(method, "GET") && strcmp(method, "HEAD") && curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method));
    if (!rc && call->body) /* a body goes through the read callback, so it cannot be silently resent */
        rc = curl_easy_setopt(h, CURLOPT_UPLOAD, 1L) || curl_easy_setopt(h, CURLOPT_READFUNCTION, on_read) ||
             curl_easy_setopt(h, CURLOPT_READDATA, call) || curl_easy_setopt(h, CURLOPT_SEEKFUNCTION, on_seek) ||
             curl_easy_setopt(h, CURLOPT_SEEKDATA, call) ||
             curl_easy_setopt(h, CURLOPT_INFILESIZE_LARGE, (curl_off_t)call->body_len) ||
             curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
    if (rc)
        return kube_set_err(errmsg, "curl: cannot set the request options for %s", url);
    return 0;
}

/* Drives the transfer until it ends or a cancel token triggers. CURLE_ABORTED_BY_CALLBACK
 * when cancelled. */
static CURLcode run(CURLM *m, CURL *h, struct kube_cancel *a, struct kube_cancel *b)
{
    struct curl_waitfd wfd[2];
    unsigned n = 0;
    if (a && kube_cancel_fd(a) >= 0)
        wfd[n++] = (struct curl_waitfd){ kube_cancel_fd(a), CURL_WAIT_POLLIN, 0 };
    if (b && kube_cancel_fd(b) >= 0)
        wfd[n++] = (struct curl_waitfd){ kube_cancel_fd(b), CURL_WAIT_POLLIN, 0 };
    if (curl_multi_add_handle(m, h) != CURLM_OK)
        return CURLE_OUT_OF_MEMORY;
    CURLcode rc = CURLE_OK;
    for (int running = 1; running;) {
        if (kube_cancel_requested(a) || kube_cancel_requested(b)) {
            rc = CURLE_ABORTED_BY_CALLBACK;
            break;
        }
        if (curl_multi_perform(m, &running) != CURLM_OK) {
            rc = CURLE_OUT_OF_MEMORY;
            break;
        }
        if (running && curl_multi_poll(m, n ? wfd : NULL, n, 1000, NULL) != CURLM_OK) {
            rc = CURLE_OUT_OF_MEMORY;
            break;
        }
    }
    int left;
    CURLMsg *msg;
    while (rc == CURLE_OK && (msg = curl_multi_info_read(m, &left)))
        if (msg->msg == CURLMSG_DONE && msg->easy_handle == h)
            rc = msg->data.result;
    curl_multi_remove_handle(m, h);
    return rc;
}

/* Fills err for a failed transfer; returns *unsent as Kube_client_call documents. */
static int transfer_error(struct kube_client *c, CURLcode rc, const char *ebuf, const char *url, struct kube_error *err)
{
    if (rc == CURLE_ABORTED_BY_CALLBACK) {
        kube_error_set(err, 0, KUBE_CANCELLED, "request to %s cancelled", url);
        return 0;
    }
    char *m = Kube_curl_describe_error(rc, ebuf, url, c->cfg);
    kube_error_set(err, 0, rc == CURLE_OPERATION_TIMEDOUT ? KUBE_TIMEOUT : KUBE_TRANSPORT, "%s",
                   m ? m : curl_easy_strerror(rc));
    free(m);
    if (Kube_curl_error_permanent(rc)) {
        err->permanent = 1;
        return -1;
    }
    return Kube_curl_error_unsent(rc);
}

int Kube_client_call(struct kube_client *c, const char *method, const char *path, const char *query,
                     const char *content_type, struct kube_call *call, struct kube_cancel *extra, long timeout_ms,
                     struct kube_error *err, int *unsent)
{
    char *url = Kube_curl_url(c->cfg, path, query), *shown = Kube_http_url(c->cfg, path, query), *emsg = NULL;
    char ebuf[CURL_ERROR_SIZE];
    int rc = -1;
    *unsent = 0;
    if (!url || !shown) {
        kube_error_set(err, 0, KUBE_TRANSPORT, "cannot build a URL from server %s and path %s", c->cfg->server, path);
        goto out;
    }
    for (int attempt = 0; attempt < 2; attempt++) {
        struct kube_credential cred = { 0 };
        struct kube_curl_lists l = { 0 };
        struct handle hd;
        ebuf[0] = '\0';
        call->code = 0;
        call->retry_after = -1;
        call->sent = 0;
        if (kube_config_credential(c->cfg, &cred, &emsg)) { /* token file unreadable: kubelet swaps it */
            kube_error_set(err, 0, c->cfg->exec ? KUBE_UNAUTHORIZED : KUBE_TRANSPORT, "%s", emsg);
            err->permanent = c->cfg->exec != NULL;
            *unsent = c->cfg->exec ? -1 : 1;
            break;
        }
        call->drop_401 = attempt == 0 && c->cfg->exec && !c->cfg->token && !c->cfg->token_file;
        if (take_handle(c, &hd)) {
            kube_credential_free(&cred);
            kube_error_set(err, 0, KUBE_TRANSPORT, "out of memory (curl handle)");
            break;
        }
        CURLcode cr = CURLE_OK;
        if (prepare(c, hd.h, method, url, content_type, call, &cred, timeout_ms, &l, ebuf, &emsg) == 0)
            cr = run(hd.m, hd.h, c->cancel, extra);
        else
            kube_error_set(err, 0, KUBE_TRANSPORT, "%s", emsg ? emsg : "cannot prepare the request");
        int prepared = !emsg;
        if (prepared && c->on_request && cr != CURLE_ABORTED_BY_CALLBACK)
            c->on_request(c->on_request_ud, method, cr == CURLE_OK || cr == CURLE_WRITE_ERROR ? call->code : 0);
        curl_easy_setopt(hd.h, CURLOPT_ERRORBUFFER, (char *)NULL);
        put_handle(c, &hd, cr == CURLE_OK || cr == CURLE_WRITE_ERROR);
        Kube_curl_lists_free(&l);
        int again = prepared && cr == CURLE_OK && call->code == 401 && call->drop_401 &&
                    kube_config_credential_rejected(c->cfg, &cred);
        kube_credential_free(&cred);
        if (!prepared)
            break;
        if (cr == CURLE_WRITE_ERROR) { /* on_body asked to stop */
            rc = 1;
            break;
        }
        if (cr != CURLE_OK) {
            *unsent = transfer_error(c, cr, ebuf, shown, err);
            break;
        }
        if (again) {
            kube_log(KUBE_LOG_DEBUG, "%s %s: 401 with the exec plugin's credential; running it again", method, path);
            continue;
        }
        rc = 0;
        break;
    }
out:
    free(emsg);
    free(url);
    free(shown);
    return rc;
}

struct sink {
    char *buf;
    size_t len, cap;
    int overflow;
};

static int on_body(const char *data, size_t n, void *ud)
{
    struct sink *s = ud;
    if (s->len + n + 1 > s->cap) {
        if (s->len + n + 1 > MAX_BODY) {
            s->overflow = 1;
            return 1;
        }
        size_t ncap = s->cap ? s->cap : 4096;
        while (ncap < s->len + n + 1)
            ncap *= 2;
        char *nb = realloc(s->buf, ncap);
        if (!nb) {
            s->overflow = 2;
            return 1;
        }
        s->buf = nb;
        s->cap = ncap;
    }
    memcpy(s->buf + s->len, data, n);
    s->len += n;
    s->buf[s->len] = '\0';
    return 0;
}

/* One request. Returns the 2xx body or NULL with err; *unsent as Kube_client_call sets it. */
static char *exchange(struct kube_client *c, const char *method, const char *path, const char *query, const char *body,
                      size_t body_len, const char *content_type, struct kube_cancel *extra, size_t *len,
                      struct kube_error *err, int *unsent)
{
    struct sink s = { 0 };
    struct kube_call call = { .body = body, .body_len = body ? body_len : 0, .on_body = on_body, .ud = &s };
    char *out = NULL;
    int r = Kube_client_call(c, method, path, query, body ? content_type : NULL, &call, extra, c->opts.request_timeout_ms,
                             err, unsent);
    int code = (int)call.code;
    if (r == 1) {
        char *url = Kube_http_url(c->cfg, path, query);
        if (s.overflow == 1)
            kube_error_set(err, code, KUBE_PROTOCOL, "reply from %s larger than %u bytes", url ? url : path, MAX_BODY);
        else
            kube_error_set(err, code, KUBE_TRANSPORT, "out of memory reading the reply from %s", url ? url : path);
        free(url);
    } else if (r == 0 && (code < 200 || code > 299)) {
        kube_status_decode(s.buf, s.len, code, err);
        if (err->retry_after_s < 0)
            err->retry_after_s = call.retry_after;
    } else if (r == 0) {
        kube_error_clear(err);
        err->http_code = code;
        out = s.buf ? s.buf : strdup("");
        s.buf = NULL;
        if (len)
            *len = out ? s.len : 0;
        if (!out)
            kube_error_set(err, code, KUBE_TRANSPORT, "out of memory");
    }
    free(s.buf);
    return out;
}

/* ---- retries ---- */

char *Kube_request_raw_cancel(struct kube_client *c, const char *method, const char *path, const char *query,
                              const char *body, size_t body_len, const char *content_type, int idempotent,
                              struct kube_cancel *extra, size_t *len, struct kube_error *err)
{
    int64_t start = kube_now_ms();
    char *out = NULL;
    for (int attempt = 1;; attempt++) {
        int unsent = 0;
        if (Kube_client_throttle(c, extra)) {
            kube_error_set(err, 0, KUBE_CANCELLED, "%s %s cancelled", method, path);
            break;
        }
        out = exchange(c, method, path, query, body, body_len, content_type, extra, len, err, &unsent);
        if (out || err->reason == KUBE_CANCELLED || unsent < 0)
            break;
        int64_t delay = 0;
        pthread_mutex_lock(&c->mu);
        int again =
            kube_retry_next(&c->opts.retry, err, idempotent || unsent > 0, attempt, kube_now_ms() - start, &c->seed, &delay);
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
    return out;
}

char *kube_request_raw(struct kube_client *c, const char *method, const char *path, const char *query, const char *body,
                       size_t body_len, const char *content_type, int idempotent, size_t *len, struct kube_error *err)
{
    return Kube_request_raw_cancel(c, method, path, query, body, body_len, content_type, idempotent, NULL, len, err);
}
