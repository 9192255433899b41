/* watch.c - one streaming watch request (the client's libcurl exchange with a body
 * callback feeding the event parser; a cancel token's eventfd wakes its poll at once).
 * The resuming loop is in watch_resume.c. */
#include <stdlib.h>
#include <string.h>

#include "client_int.h"
#include "curl_setup.h"
#include "kube/json.h"
#include "kube/log.h"
#include "kube/util.h"
#include "kube/watch.h"

#define MAX_ERROR_BODY (64u << 10)

struct wctx {
    const struct kube_call *call; /* it has the status code once the body flows */
    struct kube_watch_parser *p;
    kube_watch_cb cb;
    void *ud;
    char *ebody; /* body of a non-2xx reply */
    size_t elen;
    int stopped; /* cb asked to stop */
    int failed;  /* ERROR event or malformed stream: err is set */
    struct kube_error *err;
};

static int on_event(const struct kube_watch_event *ev, void *ud)
{
    struct wctx *w = ud;
    if (ev->type == KUBE_EVENT_ERROR) {
        kube_status_decode_json(ev->object, 0, w->err);
        w->failed = 1;
        return 1;
    }
    if (w->cb && w->cb(ev, w->ud)) {
        w->stopped = 1;
        return 1;
    }
    return 0;
}

static int on_data(const char *data, size_t len, void *ud)
{
    struct wctx *w = ud;
    int code = (int)w->call->code;
    if (code < 200 || code > 299) {
        size_t take = w->elen + len > MAX_ERROR_BODY ? MAX_ERROR_BODY - w->elen : len;
        char *nb = realloc(w->ebody, w->elen + take + 1);
        if (!nb)
            return 1;
        w->ebody = nb;
        memcpy(w->ebody + w->elen, data, take);
        w->elen += take;
        return 0;
    }
    char *perr = NULL;
    int r = kube_watch_parser_feed(w->p, data, len, on_event, w, &perr);
    if (r < 0) {
        kube_error_set(w->err, code, KUBE_PROTOCOL, "watch stream: %s", perr ? perr : "malformed");
        w->failed = 1;
    }
    free(perr);
    return r != 0;
}

/* Builds path and query of the watch request. 0 ok, -1 with err. */
static int watch_target(const struct kube_resource *r, const char *ns, const struct kube_list_opts *opts, char **path,
                        struct kube_query **q, struct kube_error *err)
{
    struct kube_list_opts o = opts ? *opts : (struct kube_list_opts){ 0 };
    o.limit = 0;
    o.continue_token = NULL;
    *path = kube_resource_path(r, ns, NULL, NULL);
    *q = kube_query_new();
    if (!*path || !*q || kube_query_add(*q, "watch", "1") || kube_query_add_list_opts(*q, &o)) {
        kube_error_set(err, 0, KUBE_BAD_REQUEST, "watch: cannot build the request for %s",
                       r && r->resource ? r->resource : "?");
        return -1;
    }
    return 0;
}

/* Fills err from how the request ended; returns the kube_watch_stream result. */
static int finish(int rc, const char *url, struct wctx *w)
{
    if (w->stopped)
        return 1;
    if (w->failed)
        return -1;
    if (rc != 0 && w->err->reason == KUBE_CANCELLED) {
        kube_error_set(w->err, 0, KUBE_CANCELLED, "watch %s cancelled", url);
        return -1;
    }
    if (rc != 0) {
        char *m = kube_strdup_printf("watch: %s", w->err->message ? w->err->message : "request failed");
        if (m) {
            free(w->err->message);
            w->err->message = m;
        }
        return -1;
    }
    int code = (int)w->call->code;
    if (code < 200 || code > 299) {
        kube_status_decode(w->ebody, w->elen, code, w->err);
        return -1;
    }
    if (kube_watch_parser_pending(w->p)) {
        kube_error_set(w->err, code, KUBE_TRANSPORT, "watch %s: stream ended inside an event", url);
        return -1;
    }
    kube_error_clear(w->err);
    w->err->http_code = code;
    return 0;
}

int kube_watch_stream(struct kube_client *c, const struct kube_resource *r, const char *ns,
                      const struct kube_list_opts *opts, kube_watch_cb cb, void *ud, struct kube_cancel *cancel,
                      struct kube_error *err)
{
    struct kube_call call = { 0 };
    struct wctx w = { .call = &call, .cb = cb, .ud = ud, .err = err };
    struct kube_query *q = NULL;
    char *path = NULL, *url = NULL;
    int ret = -1;
    call.on_body = on_data;
    call.ud = &w;
    if (!(w.p = kube_watch_parser_new(0))) {
        kube_error_set(err, 0, KUBE_TRANSPORT, "out of memory starting a watch");
    } else if (watch_target(r, ns, opts, &path, &q, err) == 0) {
        url = Kube_http_url(kube_client_config(c), path, kube_query_str(q));
        /* the server ends a watch with timeoutSeconds; this only bounds a silent, dead peer */
        long tmo = opts && opts->timeout_seconds > 0 ? (opts->timeout_seconds + 30) * 1000L : 0;
        int unsent = 0;
        int rc = Kube_client_call(c, "GET", path, kube_query_str(q), NULL, &call, cancel, tmo, err, &unsent);
        ret = finish(rc, url ? url : path, &w);
    }
    kube_watch_parser_free(w.p);
    kube_query_free(q);
    free(w.ebody);
    free(path);
    free(url);
    return ret;
}
