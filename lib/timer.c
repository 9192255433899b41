/* timer.c - monotonic deadlines for condition-variable waits (see kube/timer.h). */
#include "kube/timer.h"

#include <errno.h>
#include <string.h>

#include "kube/util.h"

int kube_cond_init_monotonic(pthread_cond_t *cv, char **errmsg)
{
    pthread_condattr_t ca;
    int rc = pthread_condattr_init(&ca);
    if (rc)
        return kube_set_err(errmsg, "condition variable: %s", strerror(rc));
    rc = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    if (!rc)
        rc = pthread_cond_init(cv, &ca);
    pthread_condattr_destroy(&ca);
    return rc ? kube_set_err(errmsg, "condition variable: %s", strerror(rc)) : 0;
}

struct timespec kube_deadline_after_ms(int64_t ms)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    if (ms < 0)
        ms = 0;
    ts.tv_sec += (time_t)(ms / 1000);
    ts.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    return ts;
}

int kube_cond_wait_until(pthread_cond_t *cv, pthread_mutex_t *mu, const struct timespec *deadline)
{
    if (!deadline) {
        pthread_cond_wait(cv, mu);
        return 0;
    }
    return pthread_cond_timedwait(cv, mu, deadline) == ETIMEDOUT;
}
