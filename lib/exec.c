/* exec.c - kube_exec_run: the upgrade with bounded retries (refused, DNS, timeout,
 * 429, 5xx: exponential backoff with jitter, Retry-After honoured within the
 * budget), the v5 -> v4 fallback when a server refuses the offer, then the
 * session. The command never starts before the upgrade succeeds, so retrying is safe. */
#include "exec_int.h"

#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kube/backoff.h"
#include "kube/log.h"
#include "kube/util.h"

#define OFFER_AUTO "v5.channel.k8s.io, v4.channel.k8s.io"
#define OFFER_V5 "v5.channel.k8s.io"
#define OFFER_V4 "v4.channel.k8s.io"

void kube_exec_opts_default(struct kube_exec_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->fd_in = 0;
    o->fd_out = 1;
    o->fd_err = 2;
    o->proto = KUBE_EXEC_PROTO_AUTO;
}

void kube_exec_result_free(struct kube_exec_result *r)
{
    free(r->message);
    free(r->out);
    free(r->err);
    memset(r, 0, sizeof(*r));
}

/* Sleeps ms unless cancel_fd becomes readable first; returns 1 if cancelled. */
static int sleep_or_cancel(int cancel_fd, int64_t ms)
{
    if (cancel_fd <= 0) {
        kube_sleep_ms(ms);
        return 0;
    }
    int64_t end = kube_now_ms() + ms;
    for (int64_t left = ms; left > 0; left = end - kube_now_ms()) {
        struct pollfd p = { .fd = cancel_fd, .events = POLLIN };
        if (poll(&p, 1, (int)left) > 0)
            return 1;
    }
    return 0;
}

static const char *offer_for(enum kube_exec_proto p)
{
    return p == KUBE_EXEC_PROTO_V5 ? OFFER_V5 : p == KUBE_EXEC_PROTO_V4 ? OFFER_V4 : OFFER_AUTO;
}

/* Tries to upgrade with retries; 0 with c connected, or -1 with r filled (REFUSED/CANCELLED). */
static int connect_retrying(const struct kube_config *cfg, const struct kube_exec_opts *o, struct exec_conn *c,
                            struct kube_exec_result *r)
{
    struct kube_retry_policy pol = { .max_attempts = o->attempts > 0 ? o->attempts : 8,
                                     .base_ms = 100,
                                     .max_ms = 2000,
                                     .budget_ms = o->retry_budget_ms > 0 ? o->retry_budget_ms : 15000 };
    unsigned seed = (unsigned)kube_now_ms() ^ (unsigned)getpid();
    const char *offered = offer_for(o->proto);
    int64_t start = kube_now_ms();
    for (int attempt = 1;; attempt++) {
        struct exec_attempt a = { .err = KUBE_ERROR_INIT };
        if (Kube_exec_connect(cfg, o, offered, c, &a) == 0) {
            kube_error_clear(&a.err);
            r->http_code = 101;
            return 0;
        }
        r->http_code = a.err.http_code;
        if (a.proto_refused && strcmp(offered, OFFER_V4) != 0 && o->proto == KUBE_EXEC_PROTO_AUTO) {
            KLOG_DEBUG("exec: subprotocol offer refused (%s); retrying with v4 only", a.err.message);
            offered = OFFER_V4;
            kube_error_clear(&a.err);
            attempt--;
            continue;
        }
        int64_t delay = 0;
        int again = a.retryable && attempt < pol.max_attempts;
        if (again) {
            delay = kube_backoff_delay_ms(&pol, attempt, &seed);
            /* the parser clamps Retry-After to a day, so this product cannot overflow */
            if (a.err.retry_after_s >= 0)
                delay = (int64_t)a.err.retry_after_s * 1000;
            again = kube_now_ms() - start + delay <= pol.budget_ms;
        }
        if (!again) {
            r->outcome = KUBE_EXEC_REFUSED;
            r->message = a.err.message;
            if (a.retryable && attempt > 1 && r->message) {
                char *m = kube_strdup_printf("%s (gave up after %d attempts)", r->message, attempt);
                if (m) {
                    free(r->message);
                    r->message = m;
                }
            }
            return -1;
        }
        KLOG_DEBUG("exec: attempt %d failed (%s); retrying in %lld ms", attempt, a.err.message, (long long)delay);
        kube_error_clear(&a.err);
        if (sleep_or_cancel(o->cancel_fd, delay)) {
            r->outcome = KUBE_EXEC_CANCELLED;
            return kube_set_err(&r->message, "exec: cancelled while retrying");
        }
    }
}

int kube_exec_run(const struct kube_config *cfg, const struct kube_exec_opts *o, struct kube_exec_result *r)
{
    memset(r, 0, sizeof(*r));
    r->exit_code = 255;
    if (!cfg || !cfg->server || !o->namespace || !*o->namespace || !o->pod || !*o->pod || !o->command) {
        r->outcome = KUBE_EXEC_REFUSED;
        kube_set_err(&r->message, "exec: %s is required",
                     !cfg || !cfg->server              ? "a server"
                     : !o->namespace || !*o->namespace ? "a namespace"
                     : !o->pod || !*o->pod             ? "a pod name"
                                                       : "a command");
        return r->outcome;
    }
    struct exec_conn c;
    if (connect_retrying(cfg, o, &c, r) < 0) {
        r->exit_code = 255;
        if (!r->message)
            kube_set_err(&r->message, "exec: upgrade failed");
        return r->outcome;
    }
    KLOG_DEBUG("exec: upgraded to v%d.channel.k8s.io", c.proto);
    Kube_exec_session(&c, o, r);
    Kube_exec_conn_close(&c);
    return r->outcome;
}
