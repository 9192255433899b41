/* podstate.c - turns a pod object into a verdict (ready / pending / failed /
 * missing) and a one-line reason taken from the fields Kubernetes fills:
 * status.phase and reason, the PodScheduled, Ready and DisruptionTarget
 * conditions, and each (init) container's waiting/terminated state and restart
 * count. */
#include "podstate.h"

#include <stdlib.h>
#include <string.h>

#include "kube/json.h"
#include "kube/poddisrupt.h"
#include "kube/podstuck.h"
#include "kube/util.h"

/* Returns the condition of type t in status.conditions, or NULL. */
static const json_t *find_condition(const json_t *pod, const char *t)
{
    return kube_json_find(kube_json_at(pod, "status", "conditions"), "type", t);
}

static const char *str_or(const char *s, const char *d) { return s && *s ? s : d; }

/* Describes one container status that is not running well; NULL when nothing to say.
 * *fatal is set when the state means the pod will not recover by itself. */
static char *describe_container(const json_t *cs, int init, int *fatal)
{
    const char *name = str_or(kube_json_at_str(cs, "name"), "?");
    const char *what = init ? "init container" : "container";
    const char *wr = kube_json_at_str(cs, "state", "waiting", "reason");
    const char *wm = kube_json_at_str(cs, "state", "waiting", "message");
    long long restarts = kube_json_at_int(cs, 0, "restartCount");
    if (wr) {
        unsigned cls = kube_wait_class(wr); /* lib/podstuck.c, the operator's Blocked alike */
        if (cls & KUBE_WAIT_FATAL)
            *fatal = 1;
        if (cls & KUBE_WAIT_STARTING)
            return NULL;
        if (strcmp(wr, "CrashLoopBackOff") == 0) {
            long long code = kube_json_at_int(cs, -1, "lastState", "terminated", "exitCode");
            return kube_strdup_printf("%s %s: CrashLoopBackOff (restarted %lld times, last exit "
                                      "code %lld)",
                                      what, name, restarts, code);
        }
        return wm ? kube_strdup_printf("%s %s: %s: %s", what, name, wr, wm)
                  : kube_strdup_printf("%s %s: %s", what, name, wr);
    }
    const json_t *term = kube_json_at(cs, "state", "terminated");
    if (term) {
        long long code = kube_json_at_int(term, -1, "exitCode");
        if (init && code == 0)
            return NULL;
        const char *tr = str_or(kube_json_at_str(term, "reason"), "Terminated");
        if (init)
            *fatal = 1;
        return kube_strdup_printf("%s %s %s: %s, exit code %lld", what, name, init ? "failed" : "terminated", tr, code);
    }
    if (restarts >= AGENT_RESTART_LOOP_COUNT && !init) {
        *fatal = 1;
        return kube_strdup_printf("%s %s is restarting in a loop (%lld restarts)", what, name, restarts);
    }
    return NULL;
}

/* Returns the first problem among the (init) container statuses, or NULL. */
static char *container_problem(const json_t *pod, int *fatal, int *restarts)
{
    static const char *const lists[2] = { "initContainerStatuses", "containerStatuses" };
    char *first = NULL;
    for (int l = 0; l < 2; l++) {
        size_t i;
        const json_t *cs;
        json_array_foreach(kube_json_at(pod, "status", lists[l]), i, cs) {
            *restarts += (int)kube_json_at_int(cs, 0, "restartCount");
            int f = 0;
            char *d = describe_container(cs, l == 0, &f);
            if (d && (!first || (f && !*fatal))) {
                free(first);
                first = d;
                *fatal |= f;
            } else {
                free(d);
            }
        }
    }
    return first;
}

/* Reason for a pod in phase Failed/Succeeded/Unknown (a final or lost state). */
static char *final_reason(const json_t *pod, const char *phase, const char *cproblem)
{
    const char *r = kube_json_at_str(pod, "status", "reason");
    const char *m = kube_json_at_str(pod, "status", "message");
    if (strcmp(phase, "Unknown") == 0)
        return kube_strdup_printf("node lost: phase Unknown%s%s", m ? ": " : "", m ? m : "");
    if (r && strcmp(r, "NodeLost") == 0)
        return kube_strdup_printf("node lost: %s", str_or(m, "node stopped reporting"));
    if (r || m)
        return kube_strdup_printf("%s: %s%s%s", phase, str_or(r, "Failed"), m ? ": " : "", m ? m : "");
    if (cproblem)
        return kube_strdup_printf("%s: %s", phase, cproblem);
    return kube_strdup_printf("%s: the pod's containers exited", phase);
}

/* Reason for a pod that is neither ready nor final. */
static char *pending_reason(const json_t *pod, const char *phase, const char *cproblem)
{
    const char *sr;
    char *unsched = kube_pod_unschedulable(pod, &sr); /* lib/podstuck.c, the operator's Blocked alike */
    if (unsched)
        return unsched;
    if (cproblem)
        return strdup(cproblem);
    const json_t *ready = find_condition(pod, "Ready");
    const char *rr = kube_json_at_str(ready, "reason");
    const char *rm = kube_json_at_str(ready, "message");
    if (rr && strcmp(rr, "NodeLost") == 0)
        return kube_strdup_printf("node lost: %s", str_or(rm, "node stopped reporting"));
    if (strcmp(phase, "Running") == 0)
        return kube_strdup_printf("Running but not Ready%s%s%s%s", rr ? ": " : "", rr ? rr : "", rm ? ": " : "",
                                  rm ? rm : "");
    if (!kube_json_at_str(pod, "spec", "nodeName"))
        return strdup("waiting for the scheduler");
    return kube_strdup_printf("%s: containers starting", phase);
}

static char *dup_or_null(const char *s) { return s ? strdup(s) : NULL; }

/* Decides the verdict and reason for a present pod; by names its preemptor (or NULL). */
static int assess_present(const json_t *pod, const char *by, struct agent_pod_view *v)
{
    const char *phase = v->phase;
    int fatal = 0;
    char *cp = container_problem(pod, &fatal, &v->restarts);
    const json_t *ready = find_condition(pod, "Ready");
    int is_ready = ready && kube_json_at_str(ready, "status") && strcmp(kube_json_at_str(ready, "status"), "True") == 0;
    /* who took it away (preemption, eviction, taint manager, kubelet, pod GC), when Kubernetes says */
    char *dis = kube_pod_disruption_text(pod, by);
    if (kube_json_at_str(pod, "metadata", "deletionTimestamp")) {
        v->verdict = AGENT_POD_FAILED;
        v->reason = dis ? kube_strdup_printf("being deleted: %s", dis) : strdup("being deleted");
    } else if (!strcmp(phase, "Failed") || !strcmp(phase, "Succeeded") || !strcmp(phase, "Unknown")) {
        v->verdict = AGENT_POD_FAILED;
        char *fr = final_reason(pod, phase, cp);
        v->reason = dis && fr ? kube_strdup_printf("%s: %s", dis, fr) : fr;
        if (v->reason != fr)
            free(fr);
    } else if (!strcmp(phase, "Running") && is_ready) {
        v->verdict = AGENT_POD_READY;
        v->reason = strdup("");
    } else {
        v->verdict = fatal ? AGENT_POD_FAILED : AGENT_POD_PENDING;
        v->reason = pending_reason(pod, phase, cp);
    }
    free(dis);
    free(cp);
    return v->reason ? 0 : -1;
}

int agent_pod_deletion_in_progress(const json_t *pod, int64_t now_ms)
{
    int64_t at;
    const char *ts = kube_json_at_str(pod, "metadata", "deletionTimestamp");
    return ts && kube_time_parse_ms(ts, &at) == 0 && now_ms <= at + AGENT_DELETION_SLACK_MS;
}

int agent_pod_assess(const json_t *pod, struct agent_pod_view *v) { return agent_pod_assess_by(pod, NULL, v); }

int agent_pod_assess_by(const json_t *pod, const char *preemptor, struct agent_pod_view *v)
{
    memset(v, 0, sizeof(*v));
    if (!pod) {
        v->verdict = AGENT_POD_MISSING;
        v->phase = strdup("-");
        v->reason = strdup("pod not found");
        return v->phase && v->reason ? 0 : -1;
    }
    v->phase = strdup(str_or(kube_json_at_str(pod, "status", "phase"), "Pending"));
    v->node = dup_or_null(kube_json_at_str(pod, "spec", "nodeName"));
    v->ip = dup_or_null(kube_json_at_str(pod, "status", "podIP"));
    if (!v->phase)
        return -1;
    return assess_present(pod, preemptor, v);
}

void agent_pod_view_free(struct agent_pod_view *v)
{
    free(v->phase);
    free(v->node);
    free(v->ip);
    free(v->reason);
    memset(v, 0, sizeof(*v));
}

const char *agent_pod_verdict_name(enum agent_pod_verdict d)
{
    switch (d) {
    case AGENT_POD_READY: return "ready";
    case AGENT_POD_PENDING: return "pending";
    case AGENT_POD_FAILED: return "failed";
    case AGENT_POD_MISSING: return "missing";
    }
    return "?";
}

char *agent_pod_gpus(const json_t *pod)
{
    const json_t *c0 = json_array_get(kube_json_at(pod, "spec", "containers"), 0);
    size_t i;
    const json_t *e;
    json_array_foreach(kube_json_at(c0, "env"), i, e) {
        const char *n = kube_json_at_str(e, "name"), *val = kube_json_at_str(e, "value");
        if (n && val && *val && (!strcmp(n, "NVIDIA_VISIBLE_DEVICES") || !strcmp(n, "CUDA_VISIBLE_DEVICES")))
            return strdup(val);
    }
    const json_t *lim = kube_json_at(c0, "resources", "limits");
    const json_t *g = kube_json_at(lim, "nvidia.com/gpu");
    if (json_is_string(g))
        return kube_strdup_printf("%s GPU", json_string_value(g));
    if (json_is_integer(g))
        return kube_strdup_printf("%lld GPU", (long long)json_integer_value(g));
    return NULL;
}

const char *agent_pod_ip(const json_t *pod, int family)
{
    if (!family)
        return kube_json_at_str(pod, "status", "podIP");
    size_t i;
    json_t *e;
    json_array_foreach(kube_json_at(pod, "status", "podIPs"), i, e) {
        const char *ip = kube_json_at_str(e, "ip");
        if (ip && (strchr(ip, ':') != NULL) == (family == 6))
            return ip;
    }
    return NULL;
}
