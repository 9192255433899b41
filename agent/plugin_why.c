/* plugin_why.c - `kubectl mpijob why JOB`: the one sentence that explains a job that is not
 * Running, from its conditions (Failed with the rank, Blocked with the scheduler's or kubelet's
 * message, Suspended), its Kueue Workload (the queue, why it is not admitted), its pods (a pod
 * stuck before the operator said so) or the absence of any status (waiting for the operator). */
#include "plugin.h"

#include <stdlib.h>
#include <string.h>

#include "podstate.h"
#include "kube/json.h"
#include "kube/podstuck.h"
#include "kube/util.h"

/* The part of a condition's message after "MPIJob ns/name <verb>: ", else the whole message. */
static const char *after_colon(const json_t *c)
{
    const char *m = kube_json_at_str(c, "message") ?: "";
    const char *p = strstr(m, ": ");
    return p && !strncmp(m, "MPIJob ", 7) ? p + 2 : m;
}

/* The Workload's condition of that type (any status), or NULL. */
static const json_t *wl_condition(const json_t *w, const char *type)
{
    return kube_json_find(kube_json_at(w, "status", "conditions"), "type", type);
}

static char *why_kueue(const char *id, const json_t *job, const json_t *w)
{
    const char *q = kube_json_at_str(w, "spec", "queueName") ?: kube_obj_label(job, "kueue.x-k8s.io/queue-name");
    const json_t *ev = wl_condition(w, "Evicted"), *qr = wl_condition(w, "QuotaReserved");
    const json_t *adm = wl_condition(w, "Admitted");
    if (!w)
        return kube_strdup_printf("MPIJob %s is suspended: waiting for Kueue to create its Workload (queue %s).", id,
                                  q ? q : "?");
    if (ev && !strcmp(kube_json_at_str(ev, "status") ?: "", "True"))
        return kube_strdup_printf("MPIJob %s was evicted by Kueue (queue %s, workload %s): %s: %s", id, q ? q : "?",
                                  kube_obj_name(w), kube_json_at_str(ev, "reason") ?: "?",
                                  kube_json_at_str(ev, "message") ?: "");
    if (adm && !strcmp(kube_json_at_str(adm, "status") ?: "", "True"))
        return kube_strdup_printf("MPIJob %s is admitted by Kueue (queue %s, workload %s) and still suspended: waiting "
                                  "for Kueue to resume it.",
                                  id, q ? q : "?", kube_obj_name(w));
    const json_t *c = qr ? qr : adm;
    return kube_strdup_printf("MPIJob %s is not admitted by Kueue (queue %s, workload %s): %s: %s", id, q ? q : "?",
                              kube_obj_name(w), c ? kube_json_at_str(c, "reason") ?: "?" : "no QuotaReserved condition",
                              c ? kube_json_at_str(c, "message") ?: "" : "Kueue has not looked at it yet");
}

/* 1 when pod cannot start by itself: unschedulable, or a container waiting for a reason the one
 * classifier (kube/podstuck.h) calls blocking or fatal. */
static int pod_stuck(const json_t *pod)
{
    const char *why = NULL;
    char *unsched = kube_pod_unschedulable(pod, &why);
    int stuck = unsched != NULL;
    free(unsched);
    static const char *lists[] = { "initContainerStatuses", "containerStatuses" };
    for (size_t l = 0; l < 2 && !stuck; l++) {
        size_t i;
        json_t *c;
        json_array_foreach(kube_json_at(pod, "status", lists[l]), i, c) {
            if (kube_wait_class(kube_json_at_str(c, "state", "waiting", "reason")) & (KUBE_WAIT_BLOCKED | KUBE_WAIT_FATAL))
                stuck = 1;
        }
    }
    return stuck;
}

/* The pod that explains the wait, as a sentence, or NULL: first a stuck pod (the launcher, then
 * the workers in order), else the first one not Ready that says why (the launcher first). */
static char *why_pods(const char *id, const json_t *pods)
{
    char *out = NULL;
    for (int pass = 0; pass < 4 && !out; pass++) {
        size_t i;
        json_t *p;
        json_array_foreach(pods, i, p) {
            int launcher = !strcmp(kube_obj_label(p, MPIK8S_LABEL_ROLE) ?: "", MPIK8S_ROLE_LAUNCHER);
            struct agent_pod_view v;
            if (out || launcher != (pass % 2 == 0) || (pass < 2 && !pod_stuck(p)) || agent_pod_assess(p, &v) < 0)
                continue;
            if (v.verdict != AGENT_POD_READY && *v.reason)
                out = kube_strdup_printf("MPIJob %s is waiting: %s pod %s is %s: %s", id, launcher ? "launcher" : "worker",
                                         kube_obj_name(p), v.phase, v.reason);
            agent_pod_view_free(&v);
        }
    }
    return out;
}

/* The sentence for a job with conditions that is neither finished nor suspended. */
static char *why_active(const char *id, const json_t *job, const json_t *pods)
{
    const json_t *c;
    if ((c = plugin_true_condition(job, "Restarting")))
        return kube_strdup_printf("MPIJob %s is restarting: %s", id, after_colon(c));
    if ((c = plugin_true_condition(job, "Blocked")))
        return kube_strdup_printf("MPIJob %s is blocked: %s", id, after_colon(c));
    long long total = kube_json_at_int(job, 0, "spec", "mpiReplicaSpecs", "Worker", "replicas");
    long long active = kube_json_at_int(job, 0, "status", "replicaStatuses", "Worker", "active");
    if (plugin_true_condition(job, "Running"))
        return kube_strdup_printf("MPIJob %s is Running (%lld/%lld workers Running).", id, active, total);
    char *p = why_pods(id, pods);
    if (p)
        return p;
    return kube_strdup_printf("MPIJob %s is starting: %lld/%lld workers Running, %zu pod(s) so far, none blocked.", id,
                              active, total, json_array_size(pods));
}

char *plugin_why_text(const json_t *job, const json_t *pods, const json_t *workload)
{
    char *id = kube_strdup_printf("%s/%s", kube_obj_namespace(job) ?: "?", kube_obj_name(job) ?: "?");
    const json_t *c;
    char *out;
    if (!id)
        return NULL;
    if ((c = plugin_true_condition(job, "Failed"))) {
        const char *rank = kube_json_at_str(job, "status", "rankFailure", MPIK8S_FAIL_MESSAGE);
        out = rank ? kube_strdup_printf("MPIJob %s failed: %s.", id, rank)
                   : kube_strdup_printf("MPIJob %s failed: %s", id, after_colon(c));
    } else if ((c = plugin_true_condition(job, "Succeeded"))) {
        out = kube_strdup_printf("MPIJob %s is not Running: it succeeded.", id);
    } else if (plugin_true_condition(job, "Suspended") || kube_json_at_bool(job, 0, "spec", "runPolicy", "suspend")) {
        out = workload || kube_obj_label(job, "kueue.x-k8s.io/queue-name")
                  ? why_kueue(id, job, workload)
                  : kube_strdup_printf("MPIJob %s is suspended (spec.runPolicy.suspend is true): set it to false to run it.",
                                       id);
    } else if (!json_array_size(kube_json_at(job, "status", "conditions"))) {
        out = kube_strdup_printf("MPIJob %s has no status yet: waiting for the operator (is mpi-operator running and "
                                 "watching namespace %s?).",
                                 id, kube_obj_namespace(job) ?: "?");
    } else {
        out = why_active(id, job, pods);
    }
    free(id);
    return out;
}

int plugin_why(struct agent_session *s, const struct plugin_opts *po)
{
    json_t *job = plugin_one_job(s, po);
    if (!job)
        return 1;
    json_t *pods = plugin_job_pods(s, s->ns, po->args[0]);
    int suspended = plugin_true_condition(job, "Suspended") || kube_json_at_bool(job, 0, "spec", "runPolicy", "suspend");
    json_t *w = suspended ? plugin_job_workload(s, job) : NULL;
    char *text = plugin_why_text(job, pods, w);
    int rc = text ? 0 : plugin_error("out of memory");
    if (text)
        printf("%s\n", text);
    free(text);
    json_decref(w);
    json_decref(pods);
    json_decref(job);
    return rc;
}
