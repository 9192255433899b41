/* podstuck.h - why a pod is stuck, read from Pod JSON alone: the class of a container's
 * waiting reason (status.(init)containerStatuses[].state.waiting.reason) and the scheduler's
 * refusal (condition PodScheduled=False). The one classifier the agent's worker wait
 * (agent/podstate.c: fail at once or keep waiting) and the operator's Blocked condition
 * (controller/blocked.c) both use; knows no MPIJob. */
#ifndef KUBE_PODSTUCK_H
#define KUBE_PODSTUCK_H

#include <jansson.h>

/* Classes of a waiting reason (a bit set). */
enum {
    KUBE_WAIT_STARTING = 1 << 0, /* ContainerCreating, PodInitializing: on its way, nothing to report */
    KUBE_WAIT_BLOCKED = 1 << 1,  /* cannot start until the image, the pod's spec or the node changes:
                                    the image pull reasons, InvalidImageName, the create/run errors */
    KUBE_WAIT_FATAL = 1 << 2,    /* waiting will not help: CrashLoopBackOff (it started and keeps
                                    exiting), InvalidImageName, CreateContainerConfigError,
                                    RunContainerError */
};

/* The classes of a waiting reason; 0 for NULL or a reason not in the table (shown, not judged). */
unsigned kube_wait_class(const char *reason);

/* When pod's condition PodScheduled is False: "reason: message" (new string; reason
 * "Unschedulable" and message "waiting for the scheduler" when the condition has none), with
 * *reason set to the reason (borrowed from pod, or the literal). NULL when it is not False or on
 * allocation failure (*reason NULL). */
char *kube_pod_unschedulable(const json_t *pod, const char **reason);

#endif
