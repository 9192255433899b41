/* preemptor.h - which pod preempted a worker: the scheduler's Preempted Event on the
 * worker, read through the API (kube/poddisrupt.h parses it), so that the failure names
 * "preempted by <namespace/pod>". */
#ifndef MPI_AGENT_PREEMPTOR_H
#define MPI_AGENT_PREEMPTOR_H

#include <jansson.h>

#include "session.h"

/* How long the agent waits for the scheduler's Event (posted just after the victim's delete). */
#define AGENT_PREEMPTOR_WAIT_MS 5000

/* "namespace/name" of the pod that preempted pod (a worker whose DisruptionTarget says
 * PreemptionByScheduler): lists the Preempted Events on it in s->ns, every 500 ms until one is
 * there or wait_ms passed; when the Event names the preemptor only by UID, lists the pods of
 * s->ns for it (the launcher's Role reads pods in its namespace only), else "pod <UID>".
 * New string; NULL when no Event came or the API refused (logged, naming the pod). */
char *agent_preemptor_find(struct agent_session *s, const json_t *pod, int wait_ms);

#endif
