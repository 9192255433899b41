/* joblog.h - the launcher's output kept after its pods are gone: the last
 * AGENT_OUTBUF_MAX bytes of the supervised command's output in the ConfigMap
 * <job>-log (key "log"), owned by the MPIJob (garbage-collected with it),
 * written at most once every AGENT_JOBLOG_PERIOD_MS and once at exit. */
#ifndef MPI_AGENT_JOBLOG_H
#define MPI_AGENT_JOBLOG_H

#include <stddef.h>

#include "session.h"

#define AGENT_JOBLOG_PERIOD_MS 5000
#define AGENT_JOBLOG_SUFFIX "-log"
#define AGENT_JOBLOG_KEY "log"

struct agent_joblog;

/* Starts the writer for s (its output ring, client, namespace and job); NULL when there is
 * nothing to write to (no API, no job name, no worker pod owned by an MPIJob: one log line
 * says why). The ConfigMap is created (or found) on the writer's thread. */
struct agent_joblog *agent_joblog_start(struct agent_session *s);
/* Writes the final text (when it changed) and stops the writer; NULL is fine. */
void agent_joblog_stop(struct agent_joblog *l);
/* Replaces every byte that is not part of valid UTF-8 (and NUL) with '?', in place, so the
 * text can be a JSON string. Returns how many bytes it replaced. */
size_t agent_utf8_sanitize(char *s, size_t n);

#endif
