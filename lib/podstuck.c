/* podstuck.c - the classes of the waiting reasons the kubelet gives a container that does not
 * run (the union of what the agent fails on and what the operator calls Blocked), and the
 * scheduler's refusal of a pod. */
#include "kube/podstuck.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/json.h"

static const struct {
    const char *reason;
    unsigned cls;
} waits[] = {
    { "ContainerCreating", KUBE_WAIT_STARTING },
    { "PodInitializing", KUBE_WAIT_STARTING },
    { "CrashLoopBackOff", KUBE_WAIT_FATAL },
    /* ErrImagePull and ImagePullBackOff alternate while the kubelet retries the pull */
    { "ErrImagePull", KUBE_WAIT_BLOCKED },
    { "ImagePullBackOff", KUBE_WAIT_BLOCKED },
    { "ErrImageNeverPull", KUBE_WAIT_BLOCKED }, /* imagePullPolicy Never, image not on the node */
    { "InvalidImageName", KUBE_WAIT_BLOCKED | KUBE_WAIT_FATAL },
    { "CreateContainerConfigError", KUBE_WAIT_BLOCKED | KUBE_WAIT_FATAL }, /* a missing Secret, ConfigMap, key */
    { "CreateContainerError", KUBE_WAIT_BLOCKED },                         /* the runtime's create, retried */
    { "RunContainerError", KUBE_WAIT_BLOCKED | KUBE_WAIT_FATAL },          /* the start itself failed */
};

unsigned kube_wait_class(const char *reason)
{
    for (size_t i = 0; reason && i < sizeof waits / sizeof waits[0]; i++)
        if (strcmp(reason, waits[i].reason) == 0)
            return waits[i].cls;
    return 0;
}

char *kube_pod_unschedulable(const json_t *pod, const char **reason)
{
    const json_t *cd = kube_json_find(kube_json_at(pod, "status", "conditions"), "type", "PodScheduled");
    const char *st = kube_json_at_str(cd, "status");
    *reason = NULL;
    if (!st || strcmp(st, "False") != 0)
        return NULL;
    const char *r = kube_json_at_str(cd, "reason"), *m = kube_json_at_str(cd, "message");
    *reason = r && *r ? r : "Unschedulable";
    char *out = NULL;
    if (asprintf(&out, "%s: %s", *reason, m && *m ? m : "waiting for the scheduler") < 0) {
        *reason = NULL;
        return NULL;
    }
    return out;
}
