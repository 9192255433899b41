/* watch_resume.c - kube_watch: a watch that survives disconnects and API server
 * restarts by reconnecting from the last resourceVersion it saw. */
#include <stdlib.h>
#include <string.h>

#include "client_int.h"
#include "kube/json.h"
#include "kube/log.h"
#include "kube/util.h"
#include "kube/watch.h"

struct resume {
    kube_watch_cb cb;
    void *ud;
    char *rv;
    int progressed;
};

static int track(const struct kube_watch_event *ev, void *ud)
{
    struct resume *s = ud;
    const char *rv = kube_obj_resource_version(ev->object);
    if (rv && *rv) {
        char *copy = strdup(rv);
        if (copy) {
            free(s->rv);
            s->rv = copy;
        }
    }
    s->progressed = 1;
    return s->cb ? s->cb(ev, s->ud) : 0;
}

/* Errors after which reconnecting from the same resourceVersion can succeed. */
static int watch_retryable(const struct kube_error *e)
{
    if (e->permanent)
        return 0;
    switch (e->reason) {
    case KUBE_TRANSPORT:
    case KUBE_TIMEOUT:
    case KUBE_PROTOCOL:
    case KUBE_INTERNAL:
    case KUBE_SERVICE_UNAVAILABLE:
    case KUBE_TOO_MANY_REQUESTS: return 1;
    case KUBE_UNKNOWN: return e->http_code >= 500 || e->http_code == 0;
    default: return 0;
    }
}

int kube_watch(struct kube_client *c, const struct kube_resource *r, const char *ns, const struct kube_list_opts *opts,
               kube_watch_cb cb, void *ud, struct kube_cancel *cancel, char **last_rv, struct kube_error *err)
{
    const struct kube_retry_policy *pol = &kube_client_opts(c)->retry;
    struct resume s = { cb, ud, NULL, 0 };
    struct kube_list_opts o = opts ? *opts : (struct kube_list_opts){ 0 };
    if (o.resource_version && *o.resource_version)
        s.rv = strdup(o.resource_version);
    unsigned seed = (unsigned)kube_realtime_ms();
    int failures = 0, ret;
    int64_t fail_since = 0;
    for (;;) {
        o.resource_version = s.rv;
        s.progressed = 0;
        int64_t t0 = kube_now_ms();
        ret = kube_watch_stream(c, r, ns, &o, track, &s, cancel, err);
        if (ret == 1)
            break;
        if (s.progressed || ret == 0)
            failures = 0;
        if (ret == 0) {
            KLOG_DEBUG("watch %s: server ended the stream; resuming from %s", r->resource, s.rv ? s.rv : "now");
            /* a server that ends empty streams at once must not make us spin */
            if (!s.progressed && kube_now_ms() - t0 < 1000 &&
                kube_cancel_sleep_any_ms(cancel, Kube_client_cancel(c), 1000)) {
                kube_error_set(err, 0, KUBE_CANCELLED, "watch %s cancelled", r->resource);
                ret = -1;
                break;
            }
            continue;
        }
        if (!watch_retryable(err))
            break;
        if (failures++ == 0)
            fail_since = kube_now_ms();
        int64_t delay = err->retry_after_s >= 0 ? err->retry_after_s * 1000 : kube_backoff_delay_ms(pol, failures, &seed);
        if (kube_now_ms() - fail_since + delay > pol->budget_ms) {
            kube_log(KUBE_LOG_WARN, "watch %s: giving up after %d failures: %s", r->resource, failures, err->message);
            break;
        }
        kube_log(failures > 1 ? KUBE_LOG_WARN : KUBE_LOG_DEBUG, "watch %s: %s; reconnecting in %lld ms from %s", r->resource,
                 err->message ? err->message : kube_reason_name(err->reason), (long long)delay, s.rv ? s.rv : "now");
        if (kube_cancel_sleep_any_ms(cancel, Kube_client_cancel(c), delay)) {
            kube_error_set(err, 0, KUBE_CANCELLED, "watch %s cancelled", r->resource);
            break;
        }
    }
    if (last_rv)
        *last_rv = s.rv;
    else
        free(s.rv);
    return ret == 1 ? 1 : -1;
}
