/* clock.h - the monotonic and the wall clock in milliseconds, and sleeping (lib/clock.c). */
#ifndef KUBE_CLOCK_H
#define KUBE_CLOCK_H

#include <stdint.h>

/* Monotonic clock in milliseconds (for timeouts and backoff). */
int64_t kube_now_ms(void);
/* Wall clock in milliseconds since the epoch. */
int64_t kube_realtime_ms(void);
/* Sleeps for ms milliseconds (restarting on EINTR). */
void kube_sleep_ms(int64_t ms);

#endif
