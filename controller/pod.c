/* pod.c - what a sync reads of a pod: its phase, readiness, deletion. */
#include "pod.h"
#include "kube/json.h"
#include "kube/poddisrupt.h"

#include <string.h>

int pod_terminating(const json_t *pod) { return kube_json_at(pod, "metadata", "deletionTimestamp") != NULL; }

int pod_deleted_plainly(const json_t *pod) { return pod_terminating(pod) && !kube_pod_disruption_cond(pod); }

const char *pod_phase(const json_t *pod)
{
    const char *s = kube_json_at_str(pod, "status", "phase");
    return s ? s : "";
}

int pod_ready(const json_t *pod)
{
    json_t *c = kube_json_find(kube_json_at(pod, "status", "conditions"), "type", "Ready");
    const char *s = kube_json_at_str(c, "status");
    return s && strcmp(s, "True") == 0;
}
