/* daemonexit.h - the daemon-exit stop: an MPI daemon mpirun launched ended non-zero on its own (it
 * failed, its pod went away, its launch failed) while mpirun runs on. Open MPI aborts within a
 * second; MPICH's Hydra waits for ever for a proxy that never calls back. Every launch through
 * mpi-rsh says so in the launch watch's mark (an exit line, mpik8s_rsh_mark_exit: from mpi-rsh and
 * mpi-rsh-ssh themselves, or from the stream holder that serves the exec transport's streams), so
 * the rule is the same on every transport: once mpirun has run on MPI_RSH_DAEMON_EXIT_S seconds
 * (default 30, 0 = off) after the agent saw the first exit line, the supervisor (agent/supervise.c)
 * stops it and prints MPIK8S_AGENT_DAEMON_EXIT_FMT, which the failure attribution reads (form
 * "daemon-exit"). A user's own rsh agent writes no mark: nothing to see there. */
#ifndef MPI_AGENT_DAEMONEXIT_H
#define MPI_AGENT_DAEMONEXIT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The first well-formed exit line ("!CODE HOST", CODE 1..255, HOST a pod name or its DNS name) in
 * the mark's text (len bytes, need not be NUL-terminated): 1 with *pod (a new string) and *code;
 * 0 when there is none (launch lines, malformed lines and hosts that name no pod are passed
 * over); -1 out of memory. Pure: tests/unit/test_agent_daemonexit.c, tests/fuzz/fuzz_agent_failure.c. */
int agent_daemonexit_first(const char *text, size_t len, char **pod, int *code);

/* The same for the mark file at path (read up to AGENT_RANKSUP_MARK_MAX bytes): 1 with *pod (a
 * new string) and *code, else 0 (no file, no exit line). The failed run's attribution reads it
 * too (agent_failure_daemon_end). */
int agent_daemonexit_read(const char *mark, char **pod, int *code);

/* The rule's state in one run. */
struct agent_daemonexit {
    int64_t bound_ms; /* <= 0: off */
    int64_t seen_ms;  /* monotonic ms when the first exit line was seen; 0 = none yet */
    char *pod;        /* its pod, and code */
    int code;
    int64_t look_ms; /* the last look at the mark */
    off_t size;      /* the mark's size then (read again only when it grew) */
    int fired;       /* the stop was asked for */
};

/* One step at now (looks at the mark at most once a second): the line to print (a new string,
 * MPIK8S_AGENT_DAEMON_EXIT_FMT with cmd) when the command must be stopped now, else NULL. */
char *agent_daemonexit_step(struct agent_daemonexit *d, const char *mark, const char *cmd, int64_t now);
/* Frees d's strings. */
void agent_daemonexit_free(struct agent_daemonexit *d);

#endif
