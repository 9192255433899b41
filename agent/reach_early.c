/* reach_early.c - background reachability checks started per worker while the
 * wait is still going on (kicked when the pod is Running), bounded to 32 threads
 * at once; the rest run when the wait ends. A pipe cancels them all. */
#include "reach_early.h"

#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>
#include <fcntl.h>
#include <time.h>

#define EARLY_MAX_THREADS 32

struct early_arg {
    struct agent_reach_early *e;
    size_t i;
    volatile int done; /* set by the thread when its check ended */
};

struct agent_reach_early {
    struct agent_session *s;
    struct agent_reach_result *res;
    struct early_arg *args;
    pthread_t *th;
    char *state; /* 0 not started, 1 running (thread), 2 joined */
    size_t running;
    int cancel[2]; /* write end closed = cancelled */
    int64_t deadline;
};

static void *early_main(void *arg)
{
    struct early_arg *a = arg;
    agent_reach_one(a->e->s, a->i, a->e->deadline, a->e->cancel[0], &a->e->res[a->i]);
    __atomic_store_n(&a->done, 1, __ATOMIC_RELEASE);
    return NULL;
}

struct agent_reach_early *agent_reach_early_new(struct agent_session *s, int64_t deadline)
{
    size_t n = s->hosts.n ? s->hosts.n : 1;
    struct agent_reach_early *e = calloc(1, sizeof(*e));
    if (!e)
        return NULL;
    e->s = s;
    e->deadline = deadline;
    e->res = calloc(n, sizeof(*e->res));
    e->args = calloc(n, sizeof(*e->args));
    e->th = calloc(n, sizeof(*e->th));
    e->state = calloc(n, 1);
    if (!e->res || !e->args || !e->th || !e->state || pipe2(e->cancel, O_CLOEXEC) != 0) {
        free(e->res), free(e->args), free(e->th), free(e->state), free(e);
        return NULL;
    }
    return e;
}

/* Starts worker i's thread; 0 ok, -1 could not (left not started). */
static int start(struct agent_reach_early *e, size_t i)
{
    e->args[i] = (struct early_arg){ e, i, 0 };
    if (pthread_create(&e->th[i], NULL, early_main, &e->args[i]) != 0)
        return -1;
    e->state[i] = 1;
    e->running++;
    return 0;
}

/* Joins every running thread. */
static void join_all(struct agent_reach_early *e)
{
    for (size_t i = 0; i < e->s->hosts.n; i++) {
        if (e->state[i] == 1) {
            pthread_join(e->th[i], NULL);
            e->state[i] = 2;
            e->running--;
        }
    }
}

void agent_reach_early_kick(struct agent_reach_early *e, size_t i)
{
    if (e && i < e->s->hosts.n && e->state[i] == 0 && e->running < EARLY_MAX_THREADS)
        start(e, i);
}

static void early_free(struct agent_reach_early *e)
{
    close(e->cancel[0]);
    if (e->cancel[1] >= 0)
        close(e->cancel[1]);
    free(e->args);
    free(e->th);
    free(e->state);
    free(e);
}

/* Joins the threads that have finished; returns how many are still running. */
static size_t join_done(struct agent_reach_early *e)
{
    for (size_t i = 0; i < e->s->hosts.n; i++) {
        if (e->state[i] == 1 && __atomic_load_n(&e->args[i].done, __ATOMIC_ACQUIRE)) {
            pthread_join(e->th[i], NULL);
            e->state[i] = 2;
            e->running--;
        }
    }
    return e->running;
}

/* Waits for the running checks, asking abort_fn between rounds; 1 if it aborted. */
static int wait_running(struct agent_reach_early *e, agent_reach_abort_fn abort_fn, void *ud, char **why)
{
    while (join_done(e) > 0) {
        if (abort_fn && abort_fn(ud, why))
            return 1;
        struct timespec ts = { 0, 20 * 1000000L };
        nanosleep(&ts, NULL);
    }
    return 0;
}

int agent_reach_early_finish(struct agent_reach_early *e, agent_reach_abort_fn abort_fn, void *ud,
                             struct agent_reach_result **out, char **why)
{
    size_t n = e->s->hosts.n;
    for (size_t i = 0; i < n; i++) {
        if (e->state[i] != 0)
            continue;
        while (e->running >= EARLY_MAX_THREADS)
            if (wait_running(e, abort_fn, ud, why))
                goto aborted;
        if (start(e, i) < 0)
            agent_reach_one(e->s, i, e->deadline, e->cancel[0], &e->res[i]), e->state[i] = 2;
    }
    if (wait_running(e, abort_fn, ud, why))
        goto aborted;
    int bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += !e->res[i].ok;
    *out = e->res;
    early_free(e);
    return bad;
aborted:
    agent_reach_early_cancel(e);
    *out = NULL;
    return -2;
}

void agent_reach_early_cancel(struct agent_reach_early *e)
{
    if (!e)
        return;
    if (write(e->cancel[1], "x", 1) < 0) { /* readable: every check stops (EOF below too) */
    }
    close(e->cancel[1]);
    e->cancel[1] = -1;
    join_all(e);
    agent_reach_results_free(e->res, e->s->hosts.n);
    early_free(e);
}
