/* session.h - the state one mpi-agent invocation carries between its steps:
 * options, the API client, the namespace, the workers, the pod informer and the
 * launch phase timeline. */
#ifndef MPI_AGENT_SESSION_H
#define MPI_AGENT_SESSION_H

#include "agent.h"
#include "hostfile.h"
#include "outbuf.h"
#include "termination.h"
#include "kube/client.h"
#include "kube/informer.h"

struct agent_reach_early;

struct agent_session {
    struct agent_opts *o;
    struct kube_client *client;
    char *ns;                    /* effective namespace */
    struct agent_hostlist hosts; /* the workers, in hostfile order */
    struct kube_informer *inf;   /* pods of the job (or namespace), started by agent_watch_start */
    struct agent_phases phases;
    struct agent_reach_early *early; /* checks started during the wait (or NULL) */
    int allow_no_api;                /* set by init and run before connecting: the no-API mode may be chosen */
    int no_api;                      /* no usable API credentials: client NULL, workers from the hostfile, SSH checks only */
    struct agent_outbuf output;      /* run: the command's last output (zeroed = not kept) */
    json_t *failure;                 /* run: which rank failed and why (agent/failure.h), or NULL */
    int stopped_by_signal;           /* run: the command was stopped because we received a signal */
    char *rsh;                       /* run: the mpi-rsh the launch environment names (NULL before) */
    char *user_rsh_var;              /* run: an agent variable the user set to a value of their own, or NULL */
    size_t launchers_dropped;        /* hostfile entries naming the launcher (runLauncherAsWorker) */
};

/* Connects: loads the config (flag, env, in-cluster, ~/.kube/config) and creates the client;
 * settles the namespace. With s->allow_no_api, for an SSH job with a hostfile, no usable credentials (no config, no
 * service-account token, or 401/403 on a first list of the job's pods) select the no-API
 * mode (s->no_api, client NULL; one log line says why). 0 ok, -1 with *errmsg. */
int agent_session_connect(struct agent_session *s, struct agent_opts *o, char **errmsg);
/* Finds the workers: the hostfile when present (or given), else MPI_JOB_WORKERS names
 * <job>-worker-<i>, else the pods labelled mpi_job_name=<job>,mpi_role_type=worker.
 * 0 ok (at least one worker), -1 with *errmsg. */
int agent_workers_find(struct agent_session *s, char **errmsg);
/* Lists the job's worker pods (labels mpi_job_name, mpi_role_type=worker) sorted by index;
 * a new JSON array or NULL with *errmsg. */
json_t *agent_list_worker_pods(struct agent_session *s, char **errmsg);
/* Returns the label selector for the job's pods ("mpi_job_name=JOB") or NULL; new string. */
char *agent_job_selector(const struct agent_session *s);
/* Starts the pod informer (namespace + job selector) unless running. 0 ok, -1 with *errmsg. */
int agent_watch_start(struct agent_session *s, char **errmsg);
/* Releases everything the session owns (not o). */
void agent_session_close(struct agent_session *s);

#endif
