/* failure.h - when mpirun fails: which rank, on which worker pod and node, and
 * why (exit code, signal, OOM kill), from mpirun's own report (failure_parse.h),
 * the pod cache and the worker's memory cgroup (read through the exec API).
 * The result is the termination message's `failure:` line (mpik8s/contract.h). */
#ifndef MPI_AGENT_FAILURE_H
#define MPI_AGENT_FAILURE_H

#include <jansson.h>
#include <stddef.h>

#include "failure_parse.h"
#include "session.h"

/* Lines and bytes of output kept in the failure line's lastLines (the Failed Event shows them). */
#define AGENT_FAILURE_LAST_LINES 10
#define AGENT_FAILURE_LAST_BYTES 1024

/* Attributes a failed command from the tail of its output (len bytes), its argv (mapping
 * options decide whether a rank may be placed by the hostfile's order) and its exit code
 * (cmd_code; -1 when a signal ended it: used only where Open MPI printed its notice and no
 * report, form "ompi-notice"). Returns the failure object (new reference; keys
 * MPIK8S_FAIL_*) and sets *phrase to one human line ("rank 1 on pod P (node N) exited with
 * code 3"), or NULL (and *phrase NULL) when no known report is in the text: the caller then
 * keeps its plain summary. */
json_t *agent_failure_explain(struct agent_session *s, const char *tail, size_t len, char *const *argv, int cmd_code,
                              char **phrase);
/* The failure object for a worker the supervisor saw fail or vanish (index i of s->hosts,
 * why = its "worker P: ..." line); new reference or NULL. */
json_t *agent_failure_worker_lost(struct agent_session *s, size_t i, const char *why, const char *tail, size_t len);
/* A daemon's own non-zero end that mpi-rsh saw (the launch mark's first exit line: pod, code;
 * agent/daemonexit.h) added to a failed run's finding: with none found (found NULL: Hydra names
 * no daemon it lost), a new one (form "daemon-exit", source "launch-mark": "the MPI daemon on pod
 * P (node N) exited with code C ..."); to ORTE's or PRRTE's "lost communication" on the same pod
 * (form "ompi-daemon-lost"), its code. *phrase (freed) and the message follow. Any other finding
 * is returned as it is. Returns found, or the new object (new reference), or NULL. */
json_t *agent_failure_daemon_end(struct agent_session *s, json_t *found, const char *pod, int code, const char *tail,
                                 size_t len, char **phrase);
/* 1 when the pod's container (name, or the first) is or was terminated with reason OOMKilled;
 * *limit = its spec's memory limit ("64Mi", borrowed from pod) or NULL. Pure. */
int agent_failure_oom_state(json_t *pod, const char *name, const char **limit);
/* Reads pod's memory cgroup through the exec API (bounded); 1 filled, 0 not available. */
int agent_failure_cgroup(struct agent_session *s, const char *pod, struct agent_cgroup_mem *m);
/* The last AGENT_FAILURE_LAST_LINES lines (at most AGENT_FAILURE_LAST_BYTES bytes) of
 * text[0, len), bytes outside printable ASCII shown as '?'; new string. */
char *agent_failure_last_lines(const char *text, size_t len);

#endif
