/* client.c - the client object, its pool of idle keep-alive connections, one HTTP
 * request over them (http1.c) and the retries around it (kube_request_raw); JSON verbs
 * are in verbs.c, watches in watch.c. */
#include "kube/client.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client_int.h"
#include "kube/http.h"
#include "tls_conn.h"
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
    struct kube_conn *pool[POOL_MAX]; /* idle keep-alive connections */
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
        kube_conn_close(c->pool[i]);
    pthread_mutex_destroy(&c->mu);
    kube_config_free(c->cfg);
    free(c->user_agent);
    free(c);
}

/* ---- the connection pool ---- */

/* An idle pooled connection the server has not closed, or NULL. */
static struct kube_conn *take_conn(struct kube_client *c)
{
    for (;;) {
        struct kube_conn *k = NULL;
        pthread_mutex_lock(&c->mu);
        if (c->npool > 0)
            k = c->pool[--c->npool];
        pthread_mutex_unlock(&c->mu);
        if (!k || http1_conn_idle_ok(k))
            return k;
        kube_conn_close(k); /* the server closed it while idle (keep-alive timeout, restart) */
    }
}

static void put_conn(struct kube_client *c, struct kube_conn *k)
{
    pthread_mutex_lock(&c->mu);
    if (c->npool < POOL_MAX) {
        c->pool[c->npool++] = k;
        k = NULL;
    }
    pthread_mutex_unlock(&c->mu);
    kube_conn_close(k);
}

/* ---- one exchange ---- */

/* Fills err for a failed exchange; returns *unsent as kube_client_call documents. */
static int call_error(int outcome, const char *msg, const char *url, long timeout_ms, struct kube_error *err)
{
    const char *m = msg ? msg : "?";
    switch (outcome) {
    case HTTP1_CANCELLED:
        kube_error_set(err, 0, KUBE_CANCELLED, "request to %s cancelled", url);
        return 0;
    case HTTP1_TIMEOUT:
        kube_error_set(err, 0, KUBE_TIMEOUT, "request to %s timed out after %ld ms (%s)", url, timeout_ms, m);
        return 0;
    case HTTP1_MALFORMED:
        kube_error_set(err, 0, KUBE_PROTOCOL, "malformed reply from %s: %s", url, m);
        return 0;
    default:
        /* not permanent even after a TLS alert: OpenSSL 3 reports a peer's plain close
         * (API server restart) as a TLS protocol error too */
        kube_error_set(err, 0, KUBE_TRANSPORT, "connection to %s broken: %s", url, m);
        return 0;
    }
}

/* A new connection, or NULL with err (open failures: unsent or permanent). */
static struct kube_conn *open_conn(struct kube_client *c, int64_t deadline, struct kube_error *err, int *unsent)
{
    int64_t cd = kube_now_ms() + c->opts.connect_timeout_ms;
    char *msg = NULL;
    int retryable = 0;
    struct kube_conn *k = kube_conn_open(c->cfg, deadline && deadline < cd ? deadline : cd, &msg, &retryable);
    if (!k) {
        kube_error_set(err, 0, KUBE_TRANSPORT, "%s", msg ? msg : "cannot connect to the API server");
        err->permanent = !retryable;
        *unsent = retryable ? 1 : -1; /* refused, unresolvable or timed out: nothing was sent */
        free(msg);
    }
    return k;
}

int kube_client_call(struct kube_client *c, const char *method, const char *path, const char *query,
                     const char *content_type, struct http1_call *call, struct kube_cancel *extra,
                     long timeout_ms, struct kube_error *err, int *unsent)
{
    char *emsg = NULL, *url = kube_http_url(c->cfg, path, query);
    char *target = query && *query ? kube_strdup_printf("%s?%s", path, query) : strdup(path);
    char *head = target ? http1_request_head(c->cfg, method, target, c->user_agent, content_type,
                                             call->body != NULL, call->body_len, &emsg)
                        : NULL;
    int rc = -1;
    *unsent = 0;
    http1_parser_init(&call->p, 0);
    if (!url || !head) { /* e.g. the token file unreadable: retryable (kubelet swaps it) */
        kube_error_set(err, 0, KUBE_TRANSPORT, "%s", emsg ? emsg : "out of memory");
        goto out;
    }
    call->head = head;
    call->head_len = strlen(head);
    call->head_only = !strcmp(method, "HEAD");
    call->deadline = timeout_ms > 0 ? kube_now_ms() + timeout_ms : 0;
    call->c1 = c->cancel;
    call->c2 = extra;
    for (int fresh = 0;; fresh = 1) {
        if (kube_cancel_requested(c->cancel) || kube_cancel_requested(extra)) {
            kube_error_set(err, 0, KUBE_CANCELLED, "request to %s cancelled", url);
            break;
        }
        struct kube_conn *k = fresh ? NULL : take_conn(c);
        int reused = k != NULL;
        if (!k && !(k = open_conn(c, call->deadline, err, unsent)))
            break;
        http1_parser_free(&call->p);
        free(emsg);
        emsg = NULL;
        int o = http1_exchange(k, call, &emsg);
        if (o == HTTP1_BROKEN && reused && !call->got_bytes) {
            kube_log(KUBE_LOG_DEBUG, "%s %s: kept-alive connection failed (%s); once more on a new one", method,
                     path, emsg ? emsg : "?");
            kube_conn_close(k);
            continue;
        }
        if (o == HTTP1_OK || o == HTTP1_STOPPED) {
            rc = o == HTTP1_OK ? 0 : 1;
            if (o == HTTP1_OK && http1_parser_reusable(&call->p)) {
                put_conn(c, k);
                k = NULL;
            }
        } else {
            *unsent = call_error(o, emsg, url, timeout_ms, err);
        }
        kube_conn_close(k);
        break;
    }
out:
    free(emsg);
    http1_head_free(head);
    call->head = NULL;
    free(target);
    free(url);
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

/* One request. Returns the 2xx body or NULL with err; *unsent as kube_client_call sets it. */
static char *exchange(struct kube_client *c, const char *method, const char *path, const char *query,
                      const char *body, size_t body_len, const char *content_type, struct kube_cancel *extra,
                      size_t *len, struct kube_error *err, int *unsent)
{
    struct sink s = {0};
    struct http1_call call = {.body = body, .body_len = body ? body_len : 0, .on_body = on_body, .ud = &s};
    char *out = NULL;
    int r = kube_client_call(c, method, path, query, body ? content_type : NULL, &call, extra,
                             c->opts.request_timeout_ms, err, unsent);
    int code = call.p.code;
    if (r == 1) {
        char *url = kube_http_url(c->cfg, path, query);
        if (s.overflow == 1)
            kube_error_set(err, code, KUBE_PROTOCOL, "reply from %s larger than %u bytes", url ? url : path,
                           MAX_BODY);
        else
            kube_error_set(err, code, KUBE_TRANSPORT, "out of memory reading the reply from %s", url ? url : path);
        free(url);
    } else if (r == 0 && (code < 200 || code > 299)) {
        kube_status_decode(s.buf, s.len, code, err);
        if (err->retry_after_s < 0)
            err->retry_after_s = call.p.retry_after;
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
    http1_parser_free(&call.p);
    return out;
}

/* ---- retries ---- */

char *kube_request_raw_cancel(struct kube_client *c, const char *method, const char *path, const char *query,
                              const char *body, size_t body_len, const char *content_type, int idempotent,
                              struct kube_cancel *extra, size_t *len, struct kube_error *err)
{
    int64_t start = kube_now_ms();
    char *out = NULL;
    for (int attempt = 1;; attempt++) {
        int unsent = 0;
        out = exchange(c, method, path, query, body, body_len, content_type, extra, len, err, &unsent);
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
    return out;
}

char *kube_request_raw(struct kube_client *c, const char *method, const char *path, const char *query,
                       const char *body, size_t body_len, const char *content_type, int idempotent, size_t *len,
                       struct kube_error *err)
{
    return kube_request_raw_cancel(c, method, path, query, body, body_len, content_type, idempotent, NULL, len,
                                   err);
}
