/* launcher_restart.c - every early end of a launcher run the launcher Job retries
 * (a container restarted in place, or a new pod after a failed or deleted one) in
 * the MPIJob's status, conditions, Events and metrics, each recorded once. */
#include "launcher_restart.h"
#include "restart_record.h"
#include "rank_failure.h"
#include "cond.h"
#include "plan.h"
#include "pod.h"
#include "sync_ctx.h"
#include "kube/json.h"
#include "kube/util.h"

#include <stdlib.h>
#include <string.h>

/* The launcher Job's backoffLimit (the Job's default 6 when the MPIJob gives none). */
static long long backoff_limit(const struct sync_ctx *c)
{
    return c->j->backoff_limit == MPIJOB_UNSET ? 6 : c->j->backoff_limit;
}

static int is_launcher(const json_t *pod)
{
    const char *role = kube_json_at_str(pod, "metadata", "labels", LBL_T_ROLE);
    return role && strcmp(role, "launcher") == 0;
}

/* The Job's count against its backoffLimit: its failed pods and the container restarts of
 * its live pods (as pkg/controller/job counts them under OnFailure). */
static long long budget_used(const struct sync_ctx *c, const json_t *lj)
{
    long long used = kube_json_at_int(lj, 0, "status", "failed");
    size_t i, k;
    json_t *p, *s;
    json_array_foreach(c->obs->pods, i, p) {
        const char *ph = pod_phase(p);
        if (!is_launcher(p) || pod_terminating(p) || strcmp(ph, "Succeeded") == 0 || strcmp(ph, "Failed") == 0)
            continue;
        json_array_foreach(kube_json_at(p, "status", "initContainerStatuses"), k, s)
            used += kube_json_at_int(s, 0, "restartCount");
        json_array_foreach(kube_json_at(p, "status", "containerStatuses"), k, s)
            used += kube_json_at_int(s, 0, "restartCount");
    }
    return used;
}

/* Sets Restarting=True with msg, rewording a Restarting that is True already; 1 when the
 * condition changed (set now, or reworded to another message), 0 when it said msg already. */
static int set_restarting(struct sync_ctx *c, const char *msg)
{
    if (cond_set(c->status, COND_RESTARTING, "True", R_RESTARTING, msg, c->now))
        return 1;
    if (!cond_true(c->status, COND_RESTARTING) || cond_true(c->status, COND_FAILED))
        return 0;
    const char *was = kube_json_at_str(cond_get(c->status, COND_RESTARTING), "message");
    if (was && strcmp(was, msg) == 0)
        return 0;
    cond_reword(c->status, COND_RESTARTING, msg, c->now);
    return 1;
}

void launcher_restart_record(struct sync_ctx *c, const json_t *lj, const char *key, const char *reason, const char *cause)
{
    long long used = budget_used(c, lj), limit = backoff_limit(c);
    long long count = kube_json_at_int(c->status, 0, "restartCount") + 1;
    if (restart_record_add(c->status, json_pack("{s:s, s:s, s:s, s:s*}", "time", c->now, "reason", reason, "message", cause,
                                                RESTART_KEY, key)) < 0)
        return;
    json_object_set_new(c->status, "restartCount", json_integer(count));
    json_object_set_new(c->status, ST_RETRIES_LEFT, json_integer(used < limit ? limit - used : 0));
    char *what = restart_record_message(used + 1, limit + 1, cause);
    char *msg = what ? cond_msg(c->j->ns, c->j->name, what) : NULL;
    /* the Event goes with the condition's change: a record made again because the status lost
     * it (a CRD whose schema prunes status.restarts, as upstream's) finds Restarting saying the
     * same already, in this process or after a restart, and is not reported twice */
    if (msg && set_restarting(c, msg))
        plan_event(c->p, "Warning", R_RESTARTING, msg);
    plan_restart(c->p, reason);
    free(msg);
    free(what);
}

char *launcher_restart_running(const struct sync_ctx *c, const json_t *lj)
{
    if (kube_json_at_int(c->status, 0, "restartCount") <= 0)
        return strdup("is running.");
    return kube_strdup_printf("is running (run %lld of %lld).", budget_used(c, lj) + 1, backoff_limit(c) + 1);
}

/* pod's main container status (the v1alpha2 mainContainer, else the template's first). */
static json_t *main_status(const struct sync_ctx *c, const json_t *pod)
{
    json_t *cs = kube_json_at(c->j->launcher.template, "spec", "containers"), *s, *pick = NULL;
    const char *main = c->j->main_container ? c->j->main_container : kube_json_at_str(json_array_get(cs, 0), "name");
    size_t i;
    json_array_foreach(kube_json_at(pod, "status", "containerStatuses"), i, s) {
        const char *n = kube_json_at_str(s, "name");
        if (!pick || (main && n && strcmp(n, main) == 0))
            pick = s;
    }
    return pick;
}

/* The failure metric's reason of a terminated state t (its failure line), "unknown" without. */
static const char *reason_of(const json_t *t)
{
    json_t *f = mpik8s_termination_failure(kube_json_at_str(t, "message"));
    const char *r = rank_failure_reason_of(f);
    json_decref(f);
    return r;
}

/* Records restart n of the container that name stands for (its record t when it is the newest),
 * unless recorded: name is the pod's for its main container, "POD (init container C)" for an
 * init container (a name no pod has, so their keys never meet). */
static int in_place_one(struct sync_ctx *c, const json_t *lj, const json_t *pod, const char *name, long long n,
                        const json_t *t)
{
    char *key = restart_record_key(name, kube_json_at_str(pod, "metadata", "creationTimestamp"), n);
    if (!key || restart_record_seen(c->status, key)) {
        free(key);
        return 0;
    }
    char *cause = t ? restart_record_cause(name, t)
                    : kube_strdup_printf("launcher pod %s: restarted again before its record was read", name);
    launcher_restart_record(c, lj, key, t ? reason_of(t) : MPIK8S_FAIL_R_UNKNOWN,
                            cause ? cause : "the launcher container restarted");
    free(cause);
    free(key);
    return 1;
}

/* Records the restarts of one container of pod (status s) not recorded yet. */
static int in_place_container(struct sync_ctx *c, const json_t *lj, const json_t *p, const char *name, const json_t *s)
{
    int done = 0;
    long long n = kube_json_at_int(s, 0, "restartCount");
    const char *created = kube_json_at_str(p, "metadata", "creationTimestamp");
    long long from = n > 0 ? restart_record_last(c->status, name, created) + 1 : 1;
    for (long long k = from; k <= n; k++) /* older ones missed between two syncs: no record left */
        done += in_place_one(c, lj, p, name, k, k == n ? kube_json_at(s, "lastState", "terminated") : NULL);
    return done;
}

int launcher_restart_in_place(struct sync_ctx *c, const json_t *lj)
{
    int done = 0;
    size_t i, k;
    json_t *p, *s;
    json_array_foreach(c->obs->pods, i, p) {
        if (!is_launcher(p))
            continue;
        /* the init containers (mpi-agent init, the template's own) rerun in place too (OnFailure) */
        json_array_foreach(kube_json_at(p, "status", "initContainerStatuses"), k, s) {
            if (kube_json_at_int(s, 0, "restartCount") <= 0)
                continue;
            char *name = kube_strdup_printf("%s (init container %s)", kube_obj_name(p), kube_json_at_str(s, "name") ?: "?");
            if (name)
                done += in_place_container(c, lj, p, name, s);
            free(name);
        }
        done += in_place_container(c, lj, p, kube_obj_name(p), main_status(c, p));
    }
    return done;
}

/* The newest launcher pod (cached or remembered) that ended: being deleted, or Failed; NULL. */
static const json_t *ended_pod(const struct sync_ctx *c)
{
    const json_t *best = NULL;
    const char *bt = NULL;
    size_t n = json_array_size(c->obs->pods);
    for (size_t i = 0; i <= n; i++) {
        const json_t *p = i < n ? json_array_get(c->obs->pods, i) : c->obs->launcher_seen;
        const char *ct = kube_json_at_str(p, "metadata", "creationTimestamp");
        if (!p || !is_launcher(p) || (!pod_terminating(p) && strcmp(pod_phase(p), "Failed") != 0))
            continue;
        if (!best || (ct && bt && strcmp(ct, bt) > 0)) {
            best = p;
            bt = ct;
        }
    }
    return best;
}

int launcher_restart_new_pod(struct sync_ctx *c, const json_t *lj)
{
    long long was = kube_json_at_int(c->obs->job, 0, "status", "replicaStatuses", "Launcher", "failed");
    if (kube_json_at_int(lj, 0, "status", "failed") <= was)
        return 0;
    const json_t *p = ended_pod(c);
    char *key = p ? restart_record_key(kube_obj_name(p), kube_json_at_str(p, "metadata", "creationTimestamp"), 0) : NULL;
    if (key && restart_record_seen(c->status, key)) {
        free(key); /* an earlier pod, recorded: the one the Job counted now is not seen yet */
        key = NULL;
        p = NULL;
    }
    json_t *s = p ? main_status(c, p) : NULL, *t = kube_json_at(s, "state", "terminated");
    char *rec = restart_record_cause(kube_obj_name(p), t), *cause = NULL;
    if (p && pod_terminating(p))
        cause = kube_strdup_printf("launcher pod %s deleted%s%s", kube_obj_name(p), rec ? "; " : "", rec ? rec : "");
    const char *kept = kube_json_at_str(c->status, ST_LAUNCHER_FAILURE);
    const char *why = cause ? cause : rec ? rec : kept ? kept : RESTART_NO_RECORD_YET;
    launcher_restart_record(c, lj, key, t ? reason_of(t) : rank_failure_reason(c->status), why);
    free(cause);
    free(rec);
    free(key);
    return 1;
}
