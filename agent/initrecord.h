/* initrecord.h - what `mpi-agent init` established, kept in the launcher's shared
 * volume (DEST/init-ready.json) so that `mpi-agent run` in the main container does
 * not wait for the workers and check their reachability a second time. */
#ifndef MPI_AGENT_INITRECORD_H
#define MPI_AGENT_INITRECORD_H

#include <stdint.h>

#include "session.h"

#define AGENT_INIT_RECORD "init-ready.json" /* in the --dest directory (/opt/kube) */

/* Writes DEST/init-ready.json (mode 0644, temp file + rename): job, namespace, transport,
 * whether reachability was checked, when, the workersReady/workersReachable times, and each
 * worker's pod name and uid from s->inf's cache. 0 ok, -1 with *errmsg naming the file. */
int agent_init_record_write(const struct agent_session *s, char **errmsg);

/* Decides whether `run` may trust DEST/init-ready.json instead of waiting: the record names
 * this job, namespace and transport, checked reachability unless s->o->no_reach, was written
 * at most max_age_ms ago, and lists exactly s->hosts in order, each pod in s->inf's cache
 * (which must be running and synced) with the recorded uid and Ready now. Returns 1 trusted
 * (the recorded phase times are copied into s->phases), 0 not (with *why, newly allocated:
 * "no DEST/init-ready.json", "worker w-1 was replaced (uid ...)", ...). */
int agent_init_record_trust(struct agent_session *s, int64_t max_age_ms, char **why);

#endif
