/* termination.h - the launch phase timeline and the termination message
 * (/dev/termination-log): a one-line summary, then `phases: {json}`, which the
 * controller parses into the MPIJob's status. */
#ifndef MPI_AGENT_TERMINATION_H
#define MPI_AGENT_TERMINATION_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

enum agent_phase {
    AGENT_PHASE_WORKERS_READY = 0,
    AGENT_PHASE_WORKERS_REACHABLE,
    AGENT_PHASE_MPIRUN_STARTED,
    AGENT_PHASE_FIRST_OUTPUT,
    AGENT_PHASE_FINISHED,
    AGENT_PHASE_COUNT,
};

/* Wall-clock epoch milliseconds per phase; 0 = not reached. */
struct agent_phases {
    int64_t at_ms[AGENT_PHASE_COUNT];
};

/* Kubernetes keeps at most this many bytes of a termination message. */
#define AGENT_TERMINATION_MAX 4096

/* Returns the JSON key of a phase ("workersReady", ...). */
const char *agent_phase_key(enum agent_phase p);
/* Records now (wall clock) for p unless already recorded. */
void agent_phase_mark(struct agent_phases *ph, enum agent_phase p);
/* Formats the message: summary (newlines folded to spaces, cut to fit) + "\nphases: {...}\n".
 * Never longer than AGENT_TERMINATION_MAX. Newly allocated or NULL. */
char *agent_termination_format(const char *summary, const struct agent_phases *ph);
/* The same with a `failure: {json}` line after the phases when failure is not NULL; the
 * failure's lastLines, then its message, are cut first when the whole would not fit. */
char *agent_termination_format_failure(const char *summary, const struct agent_phases *ph, const json_t *failure);
/* Parses the phases line of a termination message back (mpik8s_termination_parse; a whole
 * message works too); 0 ok, -1 bad or absent. */
int agent_phases_parse(const char *line, struct agent_phases *ph);
/* Writes the message to path (MPI_AGENT_TERMINATION_LOG or /dev/termination-log when NULL);
 * a missing directory is not an error (not in a pod). 0 ok or skipped, -1 with *errmsg. */
int agent_termination_write(const char *path, const char *summary, const struct agent_phases *ph, const json_t *failure,
                            char **errmsg);

#endif
