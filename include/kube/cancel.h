/* cancel.h - a cancellation token shared between threads: one thread triggers,
 * others notice it in their waits (watch streams, retry sleeps, informers). */
#ifndef KUBE_CANCEL_H
#define KUBE_CANCEL_H

#include <stdint.h>

struct kube_cancel;

/* Creates an untriggered token (NULL on allocation failure). */
struct kube_cancel *kube_cancel_new(void);
/* Triggers it (idempotent, thread-safe, async-signal-safe) and wakes every waiter. */
void kube_cancel_trigger(struct kube_cancel *c);
/* Returns 1 once triggered (c NULL -> 0). */
int kube_cancel_requested(const struct kube_cancel *c);
/* Sleeps up to ms, returning early with 1 if c is (or becomes) triggered; 0 after the full sleep. */
int kube_cancel_sleep_ms(struct kube_cancel *c, int64_t ms);
/* Like kube_cancel_sleep_ms, waking when either a or b (each may be NULL) triggers. */
int kube_cancel_sleep_any_ms(struct kube_cancel *a, struct kube_cancel *b, int64_t ms);
/* A file descriptor that becomes readable once triggered (for poll loops); -1 if c is NULL. */
int kube_cancel_fd(const struct kube_cancel *c);
/* Frees c (NULL is fine); nobody may wait on it any more. */
void kube_cancel_free(struct kube_cancel *c);

#endif
