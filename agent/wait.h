/* wait.h - waiting, with a bound, until every worker pod is Running and Ready,
 * driven by the pod informer's change notifications (no polling); fails at once
 * when a worker can no longer become ready and names each unready worker's reason. */
#ifndef MPI_AGENT_WAIT_H
#define MPI_AGENT_WAIT_H

#include "session.h"

/* Waits up to timeout_s for all of s->hosts to be ready (starts the informer if needed).
 * Prints progress lines ("3/8 workers ready") at most every few seconds. Marks workersReady.
 * 0 all ready; -2 with *errmsg when the workers' state decided it (a worker failed, or the bound
 * was reached: multi-line, one line per unready worker, pod, phase, reason); -1 with *errmsg on
 * anything else (API errors, a termination signal). */
int agent_wait_workers(struct agent_session *s, double timeout_s, char **errmsg);
/* Describes the workers that are not ready right now (one "  pod: phase P: reason" line each),
 * from the informer cache; *nready gets the ready count. New string ("" when all ready). */
char *agent_unready_report(struct agent_session *s, size_t *nready, int *any_failed);

#endif
