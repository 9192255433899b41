/* controller.c - wires the caches, the work queue and the worker threads:
 * every change to an MPIJob or an object it owns queues "ns/job"; a worker
 * reads that job's objects from the caches, computes the plan
 * (reconcile_plan), applies it, updates metrics, and requeues on failure
 * (per-key backoff) or when the plan asks (deadlines, TTL). */
#include "controller.h"
#include "health.h"
#include "cache.h"
#include "launcher_memory.h"
#include "metrics.h"
#include "workqueue.h"
#include "jsonutil.h"
#include "kube/log.h"
#include "kube/util.h"

#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { C_MPIJOB, C_POD, C_JOB, C_CM, C_SVC, C_SA, C_ROLE, C_RB, C_SECRET, C_PG, C__COUNT };

struct controller {
    struct kube_client *c;
    struct options o;
    struct cache *caches[C__COUNT];
    struct workqueue *q;
    struct launcher_memory *lmem; /* launcher termination records outliving their pods (F7) */
    pthread_t *workers;
    int nworkers;
    struct metrics *metrics;       /* this controller's registry, served by srv */
    struct metrics_server *srv;    /* --monitoring-port, NULL when off */
    struct events *events;         /* the Event queue and its poster thread */
    /* One list at a time among this controller's caches: a reply may be as large as the
     * library's cap (64 MiB), so the caches listing at once (initial sync, relists) could hold
     * one cap each (a hostile server's 256 MiB replies cost ~420 MB with 9 caches);
     * serialised, the peak is one cap. */
    pthread_mutex_t list_gate;
    int have_gate;
    _Atomic int64_t trim_last_ms;  /* the last malloc_trim (trim_when_idle) */
};

static const struct kube_resource RES_SP_PODGROUPS = { "scheduling.x-k8s.io", "v1alpha1", "podgroups", "PodGroup", 1 };

/* How long pod events for a job are gathered before its sync (as Kubernetes' Job
 * controller batches pod updates for 1 s): N workers starting yield a sync, a status write
 * and a ConfigMap patch per batch, not per pod event. */
#define POD_EVENT_BATCH_MS 1000

static void notify(const char *key, void *ud)
{
    wq_add(((struct controller *)ud)->q, key);
}

/* A pod changed: sync its job once the batch period has passed (a job already due earlier,
 * e.g. after its own change, keeps that time). */
static void notify_batched(const char *key, void *ud)
{
    wq_add_after(((struct controller *)ud)->q, key, POD_EVENT_BATCH_MS);
}

static void observe_pod(const char *key, const json_t *pod, void *ud)
{
    lmem_observe(((struct controller *)ud)->lmem, key, pod);
}

struct controller *controller_new(struct kube_client *c, struct kube_client *watch_c, const struct options *o)
{
    struct controller *ctl = calloc(1, sizeof *ctl);
    if (!ctl)
        return NULL;
    ctl->c = c;
    ctl->o = *o;
    ctl->have_gate = pthread_mutex_init(&ctl->list_gate, NULL) == 0;
    ctl->metrics = metrics_new();
    ctl->events = events_new();
    if (!ctl->have_gate || !ctl->metrics || !ctl->events) {
        controller_free(ctl);
        return NULL;
    }
    ctl->q = wq_new();
    if (ctl->q)
        wq_set_bucket(ctl->q, o->queue_rate_limit, o->queue_burst);
    ctl->lmem = lmem_new();
    const char *sel = LBL_T_OPERATOR "=" MPIJOB_OPERATOR_NAME;
    struct { const struct kube_resource *r; cache_prune_fn prune; } spec[C__COUNT] = {
        { &KUBE_RES_MPIJOBS, prune_generic }, { &KUBE_RES_PODS, prune_pod }, { &KUBE_RES_JOBS, prune_job },
        { &KUBE_RES_CONFIGMAPS, prune_compared }, { &KUBE_RES_SERVICES, prune_meta_only },
        { &KUBE_RES_SERVICEACCOUNTS, prune_meta_only }, { &KUBE_RES_ROLES, prune_compared },
        { &KUBE_RES_ROLEBINDINGS, prune_meta_only }, { &KUBE_RES_SECRETS, prune_meta_only },
        { &KUBE_RES_PODGROUPS, prune_meta_only },
    };
    int gang = o->build.gang && *o->build.gang;
    if (gang && strcmp(o->build.gang, "volcano") != 0)
        spec[C_PG].r = &RES_SP_PODGROUPS;
    for (int i = 0; i < C__COUNT; i++) {
        if (i == C_PG && !gang)
            continue;
        struct cache_opts co = { .res = spec[i].r, .ns = o->ns, .label_selector = i == C_MPIJOB ? NULL : sel,
                                 .group_label = i == C_MPIJOB ? NULL : LBL_T_JOB_NAME, .prune = spec[i].prune,
                                 .notify = i == C_POD ? notify_batched : notify, .observe = i == C_POD ? observe_pod : NULL, .ud = ctl,
                                 .list_gate = &ctl->list_gate };
        ctl->caches[i] = cache_new(watch_c, &co);
        if (!ctl->caches[i] || !ctl->q || !ctl->lmem) {
            controller_free(ctl);
            return NULL;
        }
    }
    return ctl;
}

static json_t *owned(struct controller *ctl, int which, const char *key, const char *job, const char *suffix)
{
    if (!ctl->caches[which])
        return NULL;
    char name[320];
    snprintf(name, sizeof name, "%s%s", job, suffix);
    return cache_get(ctl->caches[which], key, name);
}

static void record_metrics(struct metrics *m, const char *key, const char *ns, const struct plan *p)
{
    if (p->created)
        metrics_inc(m, M_CREATED);
    if (p->succeeded)
        metrics_inc(m, M_SUCCEEDED);
    if (p->failed)
        metrics_inc(m, M_FAILED);
    if (p->restarted)
        metrics_inc(m, M_RESTARTED);
    if (p->launch_latency_s >= 0)
        metrics_launch_latency(m, p->launch_latency_s);
    const char *k;
    json_t *v;
    json_object_foreach(p->new_phases, k, v) metrics_launch_phase(m, k, json_real_value(v));
    if (p->launcher_pod)
        metrics_job_info(m, key, ns, p->launcher_pod);
}

/* The cache holding objects of kind r, or NULL. */
static struct cache *cache_of(struct controller *ctl, enum res_kind r)
{
    static const int map[RK__COUNT] = { [RK_CONFIGMAP] = C_CM, [RK_SERVICEACCOUNT] = C_SA, [RK_ROLE] = C_ROLE,
        [RK_ROLEBINDING] = C_RB, [RK_SECRET] = C_SECRET, [RK_SERVICE] = C_SVC, [RK_POD] = C_POD,
        [RK_JOB] = C_JOB, [RK_PODGROUP] = C_PG, [RK_MPIJOB] = C_MPIJOB, [RK_EVENT] = -1 };
    return (unsigned)r < RK__COUNT && map[r] >= 0 ? ctl->caches[map[r]] : NULL;
}

struct sink_ctx {
    struct controller *ctl;
    const char *key;
};

static void sink_stored(void *ud, enum res_kind r, const json_t *obj)
{
    struct sink_ctx *s = ud;
    cache_store(cache_of(s->ctl, r), obj);
}

static void sink_gone(void *ud, enum res_kind r, const char *name)
{
    struct sink_ctx *s = ud;
    cache_drop(cache_of(s->ctl, r), s->key, name);
}

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One sync of key, started at t0 (mono_s); returns 0 done, -1 retry with backoff;
 * *after_ms = requested requeue. */
static int sync_key(struct controller *ctl, const char *key, double t0, int64_t *after_ms)
{
    const char *slash = strchr(key, '/');
    if (!slash)
        return 0;
    char *ns = strndup(key, (size_t)(slash - key));
    const char *name = slash + 1;
    struct observed ob = { 0 };
    ob.job = cache_get(ctl->caches[C_MPIJOB], key, name);
    if (!ob.job) {
        lmem_forget(ctl->lmem, key);
        metrics_job_info(ctl->metrics, key, ns, NULL);
        free(ns);
        return 0;
    }
    ob.configmap = owned(ctl, C_CM, key, name, "-config");
    ob.service = owned(ctl, C_SVC, key, name, MPIJOB_SERVICE_SUFFIX(mpijob_object_is_v1alpha2(ob.job)));
    ob.sa = owned(ctl, C_SA, key, name, "-launcher");
    ob.role = owned(ctl, C_ROLE, key, name, "-launcher");
    ob.rolebinding = owned(ctl, C_RB, key, name, "-launcher");
    ob.secret = owned(ctl, C_SECRET, key, name, "-ssh");
    ob.podgroup = owned(ctl, C_PG, key, name, "");
    ob.launcher_job = owned(ctl, C_JOB, key, name, "-launcher");
    ob.pods = cache_group(ctl->caches[C_POD], key);
    ob.launcher_seen = lmem_get(ctl->lmem, key);
    struct plan p;
    reconcile_plan(&ob, &ctl->o.build, ju_now_ms(), &p);
    struct sink_ctx sc = { ctl, key };
    struct apply_sink sink = { sink_stored, sink_gone, &sc };
    int rc = p.n ? apply_plan(ctl->c, ctl->events, ob.job, &p, &sink) : 0;
    if (rc == 0)
        record_metrics(ctl->metrics, key, ns, &p);
    if (p.n)
        KLOG_DEBUG("synced %s: %zu actions%s in %.1f ms", key, p.n, rc ? " (retrying)" : "",
                   (mono_s() - t0) * 1000);
    else
        KLOG_TRACE("synced %s: nothing to do", key);
    *after_ms = p.requeue_after_ms;
    /* the watch events of our own writes trigger no sync (the cache holds their revisions
     * already); the follow-up some transitions need (a finished job's cleanup after its status
     * write) comes from this requeue instead, batched like pod events */
    if (rc == 0 && p.n && (*after_ms <= 0 || *after_ms > POD_EVENT_BATCH_MS))
        *after_ms = POD_EVENT_BATCH_MS;
    if (p.retry)
        rc = -1;
    plan_free(&p);
    json_t *all[] = { ob.job, ob.configmap, ob.service, ob.sa, ob.role, ob.rolebinding, ob.secret, ob.podgroup,
                      ob.launcher_job, ob.pods, ob.launcher_seen };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        json_decref(all[i]);
    free(ns);
    return rc;
}

/* When the queue drains (at most every 2 s): hands the heap's free pages back to the system.
 * A burst of syncs and watch events leaves free chunks among the cached objects' (glibc
 * returns only the top of a heap by itself); measured: 5.4 -> 5.1 MB after 200 new jobs. */
static void trim_when_idle(struct controller *ctl)
{
    int64_t now = kube_now_ms(), prev = atomic_load(&ctl->trim_last_ms);
    if (wq_len(ctl->q) == 0 && now - prev >= 2000 && atomic_compare_exchange_strong(&ctl->trim_last_ms, &prev, now))
        malloc_trim(0);
}

/* Workers that took no key for this long while keys wait are stuck (a sync is bounded by
 * the API client's timeouts, far below this). */
#define WORKERS_STALL_MS 120000

void controller_beat(struct controller *ctl)
{
    if (ctl && wq_len(ctl->q) == 0)
        health_beat(H_WORKERS); /* nothing waiting: idle workers are alive */
}

static void *worker(void *arg)
{
    struct controller *ctl = arg;
    char *key;
    while ((key = wq_get(ctl->q)) != NULL) {
        health_beat(H_WORKERS);
        double t0 = mono_s();
        int64_t after = 0;
        int rc = sync_key(ctl, key, t0, &after);
        metrics_reconcile(ctl->metrics, mono_s() - t0);
        if (rc < 0) {
            wq_add_rate_limited(ctl->q, key);
        } else {
            wq_forget(ctl->q, key);
            if (after > 0)
                wq_add_after(ctl->q, key, after);
        }
        wq_done(ctl->q, key);
        free(key);
        health_beat(H_WORKERS);
        trim_when_idle(ctl);
    }
    return NULL;
}

int controller_start(struct controller *ctl, struct kube_cancel *stop, char **err)
{
    for (int i = 0; i < C__COUNT; i++)
        if (ctl->caches[i] && cache_start(ctl->caches[i]) < 0)
            return ju_err(err, "cannot start a cache thread");
    int64_t deadline = kube_now_ms() + 60000;
    for (int i = 0; i < C__COUNT; i++) {
        if (!ctl->caches[i])
            continue;
        while (!cache_wait_synced(ctl->caches[i], 200) && kube_now_ms() < deadline)
            if (kube_cancel_requested(stop))
                return -1;
        if (!cache_wait_synced(ctl->caches[i], 0)) {
            char *why = cache_last_error(ctl->caches[i]);
            ju_err(err, "caches did not sync within 60 s: %s", why ? why : "no reply from the API server");
            free(why);
            return -1;
        }
    }
    if (events_async_start(ctl->events, ctl->c) < 0)
        return ju_err(err, "cannot start the Event poster thread");
    metrics_set_ready(ctl->metrics, 1);
    int n = ctl->o.threadiness > 0 ? ctl->o.threadiness : 1;
    ctl->workers = calloc((size_t)n, sizeof *ctl->workers);
    if (!ctl->workers)
        return ju_err(err, "out of memory");
    for (int i = 0; i < n; i++) {
        if (pthread_create(&ctl->workers[i], NULL, worker, ctl) != 0)
            return ju_err(err, "cannot start worker thread %d", i);
        ctl->nworkers++;
    }
    health_arm(H_WORKERS, WORKERS_STALL_MS);
    KLOG_INFO("controller started: %d workers, %zu MPIJobs cached", n, cache_count(ctl->caches[C_MPIJOB]));
    return 0;
}

int controller_serve(struct controller *ctl, char **err)
{
    if (ctl->o.monitoring_port <= 0 || ctl->srv)
        return 0;
    ctl->srv = metrics_serve(ctl->metrics, ctl->o.monitoring_port, err);
    return ctl->srv ? 0 : -1;
}

struct metrics *controller_metrics(struct controller *ctl)
{
    return ctl->metrics;
}

void controller_stop(struct controller *ctl)
{
    if (ctl->q)
        wq_shutdown(ctl->q);
    for (int i = 0; i < ctl->nworkers; i++)
        pthread_join(ctl->workers[i], NULL);
    ctl->nworkers = 0;
    if (ctl->events)
        events_async_stop(ctl->events);
    for (int i = 0; i < C__COUNT; i++) {
        cache_free(ctl->caches[i]);
        ctl->caches[i] = NULL;
    }
}

void controller_free(struct controller *ctl)
{
    if (!ctl)
        return;
    controller_stop(ctl);
    metrics_server_stop(ctl->srv);
    wq_free(ctl->q);
    lmem_free(ctl->lmem);
    events_free(ctl->events);
    metrics_free(ctl->metrics);
    if (ctl->have_gate)
        pthread_mutex_destroy(&ctl->list_gate);
    free(ctl->workers);
    free(ctl);
}
