/* controller.c - wires the informers (one per cached kind of kind.c's table),
 * the work queue and the worker threads: every change to an MPIJob or an object
 * it owns queues "ns/job" (the informers' group); a worker reads that job's
 * objects from the informers, computes the plan
 * (reconcile_plan), applies it, updates metrics, and requeues on failure
 * (per-key backoff) or when the plan asks (deadlines, TTL). */
#include "controller.h"
#include "crds.h"
#include "health.h"
#include "job_state.h"
#include "kind.h"
#include "launcher_memory.h"
#include "metrics.h"
#include "workqueue.h"
#include "kube/json.h"
#include "kube/util.h"
#include "kube/informer.h"
#include "kube/log.h"
#include "apply.h"
#include "events.h"
#include "metrics_http.h"

#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* What one informer's callbacks need: the controller and the kind; echo belongs to that
 * informer's thread (on_object sets it, on_group of the same event reads it). */
struct kind_watch {
    struct controller *ctl;
    enum res_kind r;
    char *echo; /* the group of the event being dispatched when it echoed the cache */
};

struct controller {
    struct kube_client *c;
    struct kube_client *watch_c; /* the informers' lists and watches */
    struct options o;
    struct kube_informer *inf[RK__COUNT]; /* by kind; NULL for the kinds not cached */
    struct workqueue *q;
    struct launcher_memory *lmem;    /* launcher termination records outliving their pods (F7) */
    struct kind_watch kw[RK__COUNT]; /* each informer's callback context */
    pthread_t *workers;
    int nworkers;
    struct metrics *metrics;    /* this controller's registry, served by srv */
    struct metrics_server *srv; /* --monitoring-port, NULL when off */
    struct events *events;      /* the Event queue and its poster thread */
    /* One list at a time among this controller's caches: a reply may be as large as the
     * library's cap (64 MiB), so the caches listing at once (initial sync, relists) could hold
     * one cap each (a hostile server's 256 MiB replies cost ~420 MB with 9 caches);
     * serialised, the peak is one cap. */
    pthread_mutex_t list_gate;
    int have_gate;
    _Atomic int64_t trim_last_ms; /* the last malloc_trim (trim_when_idle) */
};

/* Page size of the informers' lists: one page at a time is held parsed (a page of 50 pods
 * costs about 1 MB while it is processed). */
#define LIST_PAGE 50

/* How long pod events for a job are gathered before its sync (as Kubernetes' Job
 * controller batches pod updates for 1 s): N workers starting yield a sync, a status write
 * and a ConfigMap patch per batch, not per pod event. */
#define POD_EVENT_BATCH_MS 1000

/* An event of a kind other than pods: the cache already holding the object at the event's
 * resourceVersion means the event is the echo of the operator's own write (write-through,
 * kube_informer_store): nothing new, so its sync is batched like pod events. Anything else (a
 * new MPIJob, a change by someone else) syncs at once. Syncing every echo at once let each
 * write start the next sync while pods kept changing (a status write and a hostfile patch per
 * round), faster than the batching: controller_scale saw 5 status writes within 1 s under load.
 * on_object runs on the kind's informer thread just before on_group for the same event. */
static void on_object(const char *group, const json_t *obj, void *ud)
{
    struct kind_watch *w = ud;
    struct kube_informer *inf = w->ctl->inf[w->r];
    json_t *cached = inf ? kube_informer_get(inf, kube_obj_namespace(obj), kube_obj_name(obj)) : NULL;
    const char *a = kube_obj_resource_version(cached), *b = kube_obj_resource_version(obj);
    free(w->echo);
    w->echo = a && b && strcmp(a, b) == 0 ? strdup(group) : NULL;
    json_decref(cached);
}

static void on_group(const char *group, void *ud)
{
    struct kind_watch *w = ud;
    int echo = w->echo && strcmp(w->echo, group) == 0;
    free(w->echo);
    w->echo = NULL;
    if (echo)
        workqueue_add_after(w->ctl->q, group, POD_EVENT_BATCH_MS);
    else
        workqueue_add(w->ctl->q, group);
}

/* A pod changed: sync its job once the batch period has passed (a job already due earlier,
 * e.g. after its own change, keeps that time). */
static void on_pod_group(const char *group, void *ud)
{
    workqueue_add_after(((struct kind_watch *)ud)->ctl->q, group, POD_EVENT_BATCH_MS);
}

/* Every pod event: the launcher's termination record is kept (launcher_memory.c), and a pod
 * event that carries one syncs its job at once, not batched: a launcher's failure carries the
 * reason the MPIJob's Failed condition must name, and it comes once per launcher attempt. */
static void on_pod(const char *group, const json_t *pod, void *ud)
{
    struct controller *ctl = ((struct kind_watch *)ud)->ctl;
    if (launcher_memory_observe(ctl->lmem, group, pod))
        workqueue_add(ctl->q, group);
}

/* The API resource an informer of kind r lists: the discovered MPIJob version, the gang
 * scheduler's PodGroups, else the table's. */
static const struct kube_resource *informer_resource(const struct options *o, enum res_kind r)
{
    if (r == RK_MPIJOB)
        return o->mpijob_res ? o->mpijob_res : &MPIJOB_RES_V2BETA1;
    if (r == RK_PODGROUP)
        return crds_podgroup_resource_for_scheduler(o->build.gang);
    return kind_of(r)->res;
}

/* Creates the informer of kind r (a row of kind.c): compact, pruned, grouped by job. 0 ok
 * (also when r is not cached), -1 on failure (logged). */
static int new_informer(struct controller *ctl, struct kube_client *watch_c, enum res_kind r)
{
    const struct kind *k = kind_of(r);
    int gang = ctl->o.build.gang && *ctl->o.build.gang;
    if (k->read == KR_NONE || (r == RK_PODGROUP && !gang))
        return 0;
    if ((r == RK_SERVICEACCOUNT || r == RK_ROLE || r == RK_ROLEBINDING) && ctl->o.build.no_launcher_rbac)
        return 0; /* access.h's limited mode: neither cached nor created */
    struct kube_informer_opts io = {
        .ns = ctl->o.ns, .page_size = LIST_PAGE, .transform = k->prune, .compact = 1, .list_gate = &ctl->list_gate
    };
    if (k->read == KR_JOB) {
        io.index = kind_job_group;
    } else {
        io.index = kind_owned_group;
        io.label_selector = LBL_T_OPERATOR "=" MPIJOB_OPERATOR_NAME;
    }
    ctl->kw[r] = (struct kind_watch){ .ctl = ctl, .r = r };
    struct kube_informer_handlers h = { .ud = &ctl->kw[r],
                                        .on_group = r == RK_POD ? on_pod_group : on_group,
                                        .on_object = r == RK_POD ? on_pod : on_object };
    char *err = NULL;
    const struct kube_resource *res = informer_resource(&ctl->o, r);
    ctl->inf[r] = kube_informer_new(watch_c, res, &io, &h, &err);
    if (!ctl->inf[r])
        KLOG_ERROR("informer %s: %s", k->resource, err ? err : "out of memory");
    free(err);
    return ctl->inf[r] ? 0 : -1;
}

/* mpi_operator_workqueue_depth at each scrape. */
static size_t queue_depth(void *q) { return workqueue_len(q); }

/* rest_client_requests_total: every request of both clients. */
static void on_request(void *m, const char *method, long code) { metrics_api_request(m, method, code); }

struct controller *controller_new(struct kube_client *c, struct kube_client *watch_c, const struct options *o)
{
    struct controller *ctl = calloc(1, sizeof *ctl);
    if (!ctl)
        return NULL;
    ctl->c = c;
    ctl->watch_c = watch_c;
    ctl->o = *o;
    ctl->have_gate = pthread_mutex_init(&ctl->list_gate, NULL) == 0;
    ctl->metrics = metrics_new();
    ctl->events = events_new();
    if (!ctl->have_gate || !ctl->metrics || !ctl->events) {
        controller_free(ctl);
        return NULL;
    }
    ctl->q = workqueue_new();
    if (ctl->q)
        workqueue_set_bucket(ctl->q, o->queue_rate_limit, o->queue_burst);
    ctl->lmem = launcher_memory_new();
    if (!ctl->q || !ctl->lmem) {
        controller_free(ctl);
        return NULL;
    }
    metrics_set_queue_depth(ctl->metrics, queue_depth, ctl->q);
    kube_client_on_request(c, on_request, ctl->metrics);
    if (watch_c && watch_c != c)
        kube_client_on_request(watch_c, on_request, ctl->metrics);
    return ctl;
}

void controller_learned(struct controller *ctl, const struct options *o) { ctl->o = *o; }

/* The job's state after a sync: the status the plan wrote when it was applied, else the
 * cached one. */
static void record_state(struct metrics *m, const char *key, const json_t *job, const struct plan *p, int applied)
{
    for (size_t i = 0; applied && i < p->n; i++)
        if (p->a[i].kind == ACT_STATUS && p->a[i].obj)
            job = p->a[i].obj;
    struct job_state_info st;
    job_state_read(job, (double)kube_realtime_ms() / 1000.0, &st);
    metrics_job_state(m, key, &st);
}

static void record_metrics(struct metrics *m, const char *key, const char *ns, const struct plan *p)
{
    if (p->created)
        metrics_inc(m, M_CREATED);
    if (p->succeeded)
        metrics_inc(m, M_SUCCEEDED);
    if (p->failed) {
        metrics_inc(m, M_FAILED);
        metrics_failure(m, p->fail_reason);
    }
    if (p->restarted)
        metrics_inc(m, M_RESTARTED);
    size_t i;
    json_t *r;
    json_array_foreach(p->restart_reasons, i, r)
        metrics_restart(m, json_string_value(r));
    if (p->launch_latency_s >= 0)
        metrics_launch_latency(m, p->launch_latency_s);
    const char *k;
    json_t *v;
    json_object_foreach(p->new_phases, k, v)
        metrics_launch_phase(m, k, json_real_value(v));
    if (p->launcher_pod)
        metrics_job_info(m, key, ns, p->launcher_pod);
}

struct sink_ctx {
    struct controller *ctl;
    const char *key;
};

static void sink_stored(void *ud, enum res_kind r, const json_t *obj)
{
    struct sink_ctx *s = ud;
    if ((unsigned)r < RK__COUNT && s->ctl->inf[r])
        kube_informer_store(s->ctl->inf[r], obj);
}

static void sink_gone(void *ud, enum res_kind r, const char *name)
{
    struct sink_ctx *s = ud;
    if ((unsigned)r < RK__COUNT && s->ctl->inf[r])
        kube_informer_drop(s->ctl->inf[r], s->key, name);
}

/* Reads the objects of kind r the job named name (group key, v1alpha2 or not) owns into their
 * slot of ob (kind.c's table). */
static void read_kind(struct controller *ctl, enum res_kind r, const char *key, const char *name, int v1alpha2,
                      struct observed *ob)
{
    const struct kind *k = kind_of(r);
    json_t **slot = (json_t **)((char *)ob + k->slot);
    if (!ctl->inf[r] || (k->read != KR_OWNED && k->read != KR_GROUP))
        return;
    if (k->read == KR_GROUP) {
        *slot = kube_informer_group(ctl->inf[r], key);
        return;
    }
    char *kube_obj_name = kind_object_name(r, name, v1alpha2);
    *slot = kube_obj_name ? kube_informer_get_in(ctl->inf[r], key, kube_obj_name) : NULL;
    free(kube_obj_name);
}

/* Releases what a sync read (every slot of the table's kinds, and the remembered launcher). */
static void observed_free(struct observed *ob)
{
    for (int r = 0; r < RK__COUNT; r++)
        if (kind_of((enum res_kind)r)->read != KR_NONE)
            json_decref(*(json_t **)((char *)ob + kind_of((enum res_kind)r)->slot));
    json_decref(ob->launcher_seen);
}

/* One sync of key, started at t0 (kube_now_ms() in seconds); returns 0 done, -1 retry with backoff;
 * *after_ms = requested requeue. */
static int sync_key(struct controller *ctl, const char *key, double t0, int64_t *after_ms)
{
    const char *slash = strchr(key, '/');
    if (!slash)
        return 0;
    char *ns = strndup(key, (size_t)(slash - key));
    const char *name = slash + 1;
    struct observed ob = { 0 };
    ob.job = kube_informer_get_in(ctl->inf[RK_MPIJOB], key, name);
    if (!ob.job) {
        launcher_memory_forget(ctl->lmem, key);
        metrics_job_info(ctl->metrics, key, ns, NULL);
        metrics_job_state(ctl->metrics, key, NULL);
        free(ns);
        return 0;
    }
    int v1alpha2 = mpijob_object_is_v1alpha2(ob.job);
    for (int r = 0; r < RK__COUNT; r++)
        read_kind(ctl, (enum res_kind)r, key, name, v1alpha2, &ob);
    ob.launcher_seen = launcher_memory_get(ctl->lmem, key);
    struct plan p;
    reconcile_plan(&ob, &ctl->o.build, kube_realtime_ms(), &p);
    for (size_t i = 0; i < p.n; i++) /* patch not granted (access.h): list + PUT */
        p.a[i].by_update = p.a[i].kind == ACT_PATCH && ((p.a[i].res == RK_CONFIGMAP && ctl->o.build.no_patch_configmaps) ||
                                                        (p.a[i].res == RK_JOB && ctl->o.build.no_patch_jobs));
    struct sink_ctx sc = { ctl, key };
    struct apply_sink sink = { sink_stored, sink_gone, &sc };
    int rc = p.n ? apply_plan(ctl->c, ctl->events, ob.job, &p, &sink) : 0;
    if (rc == 0)
        record_metrics(ctl->metrics, key, ns, &p);
    record_state(ctl->metrics, key, ob.job, &p, rc == 0);
    if (p.n)
        KLOG_DEBUG("synced %s: %zu actions%s in %.1f ms", key, p.n, rc ? " (retrying)" : "",
                   ((kube_now_ms() / 1000.0) - t0) * 1000);
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
    observed_free(&ob);
    free(ns);
    return rc;
}

/* When the queue drains (at most every 2 s): hands the heap's free pages back to the system.
 * A burst of syncs and watch events leaves free chunks among the cached objects' (glibc
 * returns only the top of a heap by itself); measured: 5.4 -> 5.1 MB after 200 new jobs. */
static void trim_when_idle(struct controller *ctl)
{
    int64_t now = kube_now_ms(), prev = atomic_load(&ctl->trim_last_ms);
    if (workqueue_len(ctl->q) == 0 && now - prev >= 2000 && atomic_compare_exchange_strong(&ctl->trim_last_ms, &prev, now))
        malloc_trim(0);
}

/* Workers that took no key for this long while keys wait are stuck (a sync is bounded by
 * the API client's timeouts, far below this). */
#define WORKERS_STALL_MS 120000

void controller_beat(struct controller *ctl)
{
    if (ctl && workqueue_len(ctl->q) == 0)
        health_beat(H_WORKERS); /* nothing waiting: idle workers are alive */
}

static void *worker(void *arg)
{
    struct controller *ctl = arg;
    char *key;
    while ((key = workqueue_get(ctl->q)) != NULL) {
        health_beat(H_WORKERS);
        double t0 = (kube_now_ms() / 1000.0);
        int64_t after = 0;
        int rc = sync_key(ctl, key, t0, &after);
        metrics_reconcile(ctl->metrics, (kube_now_ms() / 1000.0) - t0);
        if (rc < 0) {
            metrics_reconcile_error(ctl->metrics);
            workqueue_add_rate_limited(ctl->q, key);
        } else {
            workqueue_forget(ctl->q, key);
            if (after > 0)
                workqueue_add_after(ctl->q, key, after);
        }
        workqueue_done(ctl->q, key);
        free(key);
        health_beat(H_WORKERS);
        trim_when_idle(ctl);
    }
    return NULL;
}

int controller_start(struct controller *ctl, struct kube_cancel *stop, char **errmsg)
{
    /* the informers are made now: the MPIJob version is known once discovery ran */
    for (int r = 0; r < RK__COUNT; r++)
        if (!ctl->inf[r] && new_informer(ctl, ctl->watch_c, (enum res_kind)r) < 0)
            return kube_set_err(errmsg, "cannot create the %s informer", kind_of((enum res_kind)r)->resource);
    for (int i = 0; i < RK__COUNT; i++) {
        char *why = NULL;
        if (ctl->inf[i] && kube_informer_start(ctl->inf[i], &why) < 0) {
            kube_set_err(errmsg, "cannot start the %s informer: %s", kind_of((enum res_kind)i)->resource, why ? why : "?");
            free(why);
            return -1;
        }
    }
    int64_t deadline = kube_now_ms() + 60000;
    for (int i = 0; i < RK__COUNT; i++) {
        if (!ctl->inf[i])
            continue;
        while (!kube_informer_wait_synced(ctl->inf[i], 200) && kube_now_ms() < deadline)
            if (kube_cancel_requested(stop))
                return -1;
        if (!kube_informer_wait_synced(ctl->inf[i], 0)) {
            char *why = kube_informer_last_error(ctl->inf[i]);
            kube_set_err(errmsg, "caches did not sync within 60 s: %s", why ? why : "no reply from the API server");
            free(why);
            return -1;
        }
    }
    if (events_async_start(ctl->events, ctl->c) < 0)
        return kube_set_err(errmsg, "cannot start the Event poster thread");
    metrics_set_ready(ctl->metrics, 1);
    int n = ctl->o.threadiness > 0 ? ctl->o.threadiness : 1;
    ctl->workers = calloc((size_t)n, sizeof *ctl->workers);
    if (!ctl->workers)
        return kube_set_err(errmsg, "out of memory");
    for (int i = 0; i < n; i++) {
        if (pthread_create(&ctl->workers[i], NULL, worker, ctl) != 0)
            return kube_set_err(errmsg, "cannot start worker thread %d", i);
        ctl->nworkers++;
    }
    health_arm(H_WORKERS, WORKERS_STALL_MS);
    KLOG_INFO("controller started: %d workers, %zu MPIJobs cached", n, kube_informer_count(ctl->inf[RK_MPIJOB]));
    return 0;
}

int controller_serve(struct controller *ctl, char **errmsg)
{
    if (ctl->o.monitoring_port <= 0 || ctl->srv)
        return 0;
    ctl->srv = metrics_http_serve(ctl->metrics, ctl->o.monitoring_port, errmsg);
    return ctl->srv ? 0 : -1;
}

struct metrics *controller_metrics(struct controller *ctl) { return ctl->metrics; }

void controller_stop(struct controller *ctl)
{
    if (ctl->q)
        workqueue_shutdown(ctl->q);
    for (int i = 0; i < ctl->nworkers; i++)
        pthread_join(ctl->workers[i], NULL);
    ctl->nworkers = 0;
    if (ctl->events)
        events_async_stop(ctl->events);
    for (int i = 0; i < RK__COUNT; i++) {
        kube_informer_free(ctl->inf[i]);
        ctl->inf[i] = NULL;
    }
}

void controller_free(struct controller *ctl)
{
    if (!ctl)
        return;
    controller_stop(ctl);
    if (ctl->c) /* the clients outlive the registry their hook counts into */
        kube_client_on_request(ctl->c, NULL, NULL);
    if (ctl->watch_c)
        kube_client_on_request(ctl->watch_c, NULL, NULL);
    metrics_http_stop(ctl->srv);
    workqueue_free(ctl->q);
    launcher_memory_free(ctl->lmem);
    for (int r = 0; r < RK__COUNT; r++)
        free(ctl->kw[r].echo);
    events_free(ctl->events);
    metrics_free(ctl->metrics);
    if (ctl->have_gate)
        pthread_mutex_destroy(&ctl->list_gate);
    free(ctl->workers);
    free(ctl);
}
