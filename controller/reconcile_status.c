/* reconcile_status.c - the MPIJob status from what is observed: replica
 * counts, Succeeded/Failed from the launcher Job (with the agent's termination
 * message), failed or evicted workers, Running, Restarting, and the launch
 * phase timeline (status.launchPhases). */
#include "plan.h"
#include "rank_failure.h"
#include "cond.h"
#include "worker_restart.h"
#include "kube/json.h"
#include "kube/poddisrupt.h"
#include "kube/util.h"
#include "sync_ctx.h"
#include "pod.h"
#include "blocked.h"
#include "restart_record.h"
#include "launcher_restart.h"
#include "reconcile_status.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void set_count(json_t *o, const char *k, long long v)
{
    if (v > 0)
        json_object_set_new(o, k, json_integer(v));
}

static int job_cond(const json_t *job, const char *type, const char **reason, const char **msg)
{
    json_t *cd = kube_json_find(kube_json_at(job, "status", "conditions"), "type", type);
    const char *s = kube_json_at_str(cd, "status");
    if (!s || strcmp(s, "True") != 0)
        return 0;
    if (reason)
        *reason = kube_json_at_str(cd, "reason");
    if (msg)
        *msg = kube_json_at_str(cd, "message");
    return 1;
}

int reconcile_job_finished(const json_t *job)
{
    return job_cond(job, "Complete", NULL, NULL) || job_cond(job, "Failed", NULL, NULL);
}

/* replicaStatuses from the launcher Job and the worker pods. Once the job has finished and
 * the launcher Job is gone (ttlSecondsAfterFinished), the Launcher counts stay as they were. */
static void replica_statuses(struct sync_ctx *c, const json_t *lj)
{
    json_t *l = json_object(), *w = json_object();
    json_t *kept = kube_json_at(c->status, "replicaStatuses", "Launcher");
    if (!lj && cond_finished(c->status) && json_is_object(kept)) {
        json_object_update(l, kept);
    } else {
        set_count(l, "active", c->launchers_running);
        set_count(l, "succeeded", kube_json_at_int(lj, 0, "status", "succeeded"));
        set_count(l, "failed", kube_json_at_int(lj, 0, "status", "failed"));
    }
    long long run = 0, ok = 0, bad = 0;
    for (long long i = 0; i < c->j->worker.replicas; i++) {
        json_t *p = c->workers[i];
        const char *ph = p ? pod_phase(p) : "";
        run += strcmp(ph, "Running") == 0 && !pod_terminating(p);
        ok += strcmp(ph, "Succeeded") == 0;
        bad += strcmp(ph, "Failed") == 0;
    }
    set_count(w, "active", run);
    set_count(w, "succeeded", ok);
    set_count(w, "failed", bad);
    json_object_set_new(c->status, "replicaStatuses", json_pack("{s:o, s:o}", "Launcher", l, "Worker", w));
}

/* The terminated state of the container named name (or the first) in statuses; borrowed. */
static json_t *terminated(json_t *statuses, const char *name)
{
    size_t i;
    json_t *s, *pick = NULL;
    json_array_foreach(statuses, i, s) {
        const char *n = kube_json_at_str(s, "name");
        if (!pick || (name && n && strcmp(n, name) == 0))
            pick = s;
    }
    json_t *t = kube_json_at(pick, "state", "terminated");
    json_t *l = kube_json_at(pick, "lastState", "terminated");
    /* A rerun killed without a record (OnFailure: the kubelet restarted the container, then
     * the Job gave up and killed it: 137, no message) keeps the failed run's reason. */
    if (t && l && !kube_json_at_str(t, "message") && kube_json_at_str(l, "message") &&
        kube_json_at_int(l, 0, "exitCode") != 0)
        return l;
    return t ? t : l;
}

/* pod's termination record: the init container's when it failed, else the main one's
 * (NULL when neither has terminated yet, or only a successful init did). */
static json_t *pod_terminated(struct sync_ctx *c, json_t *pod)
{
    json_t *it = terminated(kube_json_at(pod, "status", "initContainerStatuses"), "mpi-agent-init");
    if (it && kube_json_at_int(it, 0, "exitCode") != 0)
        return it;
    json_t *cs = kube_json_at(c->j->launcher.template, "spec", "containers");
    const char *main = kube_json_at_str(json_array_get(cs, 0), "name");
    if (c->j->main_container)
        main = c->j->main_container;
    return terminated(kube_json_at(pod, "status", "containerStatuses"), main);
}

/* The remembered launcher pod (obs->launcher_seen) when it is no longer cached and belongs to
 * this incarnation of the MPIJob (created after it); borrowed or NULL. */
static json_t *launcher_gone(struct sync_ctx *c)
{
    json_t *g = c->obs->launcher_seen, *p;
    const char *gn = kube_obj_name(g), *gct = kube_json_at_str(g, "metadata", "creationTimestamp");
    const char *jct = kube_json_at_str(c->obs->job, "metadata", "creationTimestamp");
    size_t i;
    if (!gn || (gct && jct && strcmp(gct, jct) < 0))
        return NULL;
    json_array_foreach(c->obs->pods, i, p) {
        if (strcmp(kube_obj_name(p) ?: "", gn) == 0)
            return NULL; /* still cached: the cache's copy is at least as new */
    }
    return g;
}

/* The newest launcher pod's termination record, else the newest record of an earlier attempt
 * (cached, or remembered after the Job deleted the pod); *pod receives the pod it belongs to. */
static json_t *launcher_terminated_pod(struct sync_ctx *c, json_t **pod)
{
    *pod = c->launcher_pod;
    json_t *t = c->launcher_pod ? pod_terminated(c, c->launcher_pod) : NULL;
    if (t)
        return t;
    const char *best = NULL;
    size_t i, n = json_array_size(c->obs->pods);
    json_t *gone = launcher_gone(c);
    for (i = 0; i <= n; i++) {
        json_t *p = i < n ? json_array_get(c->obs->pods, i) : gone, *pt;
        const char *role = kube_json_at_str(p, "metadata", "labels", LBL_T_ROLE);
        const char *ct = kube_json_at_str(p, "metadata", "creationTimestamp");
        if (!p || !role || strcmp(role, "launcher") != 0 || p == c->launcher_pod || !(pt = pod_terminated(c, p)))
            continue;
        if (!best || (ct && strcmp(ct, best) > 0)) {
            best = ct ? ct : "";
            t = pt;
            *pod = p;
        }
    }
    return t;
}

static json_t *launcher_terminated(struct sync_ctx *c)
{
    json_t *pod;
    return launcher_terminated_pod(c, &pod);
}

/* The newest launcher pod (cached, or remembered after the Job deleted it) whose record says
 * it failed (an exit code other than 0), and that record; NULL when none. Not the newest pod's
 * record alone: a quick rerun can start, and even end, before a sync has seen the attempt that
 * failed before it (the real Job controller replaces a launcher within a second; seen with
 * pod_failure_policy's Ignore case, whose rerun ends in a few seconds). */
static json_t *launcher_failed_pod(struct sync_ctx *c, json_t **pod)
{
    json_t *t = NULL, *gone = launcher_gone(c);
    const char *best = NULL;
    size_t n = json_array_size(c->obs->pods);
    *pod = NULL;
    for (size_t i = 0; i <= n; i++) {
        json_t *p = i < n ? json_array_get(c->obs->pods, i) : gone, *pt;
        const char *role = kube_json_at_str(p, "metadata", "labels", LBL_T_ROLE);
        const char *ct = kube_json_at_str(p, "metadata", "creationTimestamp");
        if (!p || !role || strcmp(role, "launcher") != 0 || !(pt = pod_terminated(c, p)) ||
            kube_json_at_int(pt, 0, "exitCode") == 0)
            continue;
        if (!*pod || (ct && best && strcmp(ct, best) >= 0)) {
            best = ct;
            t = pt;
            *pod = p;
        }
    }
    return t;
}

/* "launcher pod P: <agent summary | exit code N (reason)>" from pod's record t, or NULL. */
static char *record_detail(const json_t *pod, const json_t *t) { return restart_record_cause(kube_obj_name(pod), t); }

/* The newest launcher record's detail (record_detail), or NULL. */
static char *launcher_detail(struct sync_ctx *c)
{
    json_t *pod = NULL;
    json_t *t = launcher_terminated_pod(c, &pod);
    return record_detail(pod, t);
}

/* Sets Succeeded or Failed (and its Event); 1 when it changed now. */
static int finish(struct sync_ctx *c, const char *type, const char *reason, const char *what, const char *completion)
{
    const char *ev = strcmp(type, COND_SUCCEEDED) == 0 ? "Normal" : "Warning";
    if (!sync_ctx_cond(c, type, "True", reason, what, ev))
        return 0;
    if (strcmp(type, COND_SUCCEEDED) == 0)
        c->p->succeeded = 1;
    else
        c->p->failed = 1;
    json_object_set_new(c->status, "completionTime", json_string(completion ? completion : c->now));
    return 1;
}

/* Keeps the newest failed launcher record's detail in status.launcherFailure, and its rank in
 * status.rankFailure. The record lives in the launcher pod, which the Job deletes when it gives
 * up; the operator's memory of it (launcher_memory) does not survive a restart, the MPIJob's
 * status does. */
static void remember_launcher_failure(struct sync_ctx *c)
{
    json_t *pod = NULL;
    json_t *t = launcher_failed_pod(c, &pod);
    if (!t)
        return;
    rank_failure_remember(c, t);
    char *detail = record_detail(pod, t);
    const char *kept = kube_json_at_str(c->status, ST_LAUNCHER_FAILURE);
    if (detail && (!kept || strcmp(kept, detail) != 0))
        json_object_set_new(c->status, ST_LAUNCHER_FAILURE, json_string(detail));
    free(detail);
}

/* The launcher's failure detail: from a record still seen, else the one kept in the status. */
static char *launcher_failure_detail(struct sync_ctx *c)
{
    char *detail = launcher_detail(c);
    const char *kept = kube_json_at_str(c->status, ST_LAUNCHER_FAILURE);
    return detail || !kept ? detail : strdup(kept);
}

/* 1 (and a requeue in at most poll_ms asked) while the RFC 3339 time since (a condition's
 * lastTransitionTime) is younger than wait_ms; 0 once older, or when since is missing or bad. */
static int still_waiting(struct sync_ctx *c, const char *since, int64_t wait_ms, int64_t poll_ms)
{
    int64_t at;
    if (kube_time_parse_ms(since, &at) < 0)
        return 0;
    int64_t left = at + wait_ms - c->now_ms;
    if (left <= 0)
        return 0;
    plan_requeue(c->p, left < poll_ms ? left : poll_ms);
    return 1;
}

/* How long after its Job failed the operator waits for the launcher pod's terminated state. */
#define LAUNCHER_RECORD_WAIT_MS 3000

/* 1 (and a requeue asked) while no launcher record is seen yet, the Job failed for its pods'
 * failures or restarts (not its deadline) and its Failed condition is younger than
 * LAUNCHER_RECORD_WAIT_MS. The Job and its pods come on two watches with no order between
 * them: the Job may say Failed before the pod watch has delivered the launcher's last state
 * (the restart or exit that failed it), and a Failed condition is never rewritten, so writing
 * it then would lose the agent's reason for good. */
static int launcher_record_pending(struct sync_ctx *c, const json_t *lj, const char *reason)
{
    if ((reason && strcmp(reason, "DeadlineExceeded") == 0) || launcher_terminated(c))
        return 0;
    json_t *cd = kube_json_find(kube_json_at(lj, "status", "conditions"), "type", "Failed");
    return still_waiting(c, kube_json_at_str(cd, "lastTransitionTime"), LAUNCHER_RECORD_WAIT_MS, 200);
}

static void launcher_failed(struct sync_ctx *c, const json_t *lj, const char *reason, const char *jmsg)
{
    if (launcher_record_pending(c, lj, reason))
        return;
    char *detail = launcher_failure_detail(c);
    char *what = NULL;
    if (asprintf(&what, "has failed: %s%s%s%s%s", reason ? reason : "launcher Job failed", jmsg ? ": " : "",
                 jmsg ? jmsg : "", detail ? "; " : "", detail ? detail : "") >= 0 &&
        finish(c, COND_FAILED, reason ? reason : R_FAILED, what, kube_json_at_str(lj, "status", "completionTime")))
        rank_failure_report(c);
    free(what);
    free(detail);
}

/* The agent's init container ended with AGENT_EXIT_WORKERS_NOT_READY in the newest launcher
 * record: the workers decided the wait (one failed, or the worker timeout was reached). A
 * launcher retry cannot change that (the workers are not re-created by it, and the timeout is
 * the job's bound), so the job fails at once, with the agent's reason. Returns 1 if so. */
static int workers_not_ready(struct sync_ctx *c)
{
    json_t *pod = NULL;
    json_t *t = launcher_terminated_pod(c, &pod);
    json_t *it = pod ? terminated(kube_json_at(pod, "status", "initContainerStatuses"), "mpi-agent-init") : NULL;
    if (!t || t != it || kube_json_at_int(t, 0, "exitCode") != AGENT_EXIT_WORKERS_NOT_READY || worker_restart_after(c, pod))
        return 0; /* after a worker restart: the Job's next launcher waits for the new worker */
    char *detail = launcher_detail(c), *what = NULL;
    if (asprintf(&what, "has failed: the workers did not become ready; %s", detail ? detail : "") >= 0)
        finish(c, COND_FAILED, R_FAILED, what, NULL);
    free(what);
    free(detail);
    return 1;
}

/* How long after a worker's DisruptionTarget condition the operator leaves the job's failure to
 * its launcher, whose agent names the disruption's cause (a preemptor: agent/preemptor.c). */
#define DISRUPTED_WAIT_MS 20000

/* 1 (and a requeue asked) while worker p, taken away by Kubernetes (DisruptionTarget), is
 * younger than DISRUPTED_WAIT_MS in that state and the job has a launcher pod: its agent stops
 * mpirun and reports the worker with the preemptor's name, which the operator's cache does not
 * have. The launcher pod may be terminating meanwhile: since Kubernetes 1.31 a Job is Failed
 * only once its pods are gone (FailureTarget first), and the Job deletes the launcher when it
 * gives up (measured: the operator's own words came 13 s after the condition when it waited
 * only for a running launcher). */
static int disrupted_pending(struct sync_ctx *c, const json_t *p)
{
    const json_t *cd = kube_pod_disruption_cond(p);
    return cd && c->launcher_pod && still_waiting(c, kube_json_at_str(cd, "lastTransitionTime"), DISRUPTED_WAIT_MS, 1000);
}

/* A worker that failed (restartPolicy Never) or was evicted fails the job. Returns 1 if so. */
static int workers_failed(struct sync_ctx *c)
{
    long long evicted = 0, n = c->j->worker.replicas;
    json_t *failed = NULL;
    for (long long i = 0; i < n; i++) {
        json_t *p = c->workers[i];
        if (!p || strcmp(pod_phase(p), "Failed") != 0 || worker_restart_recorded(c, p) || pod_deleted_plainly(p))
            continue; /* a deleted worker: its launcher's run names the deletion (pod.h) */
        if (disrupted_pending(c, p))
            return 1; /* not yet: the launcher's report comes */
        const char *r = kube_json_at_str(p, "status", "reason");
        if (r && strcmp(r, "Evicted") == 0)
            evicted++;
        else if (!failed)
            failed = p;
    }
    char what[512];
    if (evicted) {
        snprintf(what, sizeof what, "MPIJob %s/%s has failed: %lld/%lld workers are evicted", c->j->ns, c->j->name, evicted,
                 n);
        if (finish(c, COND_FAILED, R_EVICTED, what, NULL))
            c->p->fail_reason = MPIK8S_FAIL_R_WORKER_LOST;
        return 1;
    }
    if (!failed)
        return 0;
    json_t *t = terminated(kube_json_at(failed, "status", "containerStatuses"), mpijob_worker_container(c->j));
    const char *why = kube_json_at_str(failed, "status", "message");
    char tmp[384];
    char *dis = kube_pod_disruption_text(failed, NULL); /* preempted, evicted, ...: who took it */
    if (dis) {
        snprintf(tmp, sizeof tmp, "%s", dis);
        why = tmp;
    } else if (!why && t) {
        snprintf(tmp, sizeof tmp, "exit code %lld (%s)", (long long)kube_json_at_int(t, 0, "exitCode"),
                 kube_json_at_str(t, "reason") ?: "no reason");
        why = tmp;
    }
    snprintf(what, sizeof what, "has failed: worker pod %s failed: %s", kube_obj_name(failed), why ? why : "phase Failed");
    free(dis);
    if (finish(c, COND_FAILED, R_FAILED, what, NULL))
        c->p->fail_reason = MPIK8S_FAIL_R_WORKER_LOST;
    return 1;
}

/* Max lastTransitionTime of condition type over all workers when all have it True; -1 otherwise. */
static int64_t all_workers_cond(struct sync_ctx *c, const char *type)
{
    int64_t max = -1;
    for (long long i = 0; i < c->j->worker.replicas; i++) {
        json_t *p = c->workers[i], *conds = kube_json_at(p, "status", "conditions"), *cd;
        int64_t t = -1;
        size_t k;
        json_array_foreach(conds, k, cd) {
            const char *ty = kube_json_at_str(cd, "type");
            const char *st = kube_json_at_str(cd, "status");
            if (ty && st && strcmp(ty, type) == 0 && strcmp(st, "True") == 0 &&
                kube_time_parse_ms(kube_json_at_str(cd, "lastTransitionTime"), &t) < 0)
                t = c->now_ms;
        }
        if (t < 0)
            return -1;
        if (t > max)
            max = t;
    }
    return max;
}

static void phase_set(struct sync_ctx *c, json_t *ph, const char *key, int64_t ms, const char *s, int over)
{
    if (!over && json_object_get(ph, key))
        return;
    char buf[40];
    if (!s)
        s = kube_time_format_ms(ms, buf, sizeof buf);
    json_t *old = json_object_get(ph, key);
    if (old && strcmp(json_string_value(old) ?: "", s) == 0)
        return;
    json_object_set_new(ph, key, json_string(s));
    int64_t created, at;
    if (old || kube_time_parse_ms(kube_json_at_str(c->obs->job, "metadata", "creationTimestamp"), &created) < 0 ||
        kube_time_parse_ms(s, &at) < 0)
        return;
    if (!c->p->new_phases)
        c->p->new_phases = json_object();
    json_object_set_new(c->p->new_phases, key, json_real((double)(at - created) / 1000.0));
}

static void launch_phases(struct sync_ctx *c)
{
    json_t *ph = json_deep_copy(kube_json_at(c->status, "launchPhases"));
    if (!json_is_object(ph)) {
        json_decref(ph);
        ph = json_object();
    }
    const char *created = kube_json_at_str(c->obs->job, "metadata", "creationTimestamp");
    if (created)
        phase_set(c, ph, "created", 0, created, 0);
    int64_t t;
    if (c->j->worker.replicas > 0 && (t = all_workers_cond(c, "PodScheduled")) >= 0)
        phase_set(c, ph, "workersScheduled", t, NULL, 0);
    if (c->j->worker.replicas > 0 && (t = all_workers_cond(c, "Ready")) >= 0)
        phase_set(c, ph, "workersReady", t, NULL, 0);
    const char *ls = kube_json_at_str(c->launcher_pod, "status", "startTime");
    if (ls)
        phase_set(c, ph, "launcherStarted", 0, ls, 0);
    json_t *term = launcher_terminated(c);
    char *summary = NULL;
    json_t *agent = NULL;
    if (term && mpik8s_termination_parse(kube_json_at_str(term, "message"), &summary, &agent) == 0 && agent) {
        const char *k;
        json_t *v;
        json_object_foreach(agent, k, v) {
            if (json_is_string(v))
                phase_set(c, ph, strcmp(k, MPIK8S_PHASE_WORKERS_READY) == 0 ? "agentWorkersReady" : k, 0,
                          json_string_value(v), 1);
        }
    }
    free(summary);
    json_decref(agent);
    json_object_set_new(c->status, "launchPhases", ph);
}

/* Running once the launcher pod and every worker run; after a restart (recorded now, or
 * Restarting still True) only in a later sync, once the launcher is Ready again (its container
 * runs, not in its crash back-off). */
static void running_or_restarting(struct sync_ctx *c, const json_t *lj, int restarted)
{
    long long running = 0;
    for (long long i = 0; i < c->j->worker.replicas; i++)
        running += c->workers[i] && !pod_terminating(c->workers[i]) && strcmp(pod_phase(c->workers[i]), "Running") == 0;
    if (restarted || c->launchers_running == 0 || running < c->j->worker.replicas ||
        (cond_true(c->status, COND_RESTARTING) && !pod_ready(c->launcher_pod)))
        return;
    char *what = launcher_restart_running(c, lj);
    /* the launch latency once: not again when Running returns after a restart */
    if (what && sync_ctx_cond(c, COND_RUNNING, "True", R_RUNNING, what, "Normal") &&
        !cond_get(c->obs->job ? kube_json_at(c->obs->job, "status") : NULL, COND_RUNNING) &&
        !kube_json_at_int(c->status, 0, "restartCount")) {
        int64_t created;
        if (kube_time_parse_ms(kube_json_at_str(c->obs->job, "metadata", "creationTimestamp"), &created) == 0)
            c->p->launch_latency_s = (double)(c->now_ms - created) / 1000.0;
    }
    free(what);
}

void reconcile_status(struct sync_ctx *c)
{
    const json_t *lj = c->obs->launcher_job;
    if (lj && !objects_owned_by(lj, c->j))
        lj = NULL;
    replica_statuses(c, lj);
    if (c->launcher_pod)
        c->p->launcher_pod = strdup(kube_obj_name(c->launcher_pod));
    launch_phases(c);
    if (cond_finished(c->status))
        return;
    const char *reason = NULL, *msg = NULL;
    remember_launcher_failure(c);
    worker_restart_fill_launcher(c);
    worker_restart_lost(c);
    if (workers_not_ready(c))
        return;
    /* every launcher run that ended early and was retried is a restart (launcher_restart.h), also
     * when the next run has finished by the time we look: before Succeeded, which keeps it; the
     * failure that failed the Job was not retried */
    int restarted = c->j->suspend || (lj && job_cond(lj, "Failed", NULL, NULL))
                        ? 0
                        : launcher_restart_new_pod(c, lj) + launcher_restart_in_place(c, lj);
    if (lj && job_cond(lj, "Complete", NULL, NULL)) {
        finish(c, COND_SUCCEEDED, R_SUCCEEDED, "successfully completed.", kube_json_at_str(lj, "status", "completionTime"));
        return;
    }
    if (lj && job_cond(lj, "Failed", &reason, &msg)) {
        launcher_failed(c, lj, reason, msg);
        return;
    }
    if (c->j->suspend || workers_failed(c))
        return;
    char *blocked_fail = blocked_update(c);
    if (blocked_fail) {
        finish(c, COND_FAILED, R_FAILED, blocked_fail, NULL);
        free(blocked_fail);
        return;
    }
    running_or_restarting(c, lj, restarted);
}
