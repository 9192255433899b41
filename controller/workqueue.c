/* workqueue.c - keys, coalescing, delays and per-key backoff (see workqueue.h).
 * Sets are jansson objects used as hash sets; the FIFO is a ring of strings;
 * delayed keys are a small unsorted list scanned when a worker waits. */
#include "workqueue.h"
#include "kube/json.h"
#include "kube/util.h"
#include "kube/timer.h"
#include "kube/util.h"

#include <jansson.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct delayed {
    char *key;
    int64_t due;
};

struct workqueue {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    char **fifo;
    size_t head, len, cap;
    json_t *dirty, *processing, *failures;
    struct delayed *dl;
    size_t ndl, capdl;
    int shutdown;
    double qps, tokens; /* overall retry bucket (qps <= 0: none) */
    int burst;
    int64_t refilled_ms;
};

struct workqueue *workqueue_new(void)
{
    struct workqueue *q = calloc(1, sizeof *q);
    if (!q)
        return NULL;
    q->dirty = json_object();
    q->processing = json_object();
    q->failures = json_object();
    int mu = q->dirty && q->processing && q->failures && pthread_mutex_init(&q->mu, NULL) == 0;
    if (mu && kube_cond_init_monotonic(&q->cv, NULL) == 0)
        return q;
    if (mu)
        pthread_mutex_destroy(&q->mu);
    json_decref(q->dirty);
    json_decref(q->processing);
    json_decref(q->failures);
    free(q);
    return NULL;
}

static int fifo_push(struct workqueue *q, const char *key)
{
    if (q->len == q->cap) {
        size_t cap = q->cap ? q->cap * 2 : 64;
        char **f = malloc(cap * sizeof *f);
        if (!f)
            return -1;
        for (size_t i = 0; i < q->len; i++)
            f[i] = q->fifo[(q->head + i) % q->cap];
        free(q->fifo);
        q->fifo = f;
        q->head = 0;
        q->cap = cap;
    }
    char *k = strdup(key);
    if (!k)
        return -1;
    q->fifo[(q->head + q->len++) % q->cap] = k;
    return 0;
}

static void add_locked(struct workqueue *q, const char *key)
{
    if (q->shutdown || json_object_get(q->dirty, key))
        return;
    json_object_set_new(q->dirty, key, json_true());
    if (json_object_get(q->processing, key))
        return;
    if (fifo_push(q, key) == 0)
        pthread_cond_signal(&q->cv);
}

void workqueue_add(struct workqueue *q, const char *key)
{
    pthread_mutex_lock(&q->mu);
    add_locked(q, key);
    pthread_mutex_unlock(&q->mu);
}

void workqueue_add_after(struct workqueue *q, const char *key, int64_t delay_ms)
{
    if (delay_ms <= 0) {
        workqueue_add(q, key);
        return;
    }
    pthread_mutex_lock(&q->mu);
    int64_t due = kube_now_ms() + delay_ms;
    for (size_t i = 0; i < q->ndl; i++)
        if (strcmp(q->dl[i].key, key) == 0) {
            if (due < q->dl[i].due) {
                q->dl[i].due = due;
                pthread_cond_broadcast(&q->cv); /* a worker may be waiting for the later time */
            }
            goto out;
        }
    if (q->ndl == q->capdl) {
        size_t cap = q->capdl ? q->capdl * 2 : 16;
        struct delayed *d = realloc(q->dl, cap * sizeof *d);
        if (!d)
            goto out;
        q->dl = d;
        q->capdl = cap;
    }
    q->dl[q->ndl].key = strdup(key);
    if (q->dl[q->ndl].key) {
        q->dl[q->ndl].due = due;
        q->ndl++;
    }
    pthread_cond_broadcast(&q->cv);
out:
    pthread_mutex_unlock(&q->mu);
}

int workqueue_retries(struct workqueue *q, const char *key)
{
    pthread_mutex_lock(&q->mu);
    int n = (int)json_integer_value(json_object_get(q->failures, key));
    pthread_mutex_unlock(&q->mu);
    return n;
}

void workqueue_set_bucket(struct workqueue *q, double qps, int burst)
{
    pthread_mutex_lock(&q->mu);
    q->qps = qps;
    q->burst = burst > 0 ? burst : 1;
    q->tokens = q->burst;
    q->refilled_ms = kube_now_ms();
    pthread_mutex_unlock(&q->mu);
}

/* Takes one token from the overall bucket; ms until it is there (0 now). */
static int64_t bucket_delay_locked(struct workqueue *q)
{
    if (q->qps <= 0)
        return 0;
    int64_t now = kube_now_ms();
    q->tokens += (double)(now - q->refilled_ms) * q->qps / 1000.0;
    if (q->tokens > q->burst)
        q->tokens = q->burst;
    q->refilled_ms = now;
    q->tokens -= 1;
    return q->tokens >= 0 ? 0 : (int64_t)(-q->tokens * 1000.0 / q->qps + 0.999);
}

void workqueue_add_rate_limited(struct workqueue *q, const char *key)
{
    pthread_mutex_lock(&q->mu);
    int n = (int)json_integer_value(json_object_get(q->failures, key));
    json_object_set_new(q->failures, key, json_integer(n + 1));
    int64_t bucket = bucket_delay_locked(q);
    pthread_mutex_unlock(&q->mu);
    int64_t d = 5;
    for (int i = 0; i < n && d < 300000; i++)
        d *= 2;
    if (d > 300000)
        d = 300000;
    workqueue_add_after(q, key, d > bucket ? d : bucket);
}

void workqueue_forget(struct workqueue *q, const char *key)
{
    pthread_mutex_lock(&q->mu);
    json_object_del(q->failures, key);
    pthread_mutex_unlock(&q->mu);
}

/* Moves due delayed keys to the FIFO; returns ms until the next one (-1 none). */
static int64_t promote_locked(struct workqueue *q)
{
    int64_t now = kube_now_ms(), next = -1;
    for (size_t i = 0; i < q->ndl;) {
        if (q->dl[i].due <= now) {
            add_locked(q, q->dl[i].key);
            free(q->dl[i].key);
            q->dl[i] = q->dl[--q->ndl];
            continue;
        }
        if (next < 0 || q->dl[i].due - now < next)
            next = q->dl[i].due - now;
        i++;
    }
    return next;
}

char *workqueue_get(struct workqueue *q)
{
    pthread_mutex_lock(&q->mu);
    for (;;) {
        int64_t next = promote_locked(q);
        if (q->shutdown) {
            pthread_mutex_unlock(&q->mu);
            return NULL;
        }
        if (q->len > 0)
            break;
        struct timespec due = kube_deadline_after_ms(next);
        kube_cond_wait_until(&q->cv, &q->mu, next < 0 ? NULL : &due);
    }
    char *key = q->fifo[q->head];
    q->head = (q->head + 1) % q->cap;
    q->len--;
    json_object_del(q->dirty, key);
    json_object_set_new(q->processing, key, json_true());
    pthread_mutex_unlock(&q->mu);
    return key;
}

void workqueue_done(struct workqueue *q, const char *key)
{
    pthread_mutex_lock(&q->mu);
    json_object_del(q->processing, key);
    if (json_object_get(q->dirty, key) && !q->shutdown && fifo_push(q, key) == 0)
        pthread_cond_signal(&q->cv);
    pthread_mutex_unlock(&q->mu);
}

size_t workqueue_len(struct workqueue *q)
{
    pthread_mutex_lock(&q->mu);
    size_t n = q->len;
    pthread_mutex_unlock(&q->mu);
    return n;
}

void workqueue_shutdown(struct workqueue *q)
{
    pthread_mutex_lock(&q->mu);
    q->shutdown = 1;
    pthread_cond_broadcast(&q->cv);
    pthread_mutex_unlock(&q->mu);
}

void workqueue_free(struct workqueue *q)
{
    if (!q)
        return;
    for (size_t i = 0; i < q->len; i++)
        free(q->fifo[(q->head + i) % q->cap]);
    free(q->fifo);
    for (size_t i = 0; i < q->ndl; i++)
        free(q->dl[i].key);
    free(q->dl);
    json_decref(q->dirty);
    json_decref(q->processing);
    json_decref(q->failures);
    pthread_mutex_destroy(&q->mu);
    pthread_cond_destroy(&q->cv);
    free(q);
}
