/* reconcile_status.c - the MPIJob status from what is observed: replica
 * counts, Succeeded/Failed from the launcher Job (with the agent's termination
 * message), failed or evicted workers, Running, Restarting, and the launch
 * phase timeline (status.launchPhases). */
#include "plan_int.h"
#include "status.h"
#include "kube/json.h"
#include "kube/util.h"

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
    const char *s = json_string_value(json_object_get(cd, "status"));
    if (!s || strcmp(s, "True") != 0)
        return 0;
    if (reason)
        *reason = json_string_value(json_object_get(cd, "reason"));
    if (msg)
        *msg = json_string_value(json_object_get(cd, "message"));
    return 1;
}

int job_finished(const json_t *job) { return job_cond(job, "Complete", NULL, NULL) || job_cond(job, "Failed", NULL, NULL); }

static void replica_statuses(struct sync_ctx *c, const json_t *lj)
{
    json_t *l = json_object(), *w = json_object();
    set_count(l, "active", c->launchers_running);
    set_count(l, "succeeded", json_integer_value(kube_json_at(lj, "status", "succeeded")));
    set_count(l, "failed", json_integer_value(kube_json_at(lj, "status", "failed")));
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
        const char *n = json_string_value(json_object_get(s, "name"));
        if (!pick || (name && n && strcmp(n, name) == 0))
            pick = s;
    }
    json_t *t = kube_json_at(pick, "state", "terminated");
    return t ? t : kube_json_at(pick, "lastState", "terminated");
}

/* pod's termination record: the init container's when it failed, else the main one's
 * (NULL when neither has terminated yet, or only a successful init did). */
static json_t *pod_terminated(struct sync_ctx *c, json_t *pod)
{
    json_t *it = terminated(kube_json_at(pod, "status", "initContainerStatuses"), "mpi-agent-init");
    if (it && json_integer_value(json_object_get(it, "exitCode")) != 0)
        return it;
    json_t *cs = json_object_get(json_object_get(c->j->launcher.template, "spec"), "containers");
    const char *main = json_string_value(json_object_get(json_array_get(cs, 0), "name"));
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
        const char *role = json_string_value(kube_json_at(p, "metadata", "labels", LBL_T_ROLE));
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

/* "launcher pod P: <agent summary | exit code N (reason)>" or NULL. */
static char *launcher_detail(struct sync_ctx *c)
{
    json_t *pod = NULL;
    json_t *t = launcher_terminated_pod(c, &pod);
    if (!t)
        return NULL;
    char *summary = NULL, *out = NULL;
    json_t *ph = NULL;
    mpik8s_termination_parse(json_string_value(json_object_get(t, "message")), &summary, &ph);
    json_decref(ph);
    int rc;
    if (summary && *summary)
        rc = asprintf(&out, "launcher pod %s: %s", kube_obj_name(pod), summary);
    else
        rc = asprintf(&out, "launcher pod %s: exit code %lld (%s)", kube_obj_name(pod),
                      (long long)json_integer_value(json_object_get(t, "exitCode")),
                      json_string_value(json_object_get(t, "reason")) ?: "no reason");
    free(summary);
    return rc < 0 ? NULL : out;
}

static void finish(struct sync_ctx *c, const char *type, const char *reason, const char *what, const char *completion)
{
    const char *ev = strcmp(type, COND_SUCCEEDED) == 0 ? "Normal" : "Warning";
    if (!ctx_cond(c, type, "True", reason, what, ev))
        return;
    if (strcmp(type, COND_SUCCEEDED) == 0)
        c->p->succeeded = 1;
    else
        c->p->failed = 1;
    json_object_set_new(c->status, "completionTime", json_string(completion ? completion : c->now));
}

/* Keeps the newest failed launcher record's detail in status.launcherFailure. The record
 * lives in the launcher pod, which the Job deletes when it gives up; the operator's memory
 * of it (launcher_memory) does not survive a restart, the MPIJob's status does. */
static void remember_launcher_failure(struct sync_ctx *c)
{
    json_t *pod = NULL;
    json_t *t = launcher_terminated_pod(c, &pod);
    if (!t || json_integer_value(json_object_get(t, "exitCode")) == 0)
        return;
    char *detail = launcher_detail(c);
    const char *kept = json_string_value(json_object_get(c->status, ST_LAUNCHER_FAILURE));
    if (detail && (!kept || strcmp(kept, detail) != 0))
        json_object_set_new(c->status, ST_LAUNCHER_FAILURE, json_string(detail));
    free(detail);
}

/* The launcher's failure detail: from a record still seen, else the one kept in the status. */
static char *launcher_failure_detail(struct sync_ctx *c)
{
    char *detail = launcher_detail(c);
    const char *kept = json_string_value(json_object_get(c->status, ST_LAUNCHER_FAILURE));
    return detail || !kept ? detail : strdup(kept);
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
    int64_t at;
    if (kube_time_parse_ms(json_string_value(json_object_get(cd, "lastTransitionTime")), &at) < 0)
        return 0;
    int64_t left = at + LAUNCHER_RECORD_WAIT_MS - c->now_ms;
    if (left <= 0)
        return 0;
    plan_requeue(c->p, left < 200 ? left : 200);
    return 1;
}

static void launcher_failed(struct sync_ctx *c, const json_t *lj, const char *reason, const char *jmsg)
{
    if (launcher_record_pending(c, lj, reason))
        return;
    char *detail = launcher_failure_detail(c);
    char *what = NULL;
    if (asprintf(&what, "has failed: %s%s%s%s%s", reason ? reason : "launcher Job failed", jmsg ? ": " : "",
                 jmsg ? jmsg : "", detail ? "; " : "", detail ? detail : "") >= 0)
        finish(c, COND_FAILED, reason ? reason : R_FAILED, what,
               json_string_value(kube_json_at(lj, "status", "completionTime")));
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
    if (!t || t != it || json_integer_value(json_object_get(t, "exitCode")) != AGENT_EXIT_WORKERS_NOT_READY)
        return 0;
    char *detail = launcher_detail(c), *what = NULL;
    if (asprintf(&what, "has failed: the workers did not become ready; %s", detail ? detail : "") >= 0)
        finish(c, COND_FAILED, R_FAILED, what, NULL);
    free(what);
    free(detail);
    return 1;
}

/* A worker that failed (restartPolicy Never) or was evicted fails the job. Returns 1 if so. */
static int workers_failed(struct sync_ctx *c)
{
    long long evicted = 0, n = c->j->worker.replicas;
    json_t *failed = NULL;
    for (long long i = 0; i < n; i++) {
        json_t *p = c->workers[i];
        if (!p || strcmp(pod_phase(p), "Failed") != 0)
            continue;
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
        finish(c, COND_FAILED, R_EVICTED, what, NULL);
        return 1;
    }
    if (!failed)
        return 0;
    json_t *t = terminated(kube_json_at(failed, "status", "containerStatuses"), mpijob_worker_container(c->j));
    const char *why = kube_json_at_str(failed, "status", "message");
    char tmp[128];
    if (!why && t) {
        snprintf(tmp, sizeof tmp, "exit code %lld (%s)", (long long)json_integer_value(json_object_get(t, "exitCode")),
                 json_string_value(json_object_get(t, "reason")) ?: "no reason");
        why = tmp;
    }
    snprintf(what, sizeof what, "has failed: worker pod %s failed: %s", kube_obj_name(failed), why ? why : "phase Failed");
    finish(c, COND_FAILED, R_FAILED, what, NULL);
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
            const char *ty = json_string_value(json_object_get(cd, "type"));
            const char *st = json_string_value(json_object_get(cd, "status"));
            if (ty && st && strcmp(ty, type) == 0 && strcmp(st, "True") == 0 &&
                kube_time_parse_ms(json_string_value(json_object_get(cd, "lastTransitionTime")), &t) < 0)
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
    json_t *ph = json_deep_copy(json_object_get(c->status, "launchPhases"));
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
    if (term && mpik8s_termination_parse(json_string_value(json_object_get(term, "message")), &summary, &agent) == 0 &&
        agent) {
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

static void running_or_restarting(struct sync_ctx *c, const json_t *lj)
{
    /* every new launcher failure the Job retries is a restart, even when the next
     * launcher pod is already running by the time we look */
    long long was = json_integer_value(kube_json_at(c->obs->job, "status", "replicaStatuses", "Launcher", "failed"));
    long long now = json_integer_value(kube_json_at(lj, "status", "failed"));
    if (now > was && ctx_cond(c, COND_RESTARTING, "True", R_RESTARTING, "is restarting.", "Warning"))
        c->p->restarted = 1;
    long long running = 0;
    for (long long i = 0; i < c->j->worker.replicas; i++)
        running += c->workers[i] && !pod_terminating(c->workers[i]) && strcmp(pod_phase(c->workers[i]), "Running") == 0;
    if (c->launchers_running > 0 && running == c->j->worker.replicas &&
        ctx_cond(c, COND_RUNNING, "True", R_RUNNING, "is running.", "Normal") &&
        !cond_get(c->obs->job ? json_object_get(c->obs->job, "status") : NULL, COND_RUNNING)) {
        int64_t created;
        if (kube_time_parse_ms(kube_json_at_str(c->obs->job, "metadata", "creationTimestamp"), &created) == 0)
            c->p->launch_latency_s = (double)(c->now_ms - created) / 1000.0;
    }
}

void status_from_observed(struct sync_ctx *c)
{
    const json_t *lj = c->obs->launcher_job;
    if (lj && !obj_owned_by(lj, c->j))
        lj = NULL;
    replica_statuses(c, lj);
    if (c->launcher_pod)
        c->p->launcher_pod = strdup(kube_obj_name(c->launcher_pod));
    launch_phases(c);
    if (status_finished(c->status))
        return;
    const char *reason = NULL, *msg = NULL;
    remember_launcher_failure(c);
    if (workers_not_ready(c))
        return;
    if (lj && job_cond(lj, "Complete", NULL, NULL)) {
        finish(c, COND_SUCCEEDED, R_SUCCEEDED, "successfully completed.",
               json_string_value(kube_json_at(lj, "status", "completionTime")));
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
    running_or_restarting(c, lj);
}
