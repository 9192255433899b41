/* blocked.c - why an MPIJob's pods are not starting, shown in the MPIJob itself: the
 * first blocked pod (the launcher, then the workers by index) and Kubernetes' reason
 * (Unschedulable with the scheduler's message, ImagePullBackOff, CreateContainerConfigError,
 * ...) become the condition Blocked and a Warning Event, written only when the pod or the
 * reason changes (never per pod event). A launcher blocked on itself for the job's worker
 * timeout fails the job with its reason (the agent inside it cannot enforce that bound). */
#include "plan.h"
#include "cond.h"
#include "kube/json.h"
#include "kube/podstuck.h"
#include "kube/util.h"
#include "sync_ctx.h"
#include "pod.h"
#include "blocked.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One blocked pod: which, Kubernetes' reason, and the one-line detail (owned). */
struct blocked {
    const char *role; /* "launcher" or "worker" */
    const char *pod;
    const char *reason;
    char *detail;
};

/* The first (init) container waiting for a blocking reason, as
 * "container C: reason: message" (the image named when the message does not). */
static char *container_block(const json_t *pod, const char **reason)
{
    static const char *const lists[] = { "initContainerStatuses", "containerStatuses", NULL };
    for (int l = 0; lists[l]; l++) {
        size_t i;
        json_t *cs;
        json_array_foreach(kube_json_at(pod, "status", lists[l]), i, cs) {
            const char *r = kube_json_at_str(cs, "state", "waiting", "reason");
            if (!(kube_wait_class(r) & KUBE_WAIT_BLOCKED)) /* lib/podstuck.c, the agent's wait alike */
                continue;
            const char *m = kube_json_at_str(cs, "state", "waiting", "message");
            const char *img = kube_json_at_str(cs, "image");
            int name_img = img && *img && (!m || !strstr(m, img));
            /* ErrImagePull and ImagePullBackOff alternate on every retry: one reason for both */
            *reason = strcmp(r, "ErrImagePull") == 0 ? "ImagePullBackOff" : r;
            char *out = NULL;
            if (asprintf(&out, "%scontainer %s: %s%s%s%s%s%s", l == 0 ? "init " : "", kube_json_at_str(cs, "name") ?: "?", r,
                         m ? ": " : "", m ? m : "", name_img ? " (image \"" : "", name_img ? img : "",
                         name_img ? "\")" : "") < 0)
                return NULL;
            return out;
        }
    }
    return NULL;
}

/* Fills b when pod is blocked (pending and unschedulable, or a container cannot start). */
static int pod_blocked(const json_t *pod, const char *role, struct blocked *b)
{
    if (!pod || pod_terminating(pod) || strcmp(pod_phase(pod), "Pending") != 0)
        return 0;
    const char *reason = NULL;
    char *d = kube_pod_unschedulable(pod, &reason);
    if (!d)
        d = container_block(pod, &reason);
    if (!d)
        return 0;
    *b = (struct blocked){ .role = role, .pod = kube_obj_name(pod), .reason = reason, .detail = d };
    return b->pod != NULL;
}

/* The first blocked pod: the launcher, then the workers by index. */
static int first_blocked(struct sync_ctx *c, struct blocked *b)
{
    if (pod_blocked(c->launcher_pod, "launcher", b))
        return 1;
    free(b->detail);
    b->detail = NULL;
    for (long long i = 0; i < c->j->worker.replicas; i++) {
        if (pod_blocked(c->workers[i], "worker", b))
            return 1;
        free(b->detail);
        b->detail = NULL;
    }
    return 0;
}

/* 1 when the condition cur is about pod (its message names "<role> pod <pod>: "). */
static int cond_names_pod(const json_t *cur, const struct blocked *b)
{
    const char *m = kube_json_at_str(cur, "message");
    char needle[320];
    snprintf(needle, sizeof needle, " %s pod %s: ", b->role, b->pod);
    return m && strstr(m, needle) != NULL;
}

/* Puts cond in status.conditions in place of the old Blocked (first when new, so that the
 * State column, the last condition, keeps showing the job's phase). */
static void cond_put(json_t *status, json_t *cond)
{
    json_t *conds = kube_json_at(status, "conditions"), *cd;
    size_t i;
    if (!json_is_array(conds)) {
        conds = json_array();
        json_object_set_new(status, "conditions", conds);
    }
    json_array_foreach(conds, i, cd) {
        const char *t = kube_json_at_str(cd, "type");
        if (t && strcmp(t, COND_BLOCKED) == 0) {
            json_array_set_new(conds, i, cond);
            return;
        }
    }
    json_array_insert_new(conds, 0, cond);
}

static void blocked_set(struct sync_ctx *c, const char *st, const char *reason, const char *msg, const char *ltt,
                        const char *ev_type)
{
    cond_put(c->status, json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "type", COND_BLOCKED, "status", st, "reason", reason,
                                  "message", msg, "lastUpdateTime", c->now, "lastTransitionTime", ltt));
    plan_event(c->p, ev_type, reason, msg);
}

/* The launcher has been blocked on itself since ltt: past the worker timeout, "has failed: ..."
 * (new string) to fail the job with; else a requeue at the bound and NULL. */
static char *launcher_bound(struct sync_ctx *c, const struct blocked *b, const char *ltt)
{
    int64_t since;
    if (strcmp(b->role, "launcher") != 0 || kube_time_parse_ms(ltt, &since) < 0)
        return NULL;
    int64_t due = since + c->j->agent_timeout_s * 1000;
    if (due > c->now_ms) {
        plan_requeue(c->p, due - c->now_ms);
        return NULL;
    }
    char *what = NULL;
    if (asprintf(&what, "has failed: launcher pod %s could not start within %llds (%s): %s", b->pod, c->j->agent_timeout_s,
                 MPIK8S_ANN_AGENT_TIMEOUT, b->detail) < 0)
        return NULL;
    return what;
}

char *blocked_update(struct sync_ctx *c)
{
    struct blocked b = { 0 };
    json_t *cur = cond_get(c->status, COND_BLOCKED);
    const char *cst = kube_json_at_str(cur, "status");
    int was = cst && strcmp(cst, "True") == 0;
    if (!first_blocked(c, &b)) {
        char *msg = was ? cond_msg(c->j->ns, c->j->name, "is no longer blocked.") : NULL;
        if (msg)
            blocked_set(c, "False", R_UNBLOCKED, msg, c->now, "Normal");
        free(msg);
        return NULL;
    }
    int same_pod = was && cond_names_pod(cur, &b);
    const char *ltt = same_pod ? kube_json_at_str(cur, "lastTransitionTime") : NULL;
    if (!ltt)
        ltt = c->now;
    const char *cr = kube_json_at_str(cur, "reason");
    if (!same_pod || !cr || strcmp(cr, b.reason) != 0) {
        char *msg = NULL;
        if (asprintf(&msg, "MPIJob %s/%s is blocked: %s pod %s: %s", c->j->ns, c->j->name, b.role, b.pod, b.detail) >= 0) {
            blocked_set(c, "True", b.reason, msg, ltt, "Warning");
            ltt = kube_json_at_str(cond_get(c->status, COND_BLOCKED), "lastTransitionTime");
        }
        free(msg);
    }
    char *fail = launcher_bound(c, &b, ltt);
    free(b.detail);
    return fail;
}
