/* agent.h - what every mpi-agent subcommand shares: the options (flags and the
 * environment the controller sets), the MPI flavour, and the parsed worker list. */
#ifndef MPI_AGENT_H
#define MPI_AGENT_H

#include "mpik8s/contract.h"
#include <stddef.h>

#define AGENT_VERSION "0.1.0"

/* The job's transport (enum mpik8s_transport) and MPI implementation (enum mpik8s_mpi, which
 * decides the hostfile syntax and the launch environment) are the contract's (contract.h). */

/* Options resolved from flags, then the controller's env, then defaults. */
struct agent_opts {
    const char *cmd;    /* subcommand name */
    char *namespace;    /* -n / MPI_JOB_NAMESPACE / in-cluster file / kubeconfig */
    char *job;          /* --job / MPI_JOB_NAME / positional (status) */
    char *kubeconfig;   /* --kubeconfig (NULL: library default order) */
    char *context;      /* --context: the kubeconfig context (NULL: current-context) */
    char *hostfile;     /* --hostfile, default /etc/mpi/hostfile */
    int hostfile_given; /* 1 when --hostfile was passed explicitly */
    char *dest;         /* --dest, bundle destination, default /opt/kube */
    char *container;    /* --container / MPI_JOB_WORKER_CONTAINER */
    char *ssh_dir;      /* MPI_JOB_SSH_DIR */
    int ssh_port;       /* MPI_JOB_SSH_PORT, default 2222 */
    int launcher_uid;   /* MPI_JOB_LAUNCHER_UID (init container): the runAsUser of the
                                  launcher's main container; -1 = not set */
    enum mpik8s_transport transport;
    enum mpik8s_mpi mpi;       /* --mpi / MPI_JOB_MPI_IMPLEMENTATION, default Open MPI */
    int workers;               /* MPI_JOB_WORKERS, 0 = unknown */
    int slots;                 /* MPI_JOB_SLOTS, 0 = unknown (1 when printing) */
    double timeout_s;          /* --timeout / MPI_AGENT_TIMEOUT, default 900 */
    double progress_timeout_s; /* --progress-timeout / MPI_AGENT_PROGRESS_TIMEOUT, 0 off */
    double network_timeout_s;  /* --network-timeout / MPI_AGENT_NETWORK_TIMEOUT, default 60, 0 off */
    int ip_family;             /* MPI_JOB_IP_FAMILY: 4 or 6, the workers' pod IPs used; 0 = each pod's primary */
    double rsh_timeout_s;      /* --rsh-timeout / MPI_AGENT_RSH_TIMEOUT, default 120, 0 off (agent/rshwatch.h) */
    double daemon_exit_s;      /* MPI_RSH_DAEMON_EXIT_S, default 30, 0 off (agent/daemonexit.h) */
    double grace_s;            /* --grace, SIGTERM → SIGKILL delay, default 10 */
    int no_wait;               /* run: --no-wait (init already waited) */
    int follow;                /* logs: -f/--follow */
    int no_reach;              /* --no-reach-check */
    int no_deliver;            /* init: --no-deliver */
    int verbose;
    char *termination_log; /* MPI_AGENT_TERMINATION_LOG or /dev/termination-log */
    char **argv;           /* run: CMD ARGS... (NULL-terminated); status: rest */
    int argc;
};

/* Parses argv (after the subcommand) and the environment into o. 0 ok, 1 help or version
 * printed (exit 0), -1 with *errmsg naming the flag or variable and the value. */
int agent_opts_parse(struct agent_opts *o, const char *cmd, int argc, char **argv, char **errmsg);
/* Frees what agent_opts_parse allocated. */
void agent_opts_free(struct agent_opts *o);
/* Parses a duration "90", "90s", "15m", "1h", "250ms" into seconds; 0 ok, -1 bad. */
int agent_duration_parse(const char *s, double *out);

#endif
