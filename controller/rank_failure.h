/* rank_failure.h - the agent's report of the failed rank (its termination
 * message's `failure:` line) in the MPIJob's status, Events and metrics. */
#ifndef RANK_FAILURE_H
#define RANK_FAILURE_H

#include <jansson.h>

struct sync_ctx;

/* status field keeping the failure object (keys MPIK8S_FAIL_*) of the newest failed launcher. */
#define ST_RANK_FAILURE "rankFailure"
/* Event reasons (Warning) naming the failed rank, next to upstream's MPIJobFailed. */
#define R_RANK_FAILED "RankFailed"
#define R_RANK_OOM "RankOOMKilled"
#define R_WORKER_LOST "WorkerLost"

/* Copies the failure line of a launcher's terminated state (its "message") into
 * status.rankFailure when it has one and it changed; removes it when the record has none. */
void rank_failure_remember(struct sync_ctx *c, const json_t *terminated);
/* The reason label (MPIK8S_FAIL_R_*, static) of a failure object: "unknown" without one. */
const char *rank_failure_reason_of(const json_t *failure);
/* The reason label (MPIK8S_FAIL_R_*, static) of status.rankFailure: "unknown" without one. */
const char *rank_failure_reason(const json_t *status);
/* Once the job has failed: sets the plan's failure reason (a worker-lost reason already set
 * stays unless the agent knows better) and, when status.rankFailure is there, plans its Event
 * (message: the failure's line and the last lines of output, at most 1 KiB). */
void rank_failure_report(struct sync_ctx *c);

#endif
