/* pod.h - what a sync reads of a pod (pod.c). */
#ifndef CONTROLLER_POD_H
#define CONTROLLER_POD_H

#include <jansson.h>

/* Returns 1 when pod is being deleted. */
int pod_terminating(const json_t *pod);
/* 1 when pod is being deleted by someone (a deletionTimestamp without a DisruptionTarget
 * condition: kubectl delete, not preemption or eviction). Such a pod may be Failed for its last
 * seconds (a command that ignores SIGTERM is killed at the grace period: exit 137); the deletion,
 * not a failure of the worker, is why it goes. */
int pod_deleted_plainly(const json_t *pod);
/* pod's status.phase or "". */
const char *pod_phase(const json_t *pod);
/* Returns 1 when pod's Ready condition is True. */
int pod_ready(const json_t *pod);

#endif
