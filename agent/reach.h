/* reach.h - "Ready is not reachable": checking each worker through the job's
 * transport (an exec of `true`, or an SSH handshake with the pinned host key),
 * in parallel, retrying until a deadline; errors name the worker and the stage. */
#ifndef MPI_AGENT_REACH_H
#define MPI_AGENT_REACH_H

#include <stdint.h>
#include "session.h"

/* Outcome of one worker's check. */
struct agent_reach_result {
    int ok;        /* 1 reachable */
    double rtt_ms; /* duration of the successful (or last) try */
    int tries;
    char *error; /* "exec refused: ...", "ssh DNS: ..." when !ok */
};

/* Checks every worker once per try, retrying failures until deadline_s from now (0 = one try
 * each). results gets s->hosts.n entries (caller frees with agent_reach_results_free).
 * Returns the number of unreachable workers, or -1 on allocation failure. */
int agent_reach_all(struct agent_session *s, double deadline_s, struct agent_reach_result **results);
/* Checks worker i, retrying until deadline (monotonic ms) or until cancel_fd (> 0) becomes
 * readable; fills r (tries, rtt of the last try, ok or error). */
void agent_reach_one(struct agent_session *s, size_t i, int64_t deadline, int cancel_fd, struct agent_reach_result *r);
/* Formats the failures as one "  pod: error" line each (new string, "" if none). */
char *agent_reach_report(const struct agent_session *s, const struct agent_reach_result *r);
/* Frees an array from agent_reach_all. */
void agent_reach_results_free(struct agent_reach_result *r, size_t n);
/* 1 when the operator says (MPI_JOB_LAUNCHER_UID, set on the init container only) that
 * the launcher's main container runs as a non-root uid (or as root while we are not):
 * that user's name is in the launcher image's /etc/passwd, not in ours, so the SSH check
 * stops after the worker's host key and mpirun's own connections log in. */
int agent_reach_login_elsewhere(const struct agent_opts *o);

#endif
