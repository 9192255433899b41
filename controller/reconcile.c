/* reconcile.c - one level-triggered sync of an MPIJob (see reconcile.h):
 * validation, Created, finished-job cleanup and TTL, suspend/resume, the owned
 * objects (ConfigMap, RBAC, Secret, Service, PodGroup, workers, launcher Job),
 * activeDeadlineSeconds, then the status update when anything changed. */
#include "plan.h"
#include "cond.h"
#include "kube/json.h"
#include "kube/util.h"
#include "kind.h"
#include "status_pruned.h"
#include "sync_ctx.h"
#include "pod.h"
#include "reconcile_status.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A merge patch that makes have's field (data, rules) want's, at the cached resourceVersion
 * (Conflict -> retry). Only that field changes: labels, annotations and the rest of the live
 * object stay, as upstream updates a copy of the live object (the caches keep only a pruned
 * copy, so a PUT would reset them). Keys of an object field the job no longer has go (null). */
static json_t *field_patch(const json_t *have, const json_t *want, const char *field)
{
    json_t *val = json_deep_copy(json_object_get(want, field)), *old = json_object_get(have, field);
    const char *k;
    json_t *v;
    if (json_is_object(val) && json_is_object(old))
        json_object_foreach(old, k, v) {
            if (!json_object_get(val, k))
                json_object_set_new(val, k, json_null());
        }
    json_t *patch = json_object();
    json_object_set_new(patch, field, val ? val : json_null());
    json_t *rv = kube_json_at(have, "metadata", "resourceVersion");
    if (rv)
        json_object_set_new(patch, "metadata", json_pack("{s:O}", "resourceVersion", rv));
    return patch;
}

/* Creates obj when absent, refuses a same-named object we don't own, patches when
 * the field that matters (the kind's compared field, kind.c) differs. Returns -1 to stop
 * the sync (foreign object). */
static int ensure(struct sync_ctx *c, enum res_kind r, json_t *have, json_t *want)
{
    const char *field = kind_of(r)->compared;
    if (!want) {
        c->p->retry = 1;
        return -1;
    }
    if (!have) {
        plan_obj(c->p, ACT_CREATE, r, want);
        return 0;
    }
    if (!objects_owned_by(have, c->j)) {
        char msg[512];
        snprintf(msg, sizeof msg, "%s %s/%s already exists and is not controlled by MPIJob %s", kind_name(r), c->j->ns,
                 kube_json_at_str(want, "metadata", "name"), c->j->name);
        plan_event(c->p, "Warning", "ErrResourceExists", msg);
        c->p->retry = 1;
        json_decref(want);
        return -1;
    }
    if (field && !kube_json_equal(json_object_get(have, field), json_object_get(want, field))) {
        plan_named(c->p, ACT_PATCH, r, kube_json_at_str(want, "metadata", "name"), field_patch(have, want, field));
        json_decref(want);
        return 0;
    }
    json_decref(want);
    return 0;
}

/* Index of a worker pod from its replica-index label (or -1). */
static long long worker_index(const json_t *pod)
{
    const char *role = kube_json_at_str(pod, "metadata", "labels", LBL_T_ROLE);
    const char *idx = kube_json_at_str(pod, "metadata", "labels", LBL_T_INDEX);
    if (!role || strcmp(role, "worker") != 0 || !idx)
        return -1;
    long long i;
    return kube_parse_int(idx, 0, LLONG_MAX, &i) < 0 ? -1 : i;
}

/* Sorts the observed pods into workers[index] and the newest launcher pod; plans the
 * deletion of workers beyond the replica count. */
static void classify_pods(struct sync_ctx *c)
{
    size_t i;
    json_t *pod;
    const char *newest = NULL;
    json_array_foreach(c->obs->pods, i, pod) {
        const char *role = kube_json_at_str(pod, "metadata", "labels", LBL_T_ROLE);
        if (role && strcmp(role, "launcher") == 0) {
            const char *ct = kube_json_at_str(pod, "metadata", "creationTimestamp");
            if (!c->launcher_pod || (ct && newest && strcmp(ct, newest) >= 0)) {
                c->launcher_pod = pod;
                newest = ct;
            }
            if (strcmp(pod_phase(pod), "Running") == 0 && !pod_terminating(pod))
                c->launchers_running++;
            continue;
        }
        long long idx = worker_index(pod);
        if (idx < 0 || !objects_owned_by(pod, c->j))
            continue;
        if (idx >= c->j->worker.replicas) {
            if (!pod_terminating(pod))
                plan_named(c->p, ACT_DELETE, RK_POD, kube_obj_name(pod), NULL);
            continue;
        }
        c->workers[idx] = pod;
    }
}

/* Deletes the job's PodGroup; the action carries the apiVersion that tells apply.c
 * which API group (Volcano's or scheduler-plugins') the name is in. */
static void delete_podgroup(struct sync_ctx *c)
{
    json_t *pg = c->obs->podgroup;
    if (!pg || !objects_owned_by(pg, c->j) || kube_json_at(pg, "metadata", "deletionTimestamp"))
        return;
    int volcano = c->o->gang && strcmp(c->o->gang, "volcano") == 0;
    plan_named(c->p, ACT_DELETE, RK_PODGROUP, kube_obj_name(pg),
               json_pack("{s:s}", "apiVersion", volcano ? "scheduling.volcano.sh/v1beta1" : "scheduling.x-k8s.io/v1alpha1"));
}

/* The pods are gone or going: workers per cleanPodPolicy, the PodGroup. */
static void cleanup_finished(struct sync_ctx *c)
{
    for (long long i = 0; i < c->j->worker.replicas; i++) {
        json_t *w = c->workers[i];
        if (!w || pod_terminating(w))
            continue;
        const char *ph = pod_phase(w);
        int done = strcmp(ph, "Succeeded") == 0 || strcmp(ph, "Failed") == 0;
        if (c->j->clean_policy == CLEAN_ALL || (c->j->clean_policy == CLEAN_RUNNING && !done))
            plan_named(c->p, ACT_DELETE, RK_POD, kube_obj_name(w), NULL);
    }
    delete_podgroup(c);
    /* Failed for a reason of ours (a worker, the deadline) while the launcher still runs:
     * suspending its Job stops the launcher pod and keeps the Job for inspection. */
    json_t *lj = c->obs->launcher_job;
    if (c->j->clean_policy != CLEAN_NONE && lj && objects_owned_by(lj, c->j) && !reconcile_job_finished(lj) &&
        !kube_json_at_bool(lj, 0, "spec", "suspend"))
        plan_named(c->p, ACT_PATCH, RK_JOB, kube_obj_name(lj), json_pack("{s:{s:b}}", "spec", "suspend", 1));
}

/* ttlSecondsAfterFinished, as upstream: the MPIJob stays (with its status and its log
 * ConfigMap); the launcher Job carries the TTL and the Job controller deletes it, with its
 * pod, that long after it finished. A launcher Job the operator suspended when the MPIJob
 * failed for a reason of its own never finishes, so the operator deletes that one itself,
 * the same time after the MPIJob's completionTime. */
static void ttl_after_finished(struct sync_ctx *c)
{
    int64_t done;
    const json_t *lj = c->obs->launcher_job;
    if (c->j->ttl_after_finished_s == MPIJOB_UNSET || !lj || !objects_owned_by(lj, c->j) || reconcile_job_finished(lj) ||
        kube_time_parse_ms(kube_json_at_str(c->status, "completionTime"), &done) < 0)
        return;
    int64_t due = done + c->j->ttl_after_finished_s * 1000;
    if (due <= c->now_ms)
        plan_named(c->p, ACT_DELETE, RK_JOB, kube_obj_name(lj), NULL);
    else
        plan_requeue(c->p, due - c->now_ms);
}

/* The merge patch that resumes the launcher Job (as upstream): the template takes the
 * MPIJob's current scheduling directives (nodeSelector, tolerations, schedulingGates:
 * replaced, null = removed; labels and annotations: merged), which a suspended Job
 * allows (Kubernetes' mutable scheduling directives, e.g. set by Kueue). The Job
 * controller resets the suspended Job's startTime, which the API server requires for
 * the change (upstream also clears it itself through jobs/status). */
static json_t *resume_patch(const struct sync_ctx *c)
{
    json_t *want = objects_launcher_job(c->j, c->o);
    json_t *wt = kube_json_at(want, "spec", "template");
    if (!json_is_object(wt)) {
        json_decref(want);
        return NULL;
    }
    json_t *spec = json_object();
    static const char *const fields[] = { "nodeSelector", "tolerations", "schedulingGates" };
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        json_t *v = kube_json_at(wt, "spec", fields[i]);
        json_object_set_new(spec, fields[i], v ? json_deep_copy(v) : json_null());
    }
    /* a merge patch merges objects: the live selector's other keys go (null) */
    json_t *ns = kube_json_at(spec, "nodeSelector");
    const char *k;
    json_t *v;
    json_object_foreach(kube_json_at(c->obs->launcher_job, "spec", "template", "spec", "nodeSelector"), k, v)
        if (json_is_object(ns) && !json_object_get(ns, k))
            json_object_set_new(ns, k, json_null());
    json_t *meta = json_object();
    json_t *labels = kube_json_at(wt, "metadata", "labels"), *ann = kube_json_at(wt, "metadata", "annotations");
    if (json_is_object(labels))
        json_object_set_new(meta, "labels", json_deep_copy(labels));
    if (json_is_object(ann))
        json_object_set_new(meta, "annotations", json_deep_copy(ann));
    json_decref(want);
    return json_pack("{s:{s:b, s:{s:o, s:o}}}", "spec", "suspend", 0, "template", "metadata", meta, "spec", spec);
}

static void suspend_resume(struct sync_ctx *c)
{
    if (c->j->suspend) {
        sync_ctx_cond(c, COND_SUSPENDED, "True", R_SUSPENDED, "is suspended.", "Normal");
        sync_ctx_cond(c, COND_RUNNING, "False", R_SUSPENDED, "is suspended.", NULL);
        for (long long i = 0; i < c->j->worker.replicas; i++)
            if (c->workers[i] && !pod_terminating(c->workers[i]))
                plan_named(c->p, ACT_DELETE, RK_POD, kube_obj_name(c->workers[i]), NULL);
        /* as upstream: the gang goes with its pods, and is created anew on resume */
        delete_podgroup(c);
    } else if (cond_true(c->status, COND_SUSPENDED)) {
        sync_ctx_cond(c, COND_SUSPENDED, "False", R_RESUMED, "is resumed.", "Normal");
        json_object_set_new(c->status, "startTime", json_string(c->now));
        json_object_del(c->status, ST_LAUNCHER_FAILURE); /* a resumed run fails on its own */
    }
    json_t *lj = c->obs->launcher_job;
    if (lj && objects_owned_by(lj, c->j) && kube_json_at_bool(lj, 0, "spec", "suspend") != c->j->suspend) {
        json_t *patch = c->j->suspend ? json_pack("{s:{s:b}}", "spec", "suspend", 1) : resume_patch(c);
        if (!patch) {
            c->p->retry = 1;
            return;
        }
        plan_named(c->p, ACT_PATCH, RK_JOB, kube_obj_name(lj), patch);
    }
}

/* ConfigMap, launcher identity, Service, SSH Secret, PodGroup, and last the launcher's
 * RoleBinding: apply.c creates it after the others, once its Role exists. -1 stops the sync. */
static int ensure_objects(struct sync_ctx *c)
{
    const struct observed *ob = c->obs;
    unsigned char *running = calloc(c->j->worker.replicas + 1, 1);
    for (long long i = 0; running && i < c->j->worker.replicas; i++)
        running[i] = c->workers[i] && !pod_terminating(c->workers[i]) && strcmp(pod_phase(c->workers[i]), "Running") == 0;
    int rc = ensure(c, RK_CONFIGMAP, ob->configmap, objects_configmap(c->j, c->o, running));
    free(running);
    /* the launcher's identity, unless RBAC grants it not (access.h's limited mode) */
    int rbac = !c->o->no_launcher_rbac;
    if (rc < 0 || (rbac && ensure(c, RK_SERVICEACCOUNT, ob->sa, objects_service_account(c->j)) < 0) ||
        (rbac && ensure(c, RK_ROLE, ob->role, objects_role(c->j, !c->o->no_launcher_log, !c->o->no_launcher_events)) < 0) ||
        ensure(c, RK_SERVICE, ob->service, objects_service(c->j)) < 0)
        return -1;
    if (c->j->transport == MPIK8S_TRANSPORT_SSH) {
        char *sn = objects_name_secret(c->j);
        if (!ob->secret && sn)
            plan_named(c->p, ACT_SSH_SECRET, RK_SECRET, sn, NULL);
        free(sn);
        if (ob->secret && !objects_owned_by(ob->secret, c->j)) {
            plan_event(c->p, "Warning", "ErrResourceExists", "the SSH Secret exists and is not controlled by this MPIJob");
            c->p->retry = 1;
            return -1;
        }
    }
    if (c->o->gang && *c->o->gang && !c->j->suspend &&
        ensure(c, RK_PODGROUP, ob->podgroup, objects_podgroup(c->j, c->o)) < 0)
        return -1;
    if (rbac && ensure(c, RK_ROLEBINDING, ob->rolebinding, objects_role_binding(c->j)) < 0)
        return -1;
    return 0;
}

/* Creates missing workers; returns the number that are Ready. */
static long long ensure_workers(struct sync_ctx *c)
{
    long long ready = 0;
    for (long long i = 0; i < c->j->worker.replicas; i++) {
        json_t *w = c->workers[i];
        if (w) {
            ready += pod_ready(w) && !pod_terminating(w);
            continue;
        }
        plan_obj(c->p, ACT_CREATE, RK_POD, objects_worker_pod(c->j, c->o, i));
    }
    return ready;
}

static void ensure_launcher(struct sync_ctx *c, long long ready)
{
    json_t *lj = c->obs->launcher_job;
    if (lj) {
        if (!objects_owned_by(lj, c->j)) {
            plan_event(c->p, "Warning", "ErrResourceExists", "the launcher Job exists and is not controlled by this MPIJob");
            c->p->retry = 1;
        }
        return;
    }
    /* without API access (access.h's limited mode) the launcher's agent cannot wait for the
     * workers' pods: it is created once they are Ready, as WaitForWorkersReady */
    if ((c->j->launcher_creation == LAUNCH_WAIT_FOR_WORKERS_READY || c->o->no_launcher_rbac) &&
        ready < c->j->worker.replicas)
        return; /* a worker pod update will sync again */
    plan_obj(c->p, ACT_CREATE, RK_JOB, objects_launcher_job(c->j, c->o));
}

static void active_deadline(struct sync_ctx *c)
{
    int64_t start;
    if (c->j->active_deadline_s == MPIJOB_UNSET || c->j->suspend || cond_finished(c->status) ||
        kube_time_parse_ms(kube_json_at_str(c->status, "startTime"), &start) < 0)
        return;
    int64_t due = start + c->j->active_deadline_s * 1000;
    if (due > c->now_ms) {
        plan_requeue(c->p, due - c->now_ms);
        return;
    }
    char what[160];
    snprintf(what, sizeof what, "has failed: it was active longer than activeDeadlineSeconds (%llds).",
             c->j->active_deadline_s);
    if (sync_ctx_cond(c, COND_FAILED, "True", R_DEADLINE, what, "Warning")) {
        c->p->failed = 1;
        json_object_set_new(c->status, "completionTime", json_string(c->now));
    }
}

static void invalid_job(struct sync_ctx *c, const char *ns, const char *name, const char *err)
{
    char *what = NULL;
    c->p->invalid = 1;
    if (asprintf(&what, "MPIJob %s/%s is invalid: %s", ns, name, err) < 0)
        return;
    if (!kube_json_at(c->status, "conditions") && sync_ctx_cond(c, COND_CREATED, "True", R_CREATED, "is created.", NULL))
        c->p->created = 1;
    if (cond_set(c->status, COND_FAILED, "True", R_VALIDATION, what, c->now)) {
        plan_event(c->p, "Warning", R_VALIDATION, what);
        c->p->failed = 1;
    }
    free(what);
}

static void update_status(struct sync_ctx *c)
{
    json_t *old = kube_json_at(c->obs->job, "status");
    json_t *cmp = status_pruned_strip(c->status); /* keys the CRD prunes are never stored */
    int same = old ? kube_json_equal(old, cmp) : json_object_size(cmp) == 0;
    json_decref(cmp);
    if (same)
        return;
    json_t *upd = json_deep_copy(c->obs->job);
    json_object_set(upd, "status", c->status);
    plan_named(c->p, ACT_STATUS, RK_MPIJOB, kube_obj_name(c->obs->job), upd);
}

static void sync_valid(struct sync_ctx *c)
{
    struct mpijob *j = (struct mpijob *)c->j;
    if (!kube_json_at(c->status, "conditions") || json_array_size(kube_json_at(c->status, "conditions")) == 0) {
        sync_ctx_cond(c, COND_CREATED, "True", R_CREATED, "is created.", "Normal");
        c->p->created = 1;
    }
    classify_pods(c);
    if (cond_finished(c->status)) {
        cleanup_finished(c);
        reconcile_status(c);
        ttl_after_finished(c);
        return;
    }
    if (!kube_json_at(c->status, "startTime") && !j->suspend)
        json_object_set_new(c->status, "startTime", json_string(c->now));
    suspend_resume(c);
    if (ensure_objects(c) < 0)
        return;
    /* a job created suspended (Kueue) gets its launcher Job at once, suspended, whatever
     * its launcherCreationPolicy (there are no workers to wait for), as upstream does */
    long long ready = j->suspend ? j->worker.replicas : ensure_workers(c);
    ensure_launcher(c, ready);
    reconcile_status(c);
    active_deadline(c);
}

void reconcile_plan(const struct observed *obs, const struct build_opts *o, int64_t now_ms, struct plan *p)
{
    memset(p, 0, sizeof *p);
    p->launch_latency_s = -1;
    if (!obs->job || kube_json_at(obs->job, "metadata", "deletionTimestamp"))
        return;
    struct mpijob j;
    struct sync_ctx c = { .obs = obs, .o = o, .j = &j, .p = p, .now_ms = now_ms };
    kube_time_format(now_ms, c.now, sizeof c.now);
    json_t *old = kube_json_at(obs->job, "status");
    c.status = json_is_object(old) ? json_deep_copy(old) : json_object();
    char *err = NULL;
    if (mpijob_load(obs->job, &j, &err) < 0) {
        const char *ns = kube_json_at_str(obs->job, "metadata", "namespace");
        const char *name = kube_obj_name(obs->job);
        invalid_job(&c, ns ? ns : "default", name ? name : "?", err ? err : "invalid");
        free(err);
        update_status(&c);
        json_decref(c.status);
        return;
    }
    if (j.managed_by && strcmp(j.managed_by, MPIJOB_MANAGED_BY_KUEUE) == 0) {
        json_decref(c.status);
        return;
    }
    if (o->no_launcher_rbac && j.transport == MPIK8S_TRANSPORT_EXEC) { /* access.h's limited mode */
        invalid_job(&c, j.ns, j.name,
                    "the exec transport needs API access in the launcher, and this operator's "
                    "role grants no create on serviceaccounts, roles or rolebindings to give it: use the ssh "
                    "transport (annotation " MPIK8S_ANN_TRANSPORT ": ssh) or the operator's full ClusterRole (deploy/)");
        update_status(&c);
        json_decref(c.status);
        return;
    }
    c.workers = calloc(j.worker.replicas + 1, sizeof *c.workers);
    if (!c.workers) {
        p->retry = 1;
        json_decref(c.status);
        return;
    }
    sync_valid(&c);
    update_status(&c);
    free(c.workers);
    json_decref(c.status);
}
