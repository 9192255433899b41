/* commands.h - the mpi-agent subcommands, each returning the process exit code. */
#ifndef MPI_AGENT_COMMANDS_H
#define MPI_AGENT_COMMANDS_H

#include "agent.h"
#include "session.h"

/* init: deliver the bundle, wait for the workers, check them, write what the transport needs. */
int agent_cmd_init(struct agent_opts *o);
/* run -- CMD...: wait (unless --no-wait), set the launch env, supervise CMD. */
int agent_cmd_run(struct agent_opts *o);
/* hostfile: print the job's hostfile for the flavour. */
int agent_cmd_hostfile(struct agent_opts *o);
/* discover-hosts: print the Ready workers for horovodrun --host-discovery-script. */
int agent_cmd_discover_hosts(struct agent_opts *o);
/* ready [--timeout DUR]: 0 once this container's run has its ranks up (agent/ranksup.h), waiting
 * up to DUR; 1 when DUR passed first (the operator's readiness probe on the launcher). */
int agent_cmd_ready(struct agent_opts *o);
/* status [-n NS] JOB: workers, reachability, hostfile; 0 only if all reachable. */
int agent_cmd_status(struct agent_opts *o);
/* logs [-n NS] [-f] JOB: the launcher's output kept in <job>-log (-f: the running launcher's log
 * first); 0 printed, 1 nothing kept or an API error. */
int agent_cmd_logs(struct agent_opts *o);
/* Receives a piece of the launcher's output. */
typedef void (*agent_log_sink)(const char *buf, size_t len, void *arg);
/* The launcher's output of job s->o->job to sink: follow_it: the running launcher's log while it runs
 * (else, or when none runs, the ConfigMap <job>-log); previous: the newest launcher pod's previous
 * container instance; without a kept ConfigMap, the newest launcher pod's log. 0, or -1 with *errmsg. */
int agent_logs_write(struct agent_session *s, int follow_it, int previous, agent_log_sink sink, void *arg, char **errmsg);

/* init's exit code when the workers decided the wait (one failed, or the bound was reached):
 * retrying the launcher cannot help, so the operator fails the MPIJob at once (docs/controller.md). */
#define AGENT_EXIT_WORKERS_NOT_READY 3

/* Shared by init and run: wait for the workers and check reachability (per opts), marking the
 * phases. 0 ok, -2 with *errmsg when the workers' state decided the failure (see
 * agent_wait_workers), -1 with *errmsg otherwise (multi-line report). */
int agent_prepare_workers(struct agent_session *s, char **errmsg);
/* Writes the termination message for this run and logs failures of doing so. */
void agent_finish(struct agent_session *s, const char *summary);

#endif
