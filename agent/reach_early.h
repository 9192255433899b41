/* reach_early.h - overlapping the reachability check with the wait: each worker
 * is checked as soon as its pod is Running, so when the last worker turns Ready
 * most (often all) checks are already done and mpirun starts at once. */
#ifndef MPI_AGENT_REACH_EARLY_H
#define MPI_AGENT_REACH_EARLY_H

#include <stdint.h>
#include "reach.h"

struct agent_reach_early;

/* Creates the tracker for s->hosts; checks retry until deadline (monotonic ms). NULL on OOM. */
struct agent_reach_early *agent_reach_early_new(struct agent_session *s, int64_t deadline);
/* Starts worker i's check in the background unless started (at most 32 run at once). */
void agent_reach_early_kick(struct agent_reach_early *e, size_t i);
/* Asked every ~20 ms while checks run: nonzero (with *why) stops them all (a worker failed). */
typedef int (*agent_reach_abort_fn)(void *ud, char **why);
/* Starts the checks not yet started, waits for all (abort_fn may stop it early), hands the
 * results over (*out, free with agent_reach_results_free) and frees e. Returns the number
 * unreachable, or -2 when abort_fn stopped it (*out NULL, *why set). */
int agent_reach_early_finish(struct agent_reach_early *e, agent_reach_abort_fn abort_fn, void *ud,
                             struct agent_reach_result **out, char **why);
/* Cancels the checks in flight, waits for them and frees e (NULL is fine). */
void agent_reach_early_cancel(struct agent_reach_early *e);

#endif
