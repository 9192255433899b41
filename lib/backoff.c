/* backoff.c - retry decisions and exponential backoff with jitter (pure). */
#include "kube/backoff.h"

#include <ctype.h>
#include <stdlib.h>

void kube_retry_policy_default(struct kube_retry_policy *p)
{
    p->max_attempts = 5;
    p->base_ms = 200;
    p->max_ms = 5000;
    p->budget_ms = 30000;
}

int64_t kube_backoff_delay_ms(const struct kube_retry_policy *p, int attempt, unsigned *seed)
{
    if (attempt < 1)
        attempt = 1;
    int64_t d = p->base_ms > 0 ? p->base_ms : 1;
    for (int i = 1; i < attempt && d < p->max_ms; i++)
        d *= 2;
    if (d > p->max_ms)
        d = p->max_ms;
    if (seed) {
        /* jitter in [50%, 100%] so that many clients do not retry in lockstep */
        int64_t half = d / 2;
        d = half + (half > 0 ? (int64_t)(rand_r(seed) % (half + 1)) : 0);
    }
    return d;
}

int kube_retry_retryable(const struct kube_error *e, int idempotent)
{
    if (e->permanent)
        return 0;
    switch (e->reason) {
    case KUBE_TOO_MANY_REQUESTS: return 1;
    case KUBE_SERVICE_UNAVAILABLE: return 1;
    case KUBE_INTERNAL:
    case KUBE_TIMEOUT:
    case KUBE_TRANSPORT: return idempotent;
    case KUBE_UNKNOWN: return idempotent && e->http_code >= 500;
    default:
        /* 5xx with a Retry-After is the server asking to come back */
        return e->http_code >= 500 && e->retry_after_s >= 0;
    }
}

int kube_retry_next(const struct kube_retry_policy *p, const struct kube_error *e, int idempotent, int attempt,
                    int64_t elapsed_ms, unsigned *seed, int64_t *delay_ms)
{
    if (attempt >= p->max_attempts || !kube_retry_retryable(e, idempotent))
        return 0;
    int64_t d = kube_backoff_delay_ms(p, attempt, seed);
    if (e->retry_after_s >= 0) {
        d = (int64_t)e->retry_after_s * 1000;
        if (d == 0)
            d = kube_backoff_delay_ms(p, 1, seed) / 4 + 1;
    }
    if (elapsed_ms + d > p->budget_ms)
        return 0;
    *delay_ms = d;
    return 1;
}

long kube_parse_retry_after(const char *value)
{
    if (!value)
        return -1;
    while (*value == ' ' || *value == '\t')
        value++;
    if (!isdigit((unsigned char)*value))
        return -1;
    long v = 0;
    while (isdigit((unsigned char)*value)) {
        v = v * 10 + (*value - '0');
        if (v > 86400)
            return 86400;
        value++;
    }
    while (*value == ' ' || *value == '\t' || *value == '\r' || *value == '\n')
        value++;
    return *value ? -1 : v;
}
