/* failure_parse.h - pure parsers for what a failed MPI job leaves behind: the
 * text mpirun (Open MPI 4 ORTE, Open MPI 5 PRRTE) or Hydra (MPICH) prints about
 * the first rank that failed, and a worker's memory cgroup files (v1 and v2).
 * No I/O; every input is untrusted bytes (tests/fuzz/fuzz_agent_failure.c). */
#ifndef MPI_AGENT_FAILURE_PARSE_H
#define MPI_AGENT_FAILURE_PARSE_H

#include <stddef.h>

/* What the launcher's text said about the failed process. */
struct agent_rank_failure {
    int rank;            /* MPI_COMM_WORLD rank, -1 when the text does not say */
    long pid;            /* -1 when not said (Open MPI 4 prints 0 for a remote pid: kept as 0) */
    char *host;          /* node name as mpirun/Hydra printed it, NULL when not said */
    int exit_code;       /* -1 when not said or when a signal ended it */
    int signal;          /* signal number, 0 when none */
    const char *mpi;     /* "openmpi" or "mpich" (static); NULL for "daemon-exit" (not MPI's text) */
    const char *form;    /* which text matched (static): "ompi-signal", "ompi-exit",
                       * "ompi-improper-exit", "ompi-abort", "hydra-exit-code", "hydra-signal",
                       * "ompi-notice" (ORTE's notice alone: no rank, no code in the text),
                       * "ompi-daemon-lost" (ORTE/PRRTE lost communication with the daemon
                       * on node `host`: no rank, no code),
                       * "daemon-exit" (mpi-agent or, without it, the stream holder stopped
                       * mpirun after the daemon on pod `host` exited with exit_code: no rank) */
    const char *stopper; /* "daemon-exit": "agent" or "holder" (static, the line's prefix); else NULL */
    size_t at;           /* byte offset of the report's first line in the text */
};

/* Parses the tail of mpirun's output (len bytes, need not be NUL-terminated) for the first
 * failure report of a known form. Returns 1 and fills f (caller frees with
 * agent_rank_failure_free), or 0 when no known text is there (f zeroed, rank -1). */
int agent_failure_parse(const char *text, size_t len, struct agent_rank_failure *f);
/* Frees f's strings (f itself may be on the stack). */
void agent_rank_failure_free(struct agent_rank_failure *f);
/* Whether text holds an MPI runtime's own account of a failure that stands on its own (a form of
 * agent_failure_parse with mpi set, other than "ompi-notice", which needs mpirun's exit code):
 * its form (static), or NULL. For a command that exited 0 all the same: PRRTE 3.0 (Open MPI 5.0.7)
 * prints "lost communication with a remote daemon ... will terminate the job" and exits 0. */
const char *agent_failure_reported(const char *text, size_t len);

/* A worker container's memory cgroup, as read by agent/failure.c's exec. */
struct agent_cgroup_mem {
    long long oom_kills;   /* oom_kill counter (v2 memory.events, v1 memory.oom_control), -1 unknown */
    long long limit_bytes; /* memory.max / memory.limit_in_bytes, -1 unknown or unlimited */
    long long failcnt;     /* v1 memory.failcnt, -1 unknown */
    int version;           /* 1 or 2, 0 when nothing was recognised */
};

/* Parses the output of the exec that prints the cgroup files, sections introduced by
 * "==> NAME <==" lines (NAME: memory.events, memory.max, memory.oom_control,
 * memory.limit_in_bytes, memory.failcnt). Returns 1 when any counter was read, else 0. */
int agent_cgroup_mem_parse(const char *text, size_t len, struct agent_cgroup_mem *m);
/* Formats bytes as a Kubernetes quantity when exact ("512Mi", "2Gi"), else plain bytes;
 * writes into buf (at least 32 bytes) and returns it. */
char *agent_bytes_quantity(long long bytes, char *buf, size_t n);
/* The signal's name ("SIGSEGV") for 1..64 or "signal N" into buf; returns buf or a static name. */
const char *agent_signal_name(int sig, char *buf, size_t n);

#endif
