/* backoff.h - retry policy for API requests and reconnect delays: exponential
 * backoff with jitter, Retry-After, bounded by attempts and total time.
 * Pure functions (no clock, no sleeping) so they can be unit-tested. */
#ifndef KUBE_BACKOFF_H
#define KUBE_BACKOFF_H

#include <stdint.h>
#include "kube/error.h"

struct kube_retry_policy {
    int max_attempts;  /* total tries including the first (default 5) */
    int64_t base_ms;   /* first delay (default 200) */
    int64_t max_ms;    /* cap on one delay (default 5000) */
    int64_t budget_ms; /* cap on the total time spent retrying (default 30000) */
};

/* Fills p with the defaults above. */
void kube_retry_policy_default(struct kube_retry_policy *p);
/* Delay before retry number attempt (1 = first retry): min(max, base*2^(attempt-1)), with
 * jitter in [50%,100%] drawn from *seed (rand_r-style state; NULL = no jitter). */
int64_t kube_backoff_delay_ms(const struct kube_retry_policy *p, int attempt, unsigned *seed);
/* Returns 1 when a request that failed with e may be retried: 429 and 503 always (not processed),
 * other 5xx/timeouts/transport errors only if idempotent; never when e->permanent. */
int kube_retry_retryable(const struct kube_error *e, int idempotent);
/* Decides whether to retry after failed attempt number attempt (1-based), elapsed_ms after the
 * first try; returns 1 and sets *delay_ms (Retry-After wins over backoff, capped by the budget),
 * or 0 to give up. */
int kube_retry_next(const struct kube_retry_policy *p, const struct kube_error *e, int idempotent, int attempt,
                    int64_t elapsed_ms, unsigned *seed, int64_t *delay_ms);
/* Parses a Retry-After header value (delta-seconds only); returns seconds or -1. */
long kube_parse_retry_after(const char *value);

#endif
