/* watch.c - one streaming watch request (curl multi, so a cancel token wakes it
 * at once) and the resuming watch loop (reconnect from the last resourceVersion). */
#include <stdlib.h>
#include <string.h>

#include "client_int.h"
#include "kube/http.h"
#include "kube/json.h"
#include "kube/log.h"
#include "kube/util.h"
#include "kube/watch.h"

#define MAX_ERROR_BODY (64u << 10)

struct wctx {
    CURL *h;
    struct kube_watch_parser *p;
    kube_watch_cb cb;
    void *ud;
    long code;           /* HTTP status once known */
    char *ebody;         /* body of a non-2xx reply */
    size_t elen;
    int stopped;         /* cb asked to stop */
    int failed;          /* ERROR event or malformed stream: err is set */
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

static size_t on_data(char *data, size_t sz, size_t n, void *ud)
{
    struct wctx *w = ud;
    size_t len = sz * n;
    if (!w->code)
        curl_easy_getinfo(w->h, CURLINFO_RESPONSE_CODE, &w->code);
    if (w->code < 200 || w->code > 299) {
        size_t take = w->elen + len > MAX_ERROR_BODY ? MAX_ERROR_BODY - w->elen : len;
        char *nb = realloc(w->ebody, w->elen + take + 1);
        if (!nb)
            return 0;
        w->ebody = nb;
        memcpy(w->ebody + w->elen, data, take);
        w->elen += take;
        return len;
    }
    char *perr = NULL;
    int r = kube_watch_parser_feed(w->p, data, len, on_event, w, &perr);
    if (r < 0) {
        kube_error_set(w->err, (int)w->code, KUBE_PROTOCOL, "watch stream: %s", perr ? perr : "malformed");
        w->failed = 1;
    }
    free(perr);
    return r == 0 ? len : 0;
}

/* Drives the transfer until it ends or a cancel token triggers. Returns the curl result. */
static CURLcode drive(CURLM *m, struct kube_cancel *a, struct kube_cancel *b, int *cancelled)
{
    struct curl_waitfd wfd[2];
    unsigned n = 0;
    if (a)
        wfd[n++] = (struct curl_waitfd){kube_cancel_fd(a), CURL_WAIT_POLLIN, 0};
    if (b)
        wfd[n++] = (struct curl_waitfd){kube_cancel_fd(b), CURL_WAIT_POLLIN, 0};
    *cancelled = 0;
    for (;;) {
        int running = 0;
        CURLMcode mc = curl_multi_perform(m, &running);
        if (mc != CURLM_OK)
            return CURLE_RECV_ERROR;
        if (!running)
            break;
        if (kube_cancel_requested(a) || kube_cancel_requested(b)) {
            *cancelled = 1;
            return CURLE_ABORTED_BY_CALLBACK;
        }
        if (curl_multi_poll(m, n ? wfd : NULL, n, 1000, NULL) != CURLM_OK)
            return CURLE_RECV_ERROR;
    }
    int left;
    CURLMsg *msg;
    while ((msg = curl_multi_info_read(m, &left)))
        if (msg->msg == CURLMSG_DONE)
            return msg->data.result;
    return CURLE_OK;
}

/* Sets up the handle for the watch URL. */
static int setup(struct kube_client *c, CURL *h, const struct kube_resource *r, const char *ns,
                 const struct kube_list_opts *opts, struct wctx *w, char *ebuf, struct curl_slist **headers,
                 char **url)
{
    char *path = kube_resource_path(r, ns, NULL, NULL), *emsg = NULL;
    struct kube_query *q = kube_query_new();
    struct kube_list_opts o = opts ? *opts : (struct kube_list_opts){0};
    o.limit = 0;
    o.continue_token = NULL;
    int rc = -1;
    if (!path || !q || kube_query_add(q, "watch", "1") || kube_query_add_list_opts(q, &o) ||
        !(*url = kube_http_url(kube_client_config(c), path, kube_query_str(q)))) {
        kube_error_set(w->err, 0, KUBE_BAD_REQUEST, "watch: cannot build the request for %s",
                       r && r->resource ? r->resource : "?");
    } else if (kube_client_prepare(c, h, "GET", *url, NULL, headers, &emsg)) {
        kube_error_set(w->err, 0, KUBE_TRANSPORT, "%s", emsg ? emsg : "cannot prepare watch");
    } else {
        curl_easy_setopt(h, CURLOPT_ERRORBUFFER, ebuf);
        curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
        curl_easy_setopt(h, CURLOPT_WRITEDATA, w);
        if (o.timeout_seconds > 0) /* the server ends it; this only bounds a silent, dead peer */
            curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (o.timeout_seconds + 30) * 1000L);
        rc = 0;
    }
    free(emsg);
    free(path);
    kube_query_free(q);
    return rc;
}

/* Fills err from how the transfer ended; returns the kube_watch_stream result. */
static int finish(struct kube_client *c, CURLcode rc, int cancelled, const char *ebuf, const char *url,
                  struct wctx *w)
{
    if (w->stopped)
        return 1;
    if (cancelled) {
        kube_error_set(w->err, 0, KUBE_CANCELLED, "watch %s cancelled", url);
        return -1;
    }
    if (w->failed)
        return -1;
    if (rc != CURLE_OK) {
        char *m = kube_curl_describe_error(rc, ebuf, url, kube_client_config(c));
        kube_error_set(w->err, 0, rc == CURLE_OPERATION_TIMEDOUT ? KUBE_TIMEOUT : KUBE_TRANSPORT, "watch: %s",
                       m ? m : curl_easy_strerror(rc));
        w->err->permanent = kube_curl_error_permanent(rc);
        free(m);
        return -1;
    }
    if (!w->code)
        curl_easy_getinfo(w->h, CURLINFO_RESPONSE_CODE, &w->code);
    if (w->code < 200 || w->code > 299) {
        kube_status_decode(w->ebody, w->elen, (int)w->code, w->err);
        return -1;
    }
    if (kube_watch_parser_pending(w->p)) {
        kube_error_set(w->err, (int)w->code, KUBE_TRANSPORT, "watch %s: stream ended inside an event", url);
        return -1;
    }
    kube_error_clear(w->err);
    return 0;
}

int kube_watch_stream(struct kube_client *c, const struct kube_resource *r, const char *ns,
                      const struct kube_list_opts *opts, kube_watch_cb cb, void *ud, struct kube_cancel *cancel,
                      struct kube_error *err)
{
    struct wctx w = {.cb = cb, .ud = ud, .err = err};
    struct curl_slist *headers = NULL;
    char ebuf[CURL_ERROR_SIZE] = "", *url = NULL;
    CURLM *m = curl_multi_init();
    w.h = curl_easy_init(); /* the multi's connection, not the pool's: watches live long */
    w.p = kube_watch_parser_new(0);
    int ret = -1;
    if (!m || !w.h || !w.p) {
        kube_error_set(err, 0, KUBE_TRANSPORT, "out of memory starting a watch");
    } else if (setup(c, w.h, r, ns, opts, &w, ebuf, &headers, &url) == 0) {
        if (curl_multi_add_handle(m, w.h) != CURLM_OK) {
            kube_error_set(err, 0, KUBE_TRANSPORT, "curl_multi_add_handle failed");
        } else {
            int cancelled = 0;
            CURLcode rc = drive(m, cancel, kube_client_cancel(c), &cancelled);
            ret = finish(c, rc, cancelled, ebuf, url, &w);
            curl_multi_remove_handle(m, w.h);
        }
    }
    if (w.h)
        curl_easy_cleanup(w.h);
    if (m)
        curl_multi_cleanup(m);
    curl_slist_free_all(headers);
    kube_watch_parser_free(w.p);
    free(w.ebody);
    free(url);
    return ret;
}
