/* controller.c - wires the caches, the work queue and the worker threads:
 * every change to an MPIJob or an object it owns queues "ns/job"; a worker
 * reads that job's objects from the caches, computes the plan
 * (reconcile_plan), applies it, updates metrics, and requeues on failure
 * (per-key backoff) or when the plan asks (deadlines, TTL). */
#include "controller.h"
#include "crds.h"
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
};

static void notify(const char *key, void *ud)
{
    wq_add(((struct controller *)ud)->q, key);
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
    ctl->q = wq_new();
    if (ctl->q)
        wq_set_bucket(ctl->q, o->queue_rate_limit, o->queue_burst);
    ctl->lmem = lmem_new();
    const char *sel = LBL_T_OPERATOR "=" MPIJOB_OPERATOR_NAME;
    struct { const struct kube_resource *r; cache_prune_fn prune; } spec[C__COUNT] = {
        { o->mpijob_res ? o->mpijob_res : &MPIJOB_RES_V2BETA1, prune_generic }, { &KUBE_RES_PODS, prune_pod }, { &KUBE_RES_JOBS, prune_job },
        { &KUBE_RES_CONFIGMAPS, prune_compared }, { &KUBE_RES_SERVICES, prune_meta_only },
        { &KUBE_RES_SERVICEACCOUNTS, prune_meta_only }, { &KUBE_RES_ROLES, prune_compared },
        { &KUBE_RES_ROLEBINDINGS, prune_meta_only }, { &KUBE_RES_SECRETS, prune_meta_only },
        { podgroup_resource_for_scheduler(o->build.gang), prune_meta_only },
    };
    int gang = o->build.gang && *o->build.gang;
    for (int i = 0; i < C__COUNT; i++) {
        if (i == C_PG && !gang)
            continue;
        if ((i == C_SA || i == C_ROLE || i == C_RB) && o->build.no_launcher_rbac)
            continue; /* access.h's limited mode: neither cached nor created */
        struct cache_opts co = { .res = spec[i].r, .ns = o->ns, .label_selector = i == C_MPIJOB ? NULL : sel,
                                 .group_label = i == C_MPIJOB ? NULL : LBL_T_JOB_NAME, .prune = spec[i].prune,
                                 .notify = notify, .observe = i == C_POD ? observe_pod : NULL, .ud = ctl };
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

static void record_metrics(const char *key, const char *ns, const struct plan *p)
{
    if (p->created)
        metrics_inc(M_CREATED);
    if (p->succeeded)
        metrics_inc(M_SUCCEEDED);
    if (p->failed)
        metrics_inc(M_FAILED);
    if (p->restarted)
        metrics_inc(M_RESTARTED);
    if (p->launch_latency_s >= 0)
        metrics_launch_latency(p->launch_latency_s);
    const char *k;
    json_t *v;
    json_object_foreach(p->new_phases, k, v) metrics_launch_phase(k, json_real_value(v));
    if (p->launcher_pod)
        metrics_job_info(key, ns, p->launcher_pod);
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
        metrics_job_info(key, ns, NULL);
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
    for (size_t i = 0; i < p.n; i++) /* patch not granted (access.h): list + PUT */
        p.a[i].by_update = p.a[i].kind == ACT_PATCH &&
                           ((p.a[i].res == RK_CONFIGMAP && ctl->o.build.no_patch_configmaps) ||
                            (p.a[i].res == RK_JOB && ctl->o.build.no_patch_jobs));
    struct sink_ctx sc = { ctl, key };
    struct apply_sink sink = { sink_stored, sink_gone, &sc };
    int rc = p.n ? apply_plan(ctl->c, ob.job, &p, &sink) : 0;
    if (rc == 0)
        record_metrics(key, ns, &p);
    if (p.n)
        KLOG_DEBUG("synced %s: %zu actions%s in %.1f ms", key, p.n, rc ? " (retrying)" : "",
                   (mono_s() - t0) * 1000);
    else
        KLOG_TRACE("synced %s: nothing to do", key);
    *after_ms = p.requeue_after_ms;
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
    static _Atomic int64_t last_ms;
    int64_t now = kube_now_ms(), prev = atomic_load(&last_ms);
    if (wq_len(ctl->q) == 0 && now - prev >= 2000 && atomic_compare_exchange_strong(&last_ms, &prev, now))
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
        metrics_reconcile(mono_s() - t0);
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
    if (events_async_start(ctl->c) < 0)
        return ju_err(err, "cannot start the Event poster thread");
    metrics_set_ready(1);
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

void controller_stop(struct controller *ctl)
{
    wq_shutdown(ctl->q);
    for (int i = 0; i < ctl->nworkers; i++)
        pthread_join(ctl->workers[i], NULL);
    ctl->nworkers = 0;
    events_async_stop();
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
    wq_free(ctl->q);
    lmem_free(ctl->lmem);
    free(ctl->workers);
    free(ctl);
}
