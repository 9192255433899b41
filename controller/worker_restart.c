/* worker_restart.c - a lost worker (its pod Failed: crashed with restartPolicy
 * Never, or evicted) re-created instead of failing the MPIJob, at most
 * runPolicy.backoffLimit times, and the restarts kept in the status: the
 * count of launcher retries (restartCount), of re-created workers
 * (workerRestarts) and the newest RESTARTS_KEPT reasons (restarts). */
#include "plan.h"
#include "rank_failure.h"
#include "cond.h"
#include "worker_restart.h"
#include "kube/json.h"
#include "kube/poddisrupt.h"
#include "kube/util.h"
#include "sync_ctx.h"
#include "pod.h"
#include "restart_record.h"
#include "kube/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* 1 when status.restarts records pod already: by name and creationTimestamp (the pod cache
 * keeps no uid; a re-created pod is younger). */
static int recorded(struct sync_ctx *c, const json_t *pod)
{
    const char *name = kube_obj_name(pod), *created = kube_json_at_str(pod, "metadata", "creationTimestamp");
    size_t i;
    json_t *e;
    json_array_foreach(kube_json_at(c->status, "restarts"), i, e) {
        const char *n = kube_json_at_str(e, "pod");
        const char *t = kube_json_at_str(e, "podCreated");
        if (n && t && name && created && strcmp(n, name) == 0 && strcmp(t, created) == 0)
            return 1;
    }
    return 0;
}

/* "was preempted by the scheduler ... (DisruptionTarget ...)" (any DisruptionTarget: who took
 * it), "was evicted: <message>" or "failed: <message | exit code N (reason)>" into buf. */
static const char *why_lost(struct sync_ctx *c, json_t *p, char *buf, size_t n)
{
    char *dis = kube_pod_disruption_text(p, NULL);
    if (dis) {
        snprintf(buf, n, "was %s", dis);
        free(dis);
        return buf;
    }
    const char *r = kube_json_at_str(p, "status", "reason"), *m = kube_json_at_str(p, "status", "message");
    json_t *cs, *s, *t = NULL;
    size_t i;
    const char *name = mpijob_worker_container(c->j);
    cs = kube_json_at(p, "status", "containerStatuses");
    json_array_foreach(cs, i, s) {
        const char *sn = kube_json_at_str(s, "name");
        if (!t || (name && sn && strcmp(sn, name) == 0))
            t = kube_json_at(s, "state", "terminated");
    }
    if (r && strcmp(r, "Evicted") == 0)
        snprintf(buf, n, "was evicted: %s", m ? m : "no message");
    else if (m || !t)
        snprintf(buf, n, "failed: %s", m ? m : "phase Failed");
    else
        snprintf(buf, n, "failed: exit code %lld (%s)", (long long)kube_json_at_int(t, 0, "exitCode"),
                 kube_json_at_str(t, "reason") ?: "no reason");
    return buf;
}

/* Deletes (unless going already) and records one lost worker; 0 when the budget is spent. */
static int restart_one(struct sync_ctx *c, json_t *p)
{
    const char *created = kube_json_at_str(p, "metadata", "creationTimestamp");
    long long done = kube_json_at_int(c->status, 0, "workerRestarts");
    int known = recorded(c, p);
    if (!known && done >= c->j->worker_restart_limit)
        return 0;
    if (!pod_terminating(p))
        plan_named(c->p, ACT_DELETE, RK_POD, kube_obj_name(p), NULL);
    if (known)
        return 1;
    char why[512], *msg = NULL;
    why_lost(c, p, why, sizeof why);
    if (asprintf(&msg, "worker pod %s %s; deleted to be re-created (worker restart %lld of %lld, runPolicy.backoffLimit)",
                 kube_obj_name(p), why, done + 1, c->j->worker_restart_limit) < 0)
        return 1;
    json_object_set_new(c->status, "workerRestarts", json_integer(done + 1));
    if (restart_record_add(c->status,
                           json_pack("{s:s, s:s, s:s, s:s*, s:s}", "time", c->now, "reason", MPIK8S_FAIL_R_WORKER_LOST,
                                     "pod", kube_obj_name(p), "podCreated", created, "message", msg)) < 0)
        KLOG_WARN("%s/%s: status.restarts: out of memory", c->j->ns, c->j->name);
    plan_event(c->p, "Warning", R_WORKER_RESTARTED, msg);
    /* the run's end itself is recorded once, with the launcher's (launcher_restart.h) */
    char *what = kube_strdup_printf("is restarting: %s", msg);
    if (what)
        sync_ctx_cond(c, COND_RESTARTING, "True", R_RESTARTING, what, NULL);
    free(what);
    free(msg);
    return 1;
}

int worker_restart_recorded(struct sync_ctx *c, const json_t *pod)
{
    return c->j->worker_restart_limit > 0 && recorded(c, pod);
}

int worker_restart_lost(struct sync_ctx *c)
{
    int n = 0;
    if (c->j->worker_restart_limit <= 0 || c->j->suspend || cond_finished(c->status))
        return 0;
    for (long long i = 0; i < c->j->worker.replicas; i++) {
        json_t *p = c->workers[i];
        /* a worker someone deleted (pod_deleted_plainly) is no failure to count, unless it failed
         * before (recorded): the deletion is the cause, which the launcher's record names */
        if (p && strcmp(pod_phase(p), "Failed") == 0 && (!pod_deleted_plainly(p) || recorded(c, p)))
            n += restart_one(c, p);
    }
    return n;
}

int worker_restart_after(struct sync_ctx *c, const json_t *pod)
{
    const char *created = kube_json_at_str(pod, "metadata", "creationTimestamp");
    json_t *list = kube_json_at(c->status, "restarts"), *e;
    size_t i;
    json_array_foreach(list, i, e) {
        const char *t = kube_json_at_str(e, "time");
        if (kube_json_at(e, "pod") && t && created && strcmp(t, created) >= 0)
            return 1;
    }
    return 0;
}

void worker_restart_fill_launcher(struct sync_ctx *c)
{
    const char *msg = kube_json_at_str(c->status, ST_LAUNCHER_FAILURE);
    json_t *list = kube_json_at(c->status, "restarts");
    for (size_t i = 0; msg && i < json_array_size(list); i++) { /* newest first */
        json_t *e = json_array_get(list, i);
        if (kube_json_at(e, "pod"))
            continue; /* a worker's entry */
        const char *m = kube_json_at_str(e, "message");
        if (m && strcmp(m, RESTART_NO_RECORD_YET) == 0) {
            json_object_set_new(e, "message", json_string(msg));
            json_object_set_new(e, "reason", json_string(rank_failure_reason(c->status)));
        }
        return; /* only the newest launcher entry can still be waiting for its record */
    }
}
