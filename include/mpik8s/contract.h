/* contract.h - what the operator (controller/), mpi-agent (agent/) and mpi-rsh (rsh/)
 * agree on, in one place: the environment the operator sets on the launcher, the
 * MPIJob annotations behind it, the pod labels the agent selects workers by, the
 * shared paths, the transport, the hostfile line and the termination message.
 * Not under include/kube/: lib/ knows no MPIJob. docs/agent.md's table of
 * variables is checked against the MPIK8S_ENV_* names here (test_agent_contract). */
#ifndef MPIK8S_CONTRACT_H
#define MPIK8S_CONTRACT_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

/* ---- environment the operator sets on the launcher's containers (init and main) ---- */
#define MPIK8S_ENV_JOB_NAME "MPI_JOB_NAME"                         /* the MPIJob's name */
#define MPIK8S_ENV_JOB_NAMESPACE "MPI_JOB_NAMESPACE"               /* its namespace */
#define MPIK8S_ENV_TRANSPORT "MPI_JOB_TRANSPORT"                   /* exec | ssh (mpik8s_transport_name) */
#define MPIK8S_ENV_MPI_IMPLEMENTATION "MPI_JOB_MPI_IMPLEMENTATION" /* OpenMPI | Intel | MPICH */
#define MPIK8S_ENV_WORKER_CONTAINER "MPI_JOB_WORKER_CONTAINER"     /* container to exec into */
#define MPIK8S_ENV_WORKERS "MPI_JOB_WORKERS"                       /* worker replicas */
#define MPIK8S_ENV_SLOTS "MPI_JOB_SLOTS"                           /* slotsPerWorker */
#define MPIK8S_ENV_AGENT_TIMEOUT "MPI_AGENT_TIMEOUT"               /* seconds the agent waits for workers */
#define MPIK8S_ENV_PROGRESS_TIMEOUT "MPI_AGENT_PROGRESS_TIMEOUT"   /* seconds of silence = hang */
#define MPIK8S_ENV_SSH_DIR "MPI_JOB_SSH_DIR"                       /* ssh: the job's key directory */
#define MPIK8S_ENV_SSH_PORT "MPI_JOB_SSH_PORT"                     /* ssh: the workers' sshd port */
#define MPIK8S_ENV_LAUNCHER_UID "MPI_JOB_LAUNCHER_UID"             /* init only: the main container's uid */

/* ---- launch environment the operator (flavour_env) and mpi-agent run (launch_env.c) both set ---- */
/* SHELL for Open MPI's rsh launcher (4.x: plm rsh; 5.x: prte's plm ssh), unless already set: it
 * takes its local shell from getpwuid(getuid())->pw_shell, else from $SHELL, else it prints
 * "WARNING: local probe returned unhandled shell:unknown assuming bash" — every job under a UID
 * with no passwd entry (OpenShift's restricted-v2). /bin/sh is in every image and is what the exec
 * transport runs the daemons' command with. No MCA parameter skips that probe (plm_rsh_assume_same_shell
 * only spares the remote one, and is already 1 by default). */
#define MPIK8S_LAUNCH_SHELL "/bin/sh"

/* ---- environment mpi-rsh (and the agent's reach check, the stream holder) read ---- */
#define MPIK8S_RSH_ENV_TLS_CACHE_DIR "MPI_RSH_TLS_CACHE_DIR" /* TLS session cache directory */

/* ---- MPIJob annotations (metadata.annotations) the operator turns into the above ---- */
#define MPIK8S_ANN_TRANSPORT "mpi-k8s.io/transport"               /* exec | ssh */
#define MPIK8S_ANN_AGENT_RUN "mpi-k8s.io/agent-run"               /* "false" = don't wrap the command */
#define MPIK8S_ANN_AGENT_TIMEOUT "mpi-k8s.io/worker-timeout"      /* -> MPI_AGENT_TIMEOUT */
#define MPIK8S_ANN_PROGRESS_TIMEOUT "mpi-k8s.io/progress-timeout" /* -> MPI_AGENT_PROGRESS_TIMEOUT */
#define MPIK8S_ANN_SSH_PORT "mpi-k8s.io/ssh-port"                 /* -> MPI_JOB_SSH_PORT (default 2222) */

/* ---- pod labels (upstream's): the agent finds the job's workers by them ---- */
#define MPIK8S_LABEL_JOB_NAME "mpi_job_name" /* = the MPIJob's name */
#define MPIK8S_LABEL_ROLE "mpi_role_type"    /* MPIK8S_ROLE_LAUNCHER | MPIK8S_ROLE_WORKER */
#define MPIK8S_ROLE_LAUNCHER "launcher"
#define MPIK8S_ROLE_WORKER "worker"

/* ---- paths inside the launcher pod ---- */
#define MPIK8S_AGENT_DIR "/opt/kube" /* the bundle (mpi-agent, mpi-rsh), shared by init and main */
#define MPIK8S_CONFIG_DIR "/etc/mpi" /* the ConfigMap <job>-config */
#define MPIK8S_HOSTFILE MPIK8S_CONFIG_DIR "/hostfile"

/* ---- the transport from the launcher to the workers ---- */
enum mpik8s_transport { MPIK8S_TRANSPORT_EXEC = 0, MPIK8S_TRANSPORT_SSH = 1 };

/* "exec" or "ssh": the spelling in MPI_JOB_TRANSPORT, the annotation and --transport. */
static inline const char *mpik8s_transport_name(enum mpik8s_transport t)
{
    return t == MPIK8S_TRANSPORT_SSH ? "ssh" : "exec";
}

/* Parses "exec" or "ssh" (NULL or anything else: -1, *t unchanged); 0 ok. */
static inline int mpik8s_transport_parse(const char *s, enum mpik8s_transport *t)
{
    if (s && strcmp(s, "exec") == 0)
        *t = MPIK8S_TRANSPORT_EXEC;
    else if (s && strcmp(s, "ssh") == 0)
        *t = MPIK8S_TRANSPORT_SSH;
    else
        return -1;
    return 0;
}

/* ---- the hostfile (ConfigMap key "hostfile", and the one the agent writes) ---- */
enum mpik8s_hostfile_syntax {
    MPIK8S_HOSTFILE_SLOTS_EQ, /* Open MPI (4 and 5): "host slots=N" */
    MPIK8S_HOSTFILE_COLON,    /* MPICH and Intel MPI Hydra: "host:N" */
};

/* Writes one hostfile line for host: "host slots=N\n" or "host:N\n", or "host\n" when
 * slots <= 0. Returns fprintf's result. */
static inline int mpik8s_hostfile_line(FILE *f, enum mpik8s_hostfile_syntax syn, const char *host, long long slots)
{
    if (slots <= 0)
        return fprintf(f, "%s\n", host);
    return fprintf(f, syn == MPIK8S_HOSTFILE_SLOTS_EQ ? "%s slots=%lld\n" : "%s:%lld\n", host, slots);
}

/* ---- the launcher's termination message (agent/termination.c writes it) ----
 * Line 1: a one-line summary. A later line: MPIK8S_TERM_PHASES followed by a compact JSON
 * object {phase key: RFC 3339 time with ms}, keys from the list below in timeline order. */
#define MPIK8S_TERM_PHASES "phases: "
#define MPIK8S_PHASE_WORKERS_READY "workersReady"
#define MPIK8S_PHASE_WORKERS_REACHABLE "workersReachable"
#define MPIK8S_PHASE_MPIRUN_STARTED "mpirunStarted"
#define MPIK8S_PHASE_FIRST_OUTPUT "firstOutput"
#define MPIK8S_PHASE_FINISHED "finished"

/* Parses a termination message: *summary = its first line (new string; NULL for a NULL msg),
 * *phases = the object on its phases line (new reference), NULL when there is none. Returns 0,
 * or -1 when a phases line is there but is not a JSON object (*phases NULL; *summary set). */
static inline int mpik8s_termination_parse(const char *msg, char **summary, json_t **phases)
{
    const size_t plen = sizeof MPIK8S_TERM_PHASES - 2; /* "phases:"; the space is JSON's */
    *summary = NULL;
    *phases = NULL;
    if (!msg)
        return 0;
    *summary = strndup(msg, strcspn(msg, "\n"));
    for (const char *line = msg; line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        if (strncmp(line, MPIK8S_TERM_PHASES, plen) != 0)
            continue;
        json_error_t je;
        json_t *v = json_loadb(line + plen, strcspn(line + plen, "\n"), 0, &je);
        if (!json_is_object(v)) {
            json_decref(v);
            return -1;
        }
        *phases = v;
        return 0;
    }
    return 0;
}

#endif
