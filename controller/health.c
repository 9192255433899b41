/* health.c - loop heartbeats behind /healthz (see health.h). */
#include "health.h"
#include "kube/util.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
    int armed;
    int64_t bound_ms, last_ms;
} loops[H__COUNT];

const char *health_loop_name(enum health_loop l)
{
    static const char *const names[H__COUNT] = { "main", "leader-election", "workers" };
    return (unsigned)l < H__COUNT ? names[l] : "?";
}

void health_arm_at(enum health_loop l, int64_t bound_ms, int64_t now_ms)
{
    if ((unsigned)l >= H__COUNT)
        return;
    pthread_mutex_lock(&mu);
    loops[l].armed = 1;
    loops[l].bound_ms = bound_ms;
    loops[l].last_ms = now_ms;
    pthread_mutex_unlock(&mu);
}

void health_arm(enum health_loop l, int64_t bound_ms) { health_arm_at(l, bound_ms, kube_now_ms()); }

void health_disarm(enum health_loop l)
{
    if ((unsigned)l >= H__COUNT)
        return;
    pthread_mutex_lock(&mu);
    loops[l].armed = 0;
    pthread_mutex_unlock(&mu);
}

void health_beat_at(enum health_loop l, int64_t now_ms)
{
    if ((unsigned)l >= H__COUNT)
        return;
    pthread_mutex_lock(&mu);
    if (now_ms > loops[l].last_ms)
        loops[l].last_ms = now_ms;
    pthread_mutex_unlock(&mu);
}

void health_beat(enum health_loop l) { health_beat_at(l, kube_now_ms()); }

int health_alive_at(int64_t now_ms, char **why)
{
    int stalled = -1;
    int64_t age = 0, bound = 0;
    pthread_mutex_lock(&mu);
    for (int i = 0; i < H__COUNT && stalled < 0; i++) {
        if (loops[i].armed && now_ms - loops[i].last_ms > loops[i].bound_ms) {
            stalled = i;
            age = now_ms - loops[i].last_ms;
            bound = loops[i].bound_ms;
        }
    }
    pthread_mutex_unlock(&mu);
    if (stalled < 0)
        return 1;
    kube_set_err(why, "%s loop stalled for %lld s (bound %lld s)", health_loop_name((enum health_loop)stalled),
                 (long long)(age / 1000), (long long)(bound / 1000));
    return 0; /* an answer, not a failure: docs/library.md "## Errors", the predicate with a reason */
}

int health_alive(char **why) { return health_alive_at(kube_now_ms(), why); }
