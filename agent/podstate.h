/* podstate.h - reading a worker pod's JSON into what the agent decides on:
 * Running+Ready, still coming up (and why), or failed for good (and why), with the
 * reason Kubernetes gives (Unschedulable + scheduler message, ErrImagePull,
 * CrashLoopBackOff, init container failed, node lost, deleted, preempted...). Pure. */
#ifndef MPI_AGENT_PODSTATE_H
#define MPI_AGENT_PODSTATE_H

#include <jansson.h>
#include <stdint.h>

/* Restarts of a worker container after which the wait treats it as a restart loop. */
#define AGENT_RESTART_LOOP_COUNT 2

enum agent_pod_verdict {
    AGENT_POD_READY = 0, /* phase Running and condition Ready=True, not being deleted */
    AGENT_POD_PENDING,   /* not ready yet; may still become ready */
    AGENT_POD_FAILED,    /* will not become ready by itself: fail at once */
    AGENT_POD_MISSING,   /* no such pod (not created yet, or deleted) */
};

struct agent_pod_view {
    enum agent_pod_verdict verdict;
    char *phase;  /* status.phase ("Pending" when absent) */
    char *node;   /* spec.nodeName or NULL */
    char *ip;     /* status.podIP or NULL */
    char *reason; /* one line: why not ready / why failed ("" when ready) */
    int restarts; /* sum of container restartCounts */
};

/* Fills v from a pod object (pod NULL = missing). Returns 0, or -1 on allocation failure.
 * A pod with condition DisruptionTarget True says who took it away (kube/poddisrupt.h):
 * "being deleted: preempted by the scheduler for a higher-priority pod (DisruptionTarget
 * PreemptionByScheduler: ...)". */
int agent_pod_assess(const json_t *pod, struct agent_pod_view *v);
/* agent_pod_assess, naming a preempted pod's preemptor ("ns/name", agent/preemptor.h):
 * "being deleted: preempted by ns/name (DisruptionTarget PreemptionByScheduler: ...)". */
int agent_pod_assess_by(const json_t *pod, const char *preemptor, struct agent_pod_view *v);
/* Frees the strings in v. */
void agent_pod_view_free(struct agent_pod_view *v);
/* How long past its deletionTimestamp (which already includes the grace period) a pod that
 * is being deleted counts as going away normally; later, its deletion is stuck (a lost node). */
#define AGENT_DELETION_SLACK_MS 10000
/* 1 when pod is being deleted and its deletion is not overdue at now_ms (its kubelet is still
 * stopping it): while the agent waits for the workers, such a worker is going to be replaced
 * (the operator re-creates a deleted worker), not a failure. 0 otherwise. */
int agent_pod_deletion_in_progress(const json_t *pod, int64_t now_ms);
/* Returns "ready", "pending", "failed" or "missing". */
const char *agent_pod_verdict_name(enum agent_pod_verdict d);
/* Returns a comma-separated list of GPU indices the pod shows (env NVIDIA_VISIBLE_DEVICES or
 * CUDA_VISIBLE_DEVICES of its first container, or the nvidia.com/gpu limit as "N GPU"), or NULL. */
char *agent_pod_gpus(const json_t *pod);
/* The pod's IP of family (4 or 6: the first of status.podIPs in it; 0: status.podIP, the
 * cluster's primary), borrowed from pod; NULL when it has none. */
const char *agent_pod_ip(const json_t *pod, int family);

#endif
