/* workqueue.h - the controller's work queue of "ns/name" keys: a key is never
 * processed by two workers at once, re-adds while processing are coalesced,
 * delayed adds (deadlines, TTL) and per-key exponential retry backoff
 * (5 ms doubling up to 5 min, as upstream's rate limiter). Thread-safe. */
#ifndef CONTROLLER_WORKQUEUE_H
#define CONTROLLER_WORKQUEUE_H

#include <stddef.h>
#include <stdint.h>

struct workqueue;

/* Creates an empty queue (NULL on allocation failure). */
struct workqueue *workqueue_new(void);
/* Adds key now (no-op if already waiting). */
void workqueue_add(struct workqueue *q, const char *key);
/* Adds key after delay_ms. */
void workqueue_add_after(struct workqueue *q, const char *key, int64_t delay_ms);
/* Adds key after its next backoff delay (5 ms, 10 ms, ... capped at 5 min), or later when
 * the overall bucket (workqueue_set_bucket) has no token yet: the larger of the two, as upstream's
 * MaxOfRateLimiter(per-item exponential, bucket). */
void workqueue_add_rate_limited(struct workqueue *q, const char *key);
/* Sets the overall bucket of rate-limited adds: qps tokens per second, burst at most
 * (--controller-queue-rate-limit, --controller-queue-burst); qps <= 0 = none (the default). */
void workqueue_set_bucket(struct workqueue *q, double qps, int burst);
/* Resets key's backoff after a successful sync. */
void workqueue_forget(struct workqueue *q, const char *key);
/* Number of failed retries recorded for key. */
int workqueue_retries(struct workqueue *q, const char *key);
/* Blocks until a key is ready (returns a new string the caller frees and must workqueue_done) or the
 * queue is shut down (NULL). */
char *workqueue_get(struct workqueue *q);
/* Marks key processed; if it was re-added meanwhile it is queued again. */
void workqueue_done(struct workqueue *q, const char *key);
/* Keys waiting now (not counting delayed ones). */
size_t workqueue_len(struct workqueue *q);
/* Wakes every workqueue_get with NULL; later adds are ignored. */
void workqueue_shutdown(struct workqueue *q);
/* Frees the queue (after every worker returned). */
void workqueue_free(struct workqueue *q);

#endif
