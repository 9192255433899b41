/* prevrun.h - a failed run's record kept for the next run of the same launcher
 * container (restartPolicy OnFailure: the kubelet reruns it in the same pod, whose
 * emptyDir --dest survives). The rerun usually fails for the same cause without seeing
 * it (the lost worker is gone or being replaced) and is often stopped by the Job itself,
 * whose failure then carries the rerun's message: the rerun leads with the first run's. */
#ifndef MPI_AGENT_PREVRUN_H
#define MPI_AGENT_PREVRUN_H

#include <jansson.h>

#include "session.h"

#define AGENT_PREV_RUN_FILE "run-failure.json"

/* Keeps summary and s->failure in s->o->dest/AGENT_PREV_RUN_FILE (logged when it cannot). */
void agent_prev_run_save(const struct agent_session *s, const char *summary);
/* The previous run's record in dest: {"summary": ..., "failure": {...}} (new reference), or NULL. */
json_t *agent_prev_run_load(const char *dest);
/* A failed run's summary (taken) as the Job will show it: after a failed previous run (prev,
 * the record agent_prev_run_load found when this run started, before this run saved its own;
 * borrowed, NULL for none) it leads with that run's summary
 * ("PREV (the previous run of this launcher container); then: THIS"),
 * and s->failure becomes that run's failure object when this run has none of its own or was
 * stopped by a signal it received (s->stopped_by_signal: the Job giving up). New string (or
 * summary itself when there is no previous run or memory runs out). */
char *agent_prev_run_lead(struct agent_session *s, const json_t *prev, char *summary);

#endif
