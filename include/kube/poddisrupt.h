/* poddisrupt.h - why Kubernetes took a pod away, read from Pod and Event JSON alone: the
 * DisruptionTarget condition (status.conditions, type DisruptionTarget, status True; its
 * reason says who: the scheduler's preemption, the Eviction API, the taint manager, the
 * kubelet, the pod garbage collector) in words a user reads, and the preemptor of a pod the
 * scheduler preempted, from the victim's "Preempted" Event (its related object, else the UID
 * in its message, resolved through a pod list). The agent's worker watch (agent/podstate.c,
 * agent/preemptor.c) and the operator's worker failure and restart records both use it;
 * knows no MPIJob. */
#ifndef KUBE_PODDISRUPT_H
#define KUBE_PODDISRUPT_H

#include <jansson.h>

/* The DisruptionTarget reasons Kubernetes sets (k8s.io/api/core/v1 PodReason*). */
#define KUBE_DISRUPT_PREEMPTION "PreemptionByScheduler"
#define KUBE_DISRUPT_EVICTION_API "EvictionByEvictionAPI"
#define KUBE_DISRUPT_TAINT_MANAGER "DeletionByTaintManager"
#define KUBE_DISRUPT_KUBELET "TerminationByKubelet"
#define KUBE_DISRUPT_POD_GC "DeletionByPodGC"
/* The reason of the scheduler's Event on a pod it preempted (regarding: the victim, related:
 * the preemptor; note "Preempted by pod <UID> on node <node>"). */
#define KUBE_EVENT_PREEMPTED "Preempted"

/* pod's condition DisruptionTarget when its status is True (borrowed), else NULL. */
const json_t *kube_pod_disruption_cond(const json_t *pod);
/* 1 when pod's DisruptionTarget condition is True with reason PreemptionByScheduler. */
int kube_pod_preempted(const json_t *pod);
/* One line for pod's DisruptionTarget condition: what happened in words, then the condition's
 * reason and message, e.g. "preempted by the scheduler for a higher-priority pod
 * (DisruptionTarget PreemptionByScheduler: default-scheduler: preempting to accommodate a
 * higher priority pod)"; by (when not NULL, "ns/name") names the preemptor: "preempted by
 * default/big (...)". New string; NULL when the pod has no such condition (or on allocation
 * failure). */
char *kube_pod_disruption_text(const json_t *pod, const char *by);
/* The preemptor of victim (a pod object: its uid and name) from an EventList (items) of its
 * namespace: the newest Event with reason Preempted about that pod (involvedObject uid, or
 * name when the Event has no uid). Returns "namespace/name" of the Event's related object
 * (new string), or NULL; then *uid (when not NULL) is set to the UID its message names
 * ("Preempted by pod <UID> on node <node>"; new string) or NULL. */
char *kube_preemptor_from_events(const json_t *events, const json_t *victim, char **uid);
/* "namespace/name" of the pod with metadata.uid uid in a PodList (items); new string or NULL. */
char *kube_pod_name_by_uid(const json_t *pods, const char *uid);

#endif
