/* launcher_restart.h - every launcher run that ends early and is retried, in the
 * MPIJob: its container restarted in place (restartPolicy OnFailure) or a new launcher
 * pod after a failed or deleted one (the Job's failed count), each recorded once in
 * status.restarts and status.restartCount, the Restarting condition (with the retry
 * budget), a Warning Event and mpi_operator_job_restarts_total{reason}. */
#ifndef LAUNCHER_RESTART_H
#define LAUNCHER_RESTART_H

#include <jansson.h>

struct sync_ctx;

/* status field: how many retries the launcher Job has left (its backoffLimit less its failed
 * pods and the container restarts of its live pods). */
#define ST_RETRIES_LEFT "retriesLeft"

/* Records one early end: an entry {time, reason, message: cause, key} first in
 * status.restarts, restartCount + 1, retriesLeft, Restarting=True "is restarting (run K of N):
 * CAUSE", the same words in a Warning MPIJobRestarting Event, and reason for the metric. */
void launcher_restart_record(struct sync_ctx *c, const json_t *lj, const char *key, const char *reason, const char *cause);
/* Running's words after a restart (status.restartCount > 0): "is running (run K of N).", the
 * budget's count as in Restarting's; else upstream's "is running.". New string, NULL on failure. */
char *launcher_restart_running(const struct sync_ctx *c, const json_t *lj);
/* Each restart in place of a cached launcher pod's main container not recorded yet (its Nth
 * restart keyed on the pod's name, creationTimestamp and N), its cause read from the
 * container's lastState.terminated (the agent's termination message). Returns how many. */
int launcher_restart_in_place(struct sync_ctx *c, const json_t *lj);
/* The launcher Job's failed count rose since the status last said (a failed, evicted or
 * deleted launcher pod the Job replaces; the status' count makes it once): one record, its
 * cause from the newest pod that ended and is not recorded yet (a deleted one named so), else
 * status.launcherFailure. Returns 1 when it recorded. */
int launcher_restart_new_pod(struct sync_ctx *c, const json_t *lj);

#endif
