/* events.c - core v1 Events on MPIJobs (created, running, finished, invalid,
 * foreign objects), visible in `kubectl describe mpijob` and `kubectl get events`.
 * Best effort: a failed Event never fails a sync. While the controller runs,
 * Events are posted by one background thread from a bounded queue (as
 * client-go's recorder does), so a sync does not wait for its Events' round
 * trips; otherwise (tools, tests) they are posted at once. */
#include "events.h"
#include "kube/json.h"
#include "kube/util.h"
#include "kube/log.h"
#include "kube/util.h"

#include <pthread.h>
#include <stdlib.h>

/* Most Events waiting to be posted; more are dropped (logged). */
#define EVQ_MAX 4096
/* How long events_async_stop keeps posting what is queued. */
#define EVQ_FLUSH_MS 5000

struct ev_item {
    struct ev_item *next;
    json_t *ev;
};

struct events {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct ev_item *head, *tail;
    size_t n;
    int running, stopping;
    int64_t flush_deadline_ms;
    struct kube_client *c;
    pthread_t th;
};

struct events *events_new(void)
{
    struct events *q = calloc(1, sizeof *q);
    if (!q)
        return NULL;
    if (pthread_mutex_init(&q->mu, NULL) != 0) {
        free(q);
        return NULL;
    }
    if (pthread_cond_init(&q->cv, NULL) != 0) {
        pthread_mutex_destroy(&q->mu);
        free(q);
        return NULL;
    }
    return q;
}

void events_free(struct events *q)
{
    if (!q)
        return;
    events_async_stop(q);
    for (struct ev_item *it = q->head, *next; it; it = next) {
        next = it->next;
        json_decref(it->ev);
        free(it);
    }
    pthread_cond_destroy(&q->cv);
    pthread_mutex_destroy(&q->mu);
    free(q);
}

static void post(struct kube_client *c, json_t *ev)
{
    const char *ns = kube_json_at_str(ev, "metadata", "namespace");
    struct kube_error err = KUBE_ERROR_INIT;
    json_t *r = kube_create(c, &KUBE_RES_EVENTS, ns, ev, &err);
    if (!r)
        KLOG_DEBUG("event %s on %s/%s not recorded: %s", kube_json_at_str(ev, "reason"), ns,
                   kube_json_at_str(ev, "involvedObject", "name"), err.message ? err.message : "error");
    json_decref(r);
    kube_error_clear(&err);
}

static void *poster(void *arg)
{
    struct events *q = arg;
    size_t dropped = 0;
    pthread_mutex_lock(&q->mu);
    for (;;) {
        while (!q->head && !q->stopping)
            pthread_cond_wait(&q->cv, &q->mu);
        struct ev_item *it = q->head;
        if (!it)
            break; /* stopping and drained */
        q->head = it->next;
        if (!q->head)
            q->tail = NULL;
        q->n--;
        int late = q->stopping && kube_now_ms() > q->flush_deadline_ms;
        pthread_mutex_unlock(&q->mu);
        if (late)
            dropped++;
        else
            post(q->c, it->ev);
        json_decref(it->ev);
        free(it);
        pthread_mutex_lock(&q->mu);
    }
    pthread_mutex_unlock(&q->mu);
    if (dropped)
        KLOG_WARN("shutting down: %zu Events not posted within %d ms", dropped, EVQ_FLUSH_MS);
    return NULL;
}

int events_async_start(struct events *q, struct kube_client *c)
{
    pthread_mutex_lock(&q->mu);
    q->c = c;
    q->stopping = 0;
    int rc = q->running ? 0 : pthread_create(&q->th, NULL, poster, q) == 0 ? 0 : -1;
    if (rc == 0)
        q->running = 1;
    pthread_mutex_unlock(&q->mu);
    return rc;
}

void events_async_stop(struct events *q)
{
    pthread_mutex_lock(&q->mu);
    int was = q->running;
    q->stopping = 1;
    q->flush_deadline_ms = kube_now_ms() + EVQ_FLUSH_MS;
    pthread_cond_broadcast(&q->cv);
    pthread_mutex_unlock(&q->mu);
    if (!was)
        return;
    pthread_join(q->th, NULL);
    pthread_mutex_lock(&q->mu);
    q->running = 0;
    q->c = NULL;
    pthread_mutex_unlock(&q->mu);
}

/* Queues ev (stolen) for the poster; 0 queued, -1 when no poster runs (caller posts). */
static int enqueue(struct events *q, json_t *ev)
{
    if (!q)
        return -1;
    struct ev_item *it = calloc(1, sizeof *it);
    pthread_mutex_lock(&q->mu);
    if (!q->running || q->stopping) {
        pthread_mutex_unlock(&q->mu);
        free(it);
        return -1;
    }
    if (!it || q->n >= EVQ_MAX) {
        pthread_mutex_unlock(&q->mu);
        KLOG_WARN("event %s on %s/%s dropped: %zu Events are waiting to be posted", kube_json_at_str(ev, "reason"),
                  kube_json_at_str(ev, "metadata", "namespace"), kube_json_at_str(ev, "involvedObject", "name"),
                  (size_t)EVQ_MAX);
        free(it);
        json_decref(ev);
        return 0;
    }
    it->ev = ev;
    if (q->tail)
        q->tail->next = it;
    else
        q->head = it;
    q->tail = it;
    q->n++;
    pthread_cond_signal(&q->cv);
    pthread_mutex_unlock(&q->mu);
    return 0;
}

void events_record(struct events *q, struct kube_client *c, const json_t *job, const char *type, const char *reason,
                   const char *msg)
{
    const char *ns = kube_json_at_str(job, "metadata", "namespace"), *name = kube_obj_name(job);
    char now[40], gen[300];
    kube_time_format(kube_realtime_ms(), now, sizeof now);
    snprintf(gen, sizeof gen, "%s.", name ? name : "mpijob");
    json_t *ev = json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s, s:s*, s:s*, s:s*, s:s*}, s:s, s:s, s:s, s:{s:s}, "
                           "s:s, s:s, s:i, s:s}",
                           "apiVersion", "v1", "kind", "Event", "metadata", "generateName", gen, "namespace",
                           ns ? ns : "default", "involvedObject", "kind", "MPIJob", "name", name, "namespace", ns, "uid",
                           kube_json_at_str(job, "metadata", "uid"), "apiVersion", kube_json_at_str(job, "apiVersion"),
                           "type", type, "reason", reason, "message", msg ? msg : "", "source", "component", "mpi-operator",
                           "firstTimestamp", now, "lastTimestamp", now, "count", 1, "reportingComponent", "mpi-operator");
    if (!ev) {
        KLOG_WARN("event %s on %s/%s not recorded: out of memory", reason, ns, name);
        return;
    }
    if (enqueue(q, ev) == 0)
        return;
    post(c, ev);
    json_decref(ev);
}
