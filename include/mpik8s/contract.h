/* contract.h - what the operator (controller/), mpi-agent (agent/) and mpi-rsh (rsh/)
 * agree on, in one place: the environment the operator sets on the launcher, the
 * MPIJob annotations behind it, the pod labels the agent selects workers by, the
 * shared paths, the transport, the MPI implementation, the slot default, the hostfile
 * line, the host -> pod rule and the termination message (the launch policy: mpik8s/launch.h).
 * Names, constants and declarations only: the code is in mpik8s/, one idea a file, built into
 * libmpik8s.a, which every program links (docs/architecture.md, "The contract").
 * Not under include/kube/: lib/ knows no MPIJob. docs/agent.md's table of
 * variables is checked against the MPIK8S_ENV_* names here (test_agent_contract). */
#ifndef MPIK8S_CONTRACT_H
#define MPIK8S_CONTRACT_H

#include <stdio.h>

struct json_t; /* jansson's json_t: only mpik8s/termination.c needs <jansson.h> */

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
#define MPIK8S_ENV_NETWORK_TIMEOUT "MPI_AGENT_NETWORK_TIMEOUT"     /* seconds a worker may not answer over the pod network */
#define MPIK8S_ENV_SSH_DIR "MPI_JOB_SSH_DIR"                       /* ssh: the job's key directory */
#define MPIK8S_ENV_SSH_PORT "MPI_JOB_SSH_PORT"                     /* ssh: the workers' sshd port */
#define MPIK8S_ENV_LAUNCHER_UID "MPI_JOB_LAUNCHER_UID"             /* init only: the main container's uid */
#define MPIK8S_ENV_IP_FAMILY "MPI_JOB_IP_FAMILY" /* IPv4 | IPv6: the family of the workers' pod IPs the agent uses */

/* ---- the MPI implementation (spec.mpiImplementation; MPI_JOB_MPI_IMPLEMENTATION; --mpi) ----
 * Decides the hostfile syntax and the launch environment (mpik8s/launch.h). Open MPI 4 and 5 are
 * one implementation: its launch environment carries both versions' names (OMPI_MCA_* for 4's
 * ORTE, PRTE_MCA_* for 5's PRRTE; neither reads the other's), so nothing has to tell them apart
 * (docs/controller.md, "Open MPI 4 and 5"). The values are the API's order (the operator reads
 * the enum by index). */
enum mpik8s_mpi { MPIK8S_MPI_OPENMPI = 0, MPIK8S_MPI_INTEL = 1, MPIK8S_MPI_MPICH = 2 };
#define MPIK8S_MPI_DEFAULT MPIK8S_MPI_OPENMPI /* the API's default, and the agent's */

/* The API's spelling, which the operator writes into MPI_JOB_MPI_IMPLEMENTATION: OpenMPI | Intel | MPICH. */
const char *mpik8s_mpi_name(enum mpik8s_mpi m);

/* The spelling of mpi-agent's --mpi and of what it prints: openmpi | intel | mpich. */
const char *mpik8s_mpi_flag(enum mpik8s_mpi m);

/* Parses MPI_JOB_MPI_IMPLEMENTATION or --mpi, in any case: the API's names, the flag's, and the
 * aliases openmpi4, openmpi5, ompi, prte, prrte (Open MPI), hydra (MPICH), intelmpi (Intel).
 * 0 ok; -1 unknown or NULL (*m unchanged). */
int mpik8s_mpi_parse(const char *s, enum mpik8s_mpi *m);

/* ---- slots per worker (spec.slotsPerWorker; MPI_JOB_SLOTS; --slots) ---- */
#define MPIK8S_DEFAULT_SLOTS 1 /* the API's default; also what an unknown (<= 0) count means */

/* The slots a worker offers: slots, or MPIK8S_DEFAULT_SLOTS when slots <= 0 (not known). */
long long mpik8s_slots(long long slots);

/* ---- launch environment (mpik8s/launch.h: the operator's pod spec and mpi-agent run both use it) ---- */
/* SHELL for Open MPI's rsh launcher (4.x: plm rsh; 5.x: prte's plm ssh), unless already set: it
 * takes its local shell from getpwuid(getuid())->pw_shell, else from $SHELL, else it prints
 * "WARNING: local probe returned unhandled shell:unknown assuming bash" — every job under a UID
 * with no passwd entry (OpenShift's restricted-v2). /bin/sh is in every image and is what the exec
 * transport runs the daemons' command with. No MCA parameter skips that probe (plm_rsh_assume_same_shell
 * only spares the remote one, and is already 1 by default). */
#define MPIK8S_LAUNCH_SHELL "/bin/sh"
/* Open MPI's own default of plm_rsh_num_concurrent; the launch environment raises it to the worker
 * count when that is larger (an attached launch with fewer deadlocks: mpik8s/launch.h). */
#define MPIK8S_NUM_CONCURRENT_DEFAULT 128

/* ---- environment mpi-rsh (and the agent's reach check, the stream holder) read ---- */
#define MPIK8S_RSH_ENV_TLS_CACHE_DIR "MPI_RSH_TLS_CACHE_DIR" /* TLS session cache directory */
/* Set by `mpi-agent run` for the command it supervises: a file mpi-rsh creates each time mpirun (or
 * Hydra) calls it (mpik8s_rsh_mark, include/mpik8s/util.h), so the agent knows a launch went
 * through mpi-rsh and fails a launch that never does (agent/rshwatch.h, docs/agent.md "No rsh call"). */
#define MPIK8S_RSH_ENV_MARK "MPI_AGENT_RSH_MARK"
/* The first character of a mark line that says a daemon ended non-zero ("!CODE HOST"), where a
 * launch's line is the host alone (mpik8s_rsh_mark_exit, include/mpik8s/util.h). */
#define MPIK8S_RSH_MARK_EXIT '!'
/* The daemon-exit stop: seconds mpirun may run on after an MPI daemon ended with a non-zero code
 * (the daemon failed, its pod went away, its launch failed) before it is stopped: Open MPI aborts on
 * its own within a second, MPICH's Hydra waits for ever for a proxy that never calls back. 0 = never.
 * mpi-agent applies it on every transport, from the mark's exit lines (agent/daemonexit.h); the
 * stream holder applies it itself only when no agent watches (no $MPI_AGENT_RSH_MARK). */
#define MPIK8S_RSH_ENV_DAEMON_EXIT_S "MPI_RSH_DAEMON_EXIT_S"
#define MPIK8S_RSH_DAEMON_EXIT_DEFAULT_S 30
/* The line printed (stderr) when mpirun is stopped for that, which the agent parses
 * (agent/failure_parse.c form "daemon-exit"): printf(MPIK8S_AGENT_DAEMON_EXIT_FMT or
 * MPIK8S_HOLDER_DAEMON_EXIT_FMT, pod, code, command, seconds). The pod is a DNS-1123 name; the
 * code 1..255. */
#define MPIK8S_AGENT_DAEMON_EXIT_PREFIX "mpi-agent: the MPI daemon on pod "
#define MPIK8S_HOLDER_DAEMON_EXIT_PREFIX "mpi-rsh-holder: the MPI daemon on pod "
#define MPIK8S_HOLDER_DAEMON_EXIT_CODE " exited with code "
#define MPIK8S_DAEMON_EXIT_REST "%s" MPIK8S_HOLDER_DAEMON_EXIT_CODE "%d; %s was still running %d s later: stopping it\n"
#define MPIK8S_AGENT_DAEMON_EXIT_FMT MPIK8S_AGENT_DAEMON_EXIT_PREFIX MPIK8S_DAEMON_EXIT_REST
#define MPIK8S_HOLDER_DAEMON_EXIT_FMT MPIK8S_HOLDER_DAEMON_EXIT_PREFIX MPIK8S_DAEMON_EXIT_REST

/* ---- MPIJob annotations (metadata.annotations) the operator turns into the above ---- */
#define MPIK8S_ANN_TRANSPORT "mpi-k8s.io/transport"                   /* exec | ssh */
#define MPIK8S_ANN_AGENT_RUN "mpi-k8s.io/agent-run"                   /* "false" = don't wrap the command */
#define MPIK8S_ANN_AGENT_TIMEOUT "mpi-k8s.io/worker-timeout"          /* -> MPI_AGENT_TIMEOUT */
#define MPIK8S_ANN_PROGRESS_TIMEOUT "mpi-k8s.io/progress-timeout"     /* -> MPI_AGENT_PROGRESS_TIMEOUT */
#define MPIK8S_ANN_NETWORK_TIMEOUT "mpi-k8s.io/network-timeout"       /* -> MPI_AGENT_NETWORK_TIMEOUT (0 = off) */
#define MPIK8S_ANN_SSH_PORT "mpi-k8s.io/ssh-port"                     /* -> MPI_JOB_SSH_PORT (default 2222) */
#define MPIK8S_ANN_POD_FAILURE_POLICY "mpi-k8s.io/pod-failure-policy" /* -> the launcher Job's podFailurePolicy */
/* IPv4 | IPv6 -> the headless Service's ipFamilies (so the hostfile's names resolve to that family
 * only) and MPIK8S_ENV_IP_FAMILY; absent: the cluster's primary family for both (docs/controller.md) */
#define MPIK8S_ANN_IP_FAMILY "mpi-k8s.io/ip-family"

/* "IPv4" or "IPv6", Kubernetes' spelling (the Service's ipFamilies): 4 or 6; anything else 0. */
int mpik8s_ip_family_parse(const char *s);

/* The network timeout when neither the annotation nor the variable gives one: a worker that has not
 * answered over the pod network for this long stops mpirun (agent/netwatch.h). Seconds. */
#define MPIK8S_NETWORK_TIMEOUT_DEFAULT 60

/* ---- pod labels (upstream's): the agent finds the job's workers by them ---- */
#define MPIK8S_LABEL_JOB_NAME "mpi_job_name" /* = the MPIJob's name */
#define MPIK8S_LABEL_ROLE "mpi_role_type"    /* MPIK8S_ROLE_LAUNCHER | MPIK8S_ROLE_WORKER */
#define MPIK8S_ROLE_LAUNCHER "launcher"
#define MPIK8S_ROLE_WORKER "worker"

/* ---- paths inside the launcher pod ---- */
#define MPIK8S_AGENT_DIR "/opt/kube" /* the bundle (mpi-agent, mpi-rsh), shared by init and main */
#define MPIK8S_CONFIG_DIR "/etc/mpi" /* the ConfigMap <job>-config */
#define MPIK8S_HOSTFILE MPIK8S_CONFIG_DIR "/hostfile"
#define MPIK8S_RSH MPIK8S_AGENT_DIR "/mpi-rsh" /* the rsh agent mpirun calls (mpik8s/launch.h) */

/* ---- the launcher's readiness: Ready = this run's ranks are up (agent/ranksup.h) ----
 * The operator gives the launcher container it wraps in `mpi-agent run` (a template without a
 * readinessProbe of its own) an exec probe: MPIK8S_AGENT_DIR/mpi-agent ready --timeout MPIK8S_READY_WAIT,
 * which waits up to WAIT for the ranks, so one probe spans a wait for the workers (a failed probe
 * is an Unhealthy Event); the kubelet's timeout is a little longer. After a restart, the MPIJob's
 * Running returns once the launcher is Ready again (docs/controller.md "Restarts"). */
#define MPIK8S_READY_CMD "ready"
#define MPIK8S_READY_WAIT "50s"
#define MPIK8S_READY_PROBE_TIMEOUT_S 60
#define MPIK8S_READY_PROBE_PERIOD_S 10

/* ---- the transport from the launcher to the workers ---- */
enum mpik8s_transport { MPIK8S_TRANSPORT_EXEC = 0, MPIK8S_TRANSPORT_SSH = 1 };

/* "exec" or "ssh": the spelling in MPI_JOB_TRANSPORT, the annotation and --transport. */
const char *mpik8s_transport_name(enum mpik8s_transport t);

/* Parses "exec" or "ssh" (NULL or anything else: -1, *t unchanged); 0 ok. */
int mpik8s_transport_parse(const char *s, enum mpik8s_transport *t);

/* ---- the hostfile (ConfigMap key "hostfile", and the one the agent writes) ---- */
enum mpik8s_hostfile_syntax {
    MPIK8S_HOSTFILE_SLOTS_EQ, /* Open MPI (4 and 5): "host slots=N" */
    MPIK8S_HOSTFILE_COLON,    /* MPICH and Intel MPI Hydra: "host:N" */
};

/* The syntax implementation m reads. */
enum mpik8s_hostfile_syntax mpik8s_hostfile_syntax_for(enum mpik8s_mpi m);

/* Writes one hostfile line for host: "host slots=N\n" or "host:N\n", or "host\n" when
 * slots <= 0. Returns fprintf's result. */
int mpik8s_hostfile_line(FILE *f, enum mpik8s_hostfile_syntax syn, const char *host, long long slots);

/* ---- host -> pod: the one rule (mpik8s/host.c; the agent's hostfile, mpi-rsh, the holder) ----
 * A host names a pod by its first DNS label: "w-0", "w-0.job-worker.ns.svc",
 * "w-0.job-worker.ns.svc.cluster.local" and "w-0.job-worker.ns.svc." all name pod w-0. That label
 * is the pod's hostname as Kubernetes makes it (a DNS-1123 label): 1-63 lower-case letters, digits
 * and '-', starting and ending with a letter or digit, and not all digits ("123" is the IPv4
 * address 0.0.0.123 to a resolver). Upper case is refused, not lower-cased: pod names are
 * lower-case, so "Worker-0" names no pod. The labels after it are DNS labels in either case (DNS
 * ignores case), the whole name at most 253 characters plus a trailing dot. IPv4 and IPv6
 * literals are refused: nothing maps an address to a pod. */
#define MPIK8S_DNS_LABEL_MAX 63
#define MPIK8S_DNS_NAME_MAX 253

/* The pod that host names, by the rule above: its first label, a new string. NULL when host names
 * no pod (or is NULL), with *errmsg: one line naming the host and what was expected
 * ("host \"Worker-0\": pod name must be lower-case letters, digits and '-' (got 'W')"). */
char *mpik8s_host_to_pod(const char *host, char **errmsg);

/* ---- the launcher's termination message (agent/termination.c writes it) ----
 * Line 1: a one-line summary. A later line: MPIK8S_TERM_PHASES followed by a compact JSON
 * object {phase key: RFC 3339 time with ms}, keys from the list below in timeline order. */
#define MPIK8S_TERM_PHASES "phases: "
#define MPIK8S_PHASE_WORKERS_READY "workersReady"
#define MPIK8S_PHASE_WORKERS_REACHABLE "workersReachable"
#define MPIK8S_PHASE_MPIRUN_STARTED "mpirunStarted"
#define MPIK8S_PHASE_FIRST_OUTPUT "firstOutput"
#define MPIK8S_PHASE_FINISHED "finished"

/* A later line: MPIK8S_TERM_FAILURE followed by a compact JSON object saying which rank failed,
 * where and why (agent/failure.c writes it, controller/rank_failure.c reads it). Keys (absent
 * when unknown): */
#define MPIK8S_TERM_FAILURE "failure: "
#define MPIK8S_FAIL_REASON "reason"              /* one of the MPIK8S_FAIL_R_* below (always) */
#define MPIK8S_FAIL_MESSAGE "message"            /* one human line: "rank 1 on pod P (node N) exited with code 3" */
#define MPIK8S_FAIL_RANK "rank"                  /* MPI_COMM_WORLD rank (integer) */
#define MPIK8S_FAIL_PID "pid"                    /* the process id mpirun/Hydra printed (integer) */
#define MPIK8S_FAIL_HOST "host"                  /* the node name mpirun/Hydra printed */
#define MPIK8S_FAIL_POD "pod"                    /* the worker pod */
#define MPIK8S_FAIL_NODE "node"                  /* its spec.nodeName */
#define MPIK8S_FAIL_EXIT_CODE "exitCode"         /* integer */
#define MPIK8S_FAIL_SIGNAL "signal"              /* "SIGSEGV" */
#define MPIK8S_FAIL_SIGNAL_NUMBER "signalNumber" /* integer */
#define MPIK8S_FAIL_OOM "oomKilled"              /* true when the worker's memory cgroup recorded an OOM kill */
#define MPIK8S_FAIL_OOM_SOURCE "oomSource"       /* "OOMKilled" (container state) or "cgroup" (oom_kill counter) */
#define MPIK8S_FAIL_MEMORY_LIMIT "memoryLimit"   /* "512Mi" */
#define MPIK8S_FAIL_MPI "mpi"                    /* "openmpi" or "mpich": whose text was parsed */
#define MPIK8S_FAIL_FORM "form"                  /* which text matched (agent/failure_parse.h) */
/* "mpirun" (its text), "rankmap" (rank placed by the hostfile), "mpirun-exit" (its notice and exit code: no
 * rank), "holder" (the stream holder stopped mpirun after a daemon failed), "watcher" */
#define MPIK8S_FAIL_SOURCE "source"
#define MPIK8S_FAIL_LAST_LINES "lastLines" /* the last lines of output before the report (<= 1 KiB) */
#define MPIK8S_FAIL_R_EXIT_CODE "exit_code"
#define MPIK8S_FAIL_R_SIGNAL "signal"
#define MPIK8S_FAIL_R_OOM "oom"
#define MPIK8S_FAIL_R_WORKER_LOST "worker_lost"
#define MPIK8S_FAIL_R_UNKNOWN "unknown"

/* Parses a termination message: *summary = its first line (new string; NULL for a NULL msg),
 * *phases = the object on its phases line (new reference), NULL when there is none. Returns 0,
 * or -1 when a phases line is there but is not a JSON object (*phases NULL; *summary set). */
int mpik8s_termination_parse(const char *msg, char **summary, struct json_t **phases);

/* The object on a termination message's failure line (new reference), NULL when there is none
 * or it is not a JSON object. */
struct json_t *mpik8s_termination_failure(const char *msg);

#endif
