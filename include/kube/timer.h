/* timer.h - deadlines for condition-variable waits on CLOCK_MONOTONIC (wall-clock
 * steps do not shorten or stretch them): the one helper the informer, the
 * controller's work queue and other waiters share. */
#ifndef KUBE_TIMER_H
#define KUBE_TIMER_H

#include <pthread.h>
#include <stdint.h>
#include <time.h>

/* Initialises cv to time its waits on CLOCK_MONOTONIC. 0 ok, -1 with *errmsg (NULL: not wanted). */
int kube_cond_init_monotonic(pthread_cond_t *cv, char **errmsg);
/* The CLOCK_MONOTONIC time ms milliseconds from now (ms < 0 counts as 0). */
struct timespec kube_deadline_after_ms(int64_t ms);
/* Waits on cv (initialised by kube_cond_init_monotonic; mu held) until signalled or until
 * deadline (NULL = no deadline). Returns 1 once the deadline passed, 0 otherwise (woken,
 * possibly spuriously: callers re-check their condition). */
int kube_cond_wait_until(pthread_cond_t *cv, pthread_mutex_t *mu, const struct timespec *deadline);

#endif
