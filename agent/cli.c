/* cli.c - command-line and environment parsing shared by every subcommand:
 * flags win over the environment the controller sets (MPI_JOB_*, MPI_AGENT_*),
 * which wins over defaults. Bad values give one line naming the flag/variable. */
#include "agent.h"

#include <errno.h>
#include <limits.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/util.h"
#include "rshwatch.h"

#define DEFAULT_TIMEOUT_S 900.0
#define DEFAULT_GRACE_S 10.0
#define DEFAULT_HOSTFILE MPIK8S_HOSTFILE
#define DEFAULT_DEST MPIK8S_AGENT_DIR

enum {
    OPT_KUBECONFIG = 256,
    OPT_JOB,
    OPT_HOSTFILE,
    OPT_MPI,
    OPT_TRANSPORT,
    OPT_CONTAINER,
    OPT_TIMEOUT,
    OPT_SLOTS,
    OPT_WORKERS,
    OPT_DEST,
    OPT_NO_DELIVER,
    OPT_NO_REACH,
    OPT_PROGRESS,
    OPT_NETWORK,
    OPT_RSH_TIMEOUT,
    OPT_GRACE,
    OPT_NO_WAIT,
    OPT_VERSION,
    OPT_SSH_DIR,
    OPT_SSH_PORT,
    OPT_CONTEXT,
};

static const struct option long_opts[] = {
    { "namespace", required_argument, NULL, 'n' },
    { "kubeconfig", required_argument, NULL, OPT_KUBECONFIG },
    { "context", required_argument, NULL, OPT_CONTEXT },
    { "verbose", no_argument, NULL, 'v' },
    { "help", no_argument, NULL, 'h' },
    { "version", no_argument, NULL, OPT_VERSION },
    { "job", required_argument, NULL, OPT_JOB },
    { "hostfile", required_argument, NULL, OPT_HOSTFILE },
    { "mpi", required_argument, NULL, OPT_MPI },
    { "transport", required_argument, NULL, OPT_TRANSPORT },
    { "container", required_argument, NULL, OPT_CONTAINER },
    { "timeout", required_argument, NULL, OPT_TIMEOUT },
    { "slots", required_argument, NULL, OPT_SLOTS },
    { "workers", required_argument, NULL, OPT_WORKERS },
    { "dest", required_argument, NULL, OPT_DEST },
    { "no-deliver", no_argument, NULL, OPT_NO_DELIVER },
    { "no-reach-check", no_argument, NULL, OPT_NO_REACH },
    { "progress-timeout", required_argument, NULL, OPT_PROGRESS },
    { "network-timeout", required_argument, NULL, OPT_NETWORK },
    { "rsh-timeout", required_argument, NULL, OPT_RSH_TIMEOUT },
    { "grace", required_argument, NULL, OPT_GRACE },
    { "no-wait", no_argument, NULL, OPT_NO_WAIT },
    { "ssh-dir", required_argument, NULL, OPT_SSH_DIR },
    { "ssh-port", required_argument, NULL, OPT_SSH_PORT },
    { "follow", no_argument, NULL, 'f' },
    { NULL, 0, NULL, 0 },
};

int agent_duration_parse(const char *s, double *out)
{
    if (!s || !*s)
        return -1;
    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || v < 0 || v != v)
        return -1;
    double mul = 1;
    if (!strcmp(end, "ms"))
        mul = 0.001;
    else if (!strcmp(end, "m"))
        mul = 60;
    else if (!strcmp(end, "h"))
        mul = 3600;
    else if (*end && strcmp(end, "s"))
        return -1;
    if (v * mul > 1e9)
        return -1;
    *out = v * mul;
    return 0;
}

/* Parses a non-negative int (what names the flag or variable in the error). */
static int parse_count(const char *what, const char *s, int *out, char **errmsg)
{
    long long v;
    if (kube_parse_int(s, 0, 1000000, &v) < 0)
        return kube_set_err(errmsg, "%s: expected a whole number >= 0, got \"%s\"", what, s);
    *out = (int)v;
    return 0;
}

/* A uid as Kubernetes allows runAsUser: 0..2147483647 (OpenShift assigns ones like 1000870000). */
static int parse_uid(const char *what, const char *s, int *out, char **errmsg)
{
    long long v;
    if (kube_parse_int(s, 0, INT_MAX, &v) < 0)
        return kube_set_err(errmsg, "%s: expected a uid 0-%d, got \"%s\"", what, INT_MAX, s);
    *out = (int)v;
    return 0;
}

static int set_str(char **dst, const char *v, char **errmsg)
{
    free(*dst);
    *dst = strdup(v);
    if (!*dst)
        return kube_set_err(errmsg, "out of memory");
    return 0;
}

static int parse_duration_opt(const char *what, const char *s, double *out, char **errmsg)
{
    if (agent_duration_parse(s, out) == 0)
        return 0;
    return kube_set_err(errmsg, "%s: expected a duration like 90, 90s, 15m or 250ms, got \"%s\"", what, s);
}

static int parse_transport(const char *what, const char *s, enum mpik8s_transport *t, char **errmsg)
{
    if (mpik8s_transport_parse(s, t) < 0)
        return kube_set_err(errmsg, "%s: expected exec or ssh, got \"%s\"", what, s);
    return 0;
}

static int parse_mpi_opt(const char *what, const char *s, enum mpik8s_mpi *m, char **errmsg)
{
    if (mpik8s_mpi_parse(s, m) == 0)
        return 0;
    return kube_set_err(errmsg, "%s: expected openmpi, mpich or intel, got \"%s\"", what, s);
}

/* Reads the in-cluster namespace file, if any. */
static char *in_cluster_namespace(void)
{
    const char *dir = getenv("KUBE_SA_DIR");
    char *path = kube_strdup_printf("%s/namespace", dir ? dir : "/var/run/secrets/kubernetes.io/serviceaccount");
    char *text = NULL, *err = NULL;
    size_t len = 0;
    if (path && kube_read_file(path, 256, &text, &len, &err) == 0) {
        text[strcspn(text, " \t\r\n")] = '\0';
        if (!*text) {
            free(text);
            text = NULL;
        }
    }
    free(err);
    free(path);
    return text;
}

/* Fills defaults from the environment the controller sets; 0 ok, -1 with *errmsg naming the variable. */
static int opts_from_env(struct agent_opts *o, char **errmsg)
{
    const char *v;
    o->timeout_s = DEFAULT_TIMEOUT_S;
    o->grace_s = DEFAULT_GRACE_S;
    o->network_timeout_s = MPIK8S_NETWORK_TIMEOUT_DEFAULT;
    o->rsh_timeout_s = AGENT_RSHWATCH_DEFAULT_S;
    o->daemon_exit_s = MPIK8S_RSH_DAEMON_EXIT_DEFAULT_S;
    o->ssh_port = 2222;
    o->launcher_uid = -1;
    if ((v = getenv(MPIK8S_ENV_JOB_NAME)) && *v && set_str(&o->job, v, errmsg) < 0)
        return -1;
    if ((v = getenv(MPIK8S_ENV_JOB_NAMESPACE)) && *v && set_str(&o->namespace, v, errmsg) < 0)
        return -1;
    if ((v = getenv(MPIK8S_ENV_WORKER_CONTAINER)) && *v && set_str(&o->container, v, errmsg) < 0)
        return -1;
    if ((v = getenv(MPIK8S_ENV_SSH_DIR)) && *v && set_str(&o->ssh_dir, v, errmsg) < 0)
        return -1;
    if ((v = getenv(MPIK8S_ENV_TRANSPORT)) && *v && parse_transport(MPIK8S_ENV_TRANSPORT, v, &o->transport, errmsg) < 0)
        return -1;
    if ((v = getenv(MPIK8S_ENV_MPI_IMPLEMENTATION)) && *v &&
        parse_mpi_opt(MPIK8S_ENV_MPI_IMPLEMENTATION, v, &o->mpi, errmsg) < 0)
        return -1;
    if ((v = getenv(MPIK8S_ENV_SSH_PORT)) && *v && parse_count(MPIK8S_ENV_SSH_PORT, v, &o->ssh_port, errmsg) < 0)
        return -1;
    if ((v = getenv(MPIK8S_ENV_LAUNCHER_UID)) && *v && parse_uid(MPIK8S_ENV_LAUNCHER_UID, v, &o->launcher_uid, errmsg) < 0)
        return -1;
    if ((v = getenv(MPIK8S_ENV_WORKERS)) && *v && parse_count(MPIK8S_ENV_WORKERS, v, &o->workers, errmsg) < 0)
        return -1;
    if ((v = getenv(MPIK8S_ENV_SLOTS)) && *v && parse_count(MPIK8S_ENV_SLOTS, v, &o->slots, errmsg) < 0)
        return -1;
    if ((v = getenv(MPIK8S_ENV_AGENT_TIMEOUT)) && *v &&
        parse_duration_opt(MPIK8S_ENV_AGENT_TIMEOUT, v, &o->timeout_s, errmsg) < 0)
        return -1;
    if ((v = getenv(MPIK8S_ENV_PROGRESS_TIMEOUT)) && *v &&
        parse_duration_opt(MPIK8S_ENV_PROGRESS_TIMEOUT, v, &o->progress_timeout_s, errmsg) < 0)
        return -1;
    if ((v = getenv(MPIK8S_ENV_NETWORK_TIMEOUT)) && *v &&
        parse_duration_opt(MPIK8S_ENV_NETWORK_TIMEOUT, v, &o->network_timeout_s, errmsg) < 0)
        return -1;
    if ((v = getenv(AGENT_ENV_RSH_TIMEOUT)) && *v &&
        parse_duration_opt(AGENT_ENV_RSH_TIMEOUT, v, &o->rsh_timeout_s, errmsg) < 0)
        return -1;
    if ((v = getenv(MPIK8S_RSH_ENV_DAEMON_EXIT_S)) && *v &&
        parse_duration_opt(MPIK8S_RSH_ENV_DAEMON_EXIT_S, v, &o->daemon_exit_s, errmsg) < 0)
        return -1;
    if ((v = getenv(MPIK8S_ENV_IP_FAMILY)) && *v && !(o->ip_family = mpik8s_ip_family_parse(v)))
        return kube_set_err(errmsg, "%s: expected IPv4 or IPv6, got \"%s\"", MPIK8S_ENV_IP_FAMILY, v);
    if ((v = getenv("MPI_AGENT_TERMINATION_LOG")) && *v && set_str(&o->termination_log, v, errmsg) < 0)
        return -1;
    return 0;
}

/* Applies one parsed flag; 0 ok, -1 with *errmsg on a bad value. */
static int apply_flag(struct agent_opts *o, int c, const char *arg, char **errmsg)
{
    switch (c) {
    case 'n': return set_str(&o->namespace, arg, errmsg);
    case 'v': o->verbose++; return 0;
    case 'f': o->follow = 1; return 0;
    case OPT_KUBECONFIG: return set_str(&o->kubeconfig, arg, errmsg);
    case OPT_CONTEXT: return set_str(&o->context, arg, errmsg);
    case OPT_JOB: return set_str(&o->job, arg, errmsg);
    case OPT_HOSTFILE: o->hostfile_given = 1; return set_str(&o->hostfile, arg, errmsg);
    case OPT_MPI: return parse_mpi_opt("--mpi", arg, &o->mpi, errmsg);
    case OPT_TRANSPORT: return parse_transport("--transport", arg, &o->transport, errmsg);
    case OPT_CONTAINER: return set_str(&o->container, arg, errmsg);
    case OPT_TIMEOUT: return parse_duration_opt("--timeout", arg, &o->timeout_s, errmsg);
    case OPT_SLOTS: return parse_count("--slots", arg, &o->slots, errmsg);
    case OPT_WORKERS: return parse_count("--workers", arg, &o->workers, errmsg);
    case OPT_DEST: return set_str(&o->dest, arg, errmsg);
    case OPT_NO_DELIVER: o->no_deliver = 1; return 0;
    case OPT_NO_REACH: o->no_reach = 1; return 0;
    case OPT_PROGRESS: return parse_duration_opt("--progress-timeout", arg, &o->progress_timeout_s, errmsg);
    case OPT_NETWORK: return parse_duration_opt("--network-timeout", arg, &o->network_timeout_s, errmsg);
    case OPT_RSH_TIMEOUT: return parse_duration_opt("--rsh-timeout", arg, &o->rsh_timeout_s, errmsg);
    case OPT_GRACE: return parse_duration_opt("--grace", arg, &o->grace_s, errmsg);
    case OPT_NO_WAIT: o->no_wait = 1; return 0;
    case OPT_SSH_DIR: return set_str(&o->ssh_dir, arg, errmsg);
    case OPT_SSH_PORT: return parse_count("--ssh-port", arg, &o->ssh_port, errmsg);
    }
    return kube_set_err(errmsg, "option %d is not handled", c);
}

static void usage(const char *cmd)
{
    fprintf(stdout,
            "usage: mpi-agent %s [options]%s\n"
            "  -n, --namespace NS      job namespace (default: $MPI_JOB_NAMESPACE, in-cluster, kubeconfig)\n"
            "      --job NAME          MPIJob name (default: $MPI_JOB_NAME)\n"
            "      --kubeconfig FILE   kubeconfig (default: in-cluster, $KUBECONFIG, ~/.kube/config)\n"
            "      --context NAME      the kubeconfig context to use (default: its current-context)\n"
            "      --hostfile FILE     hostfile to read workers from (default /etc/mpi/hostfile)\n"
            "      --mpi FLAVOUR       openmpi (4 and 5) | mpich | intel (default: $MPI_JOB_MPI_IMPLEMENTATION or openmpi)\n"
            "      --transport T       exec | ssh (default: $MPI_JOB_TRANSPORT or exec)\n"
            "      --container NAME    worker container for exec (default: $MPI_JOB_WORKER_CONTAINER)\n"
            "      --timeout DUR       bound on the wait for workers (default 15m; $MPI_AGENT_TIMEOUT)\n"
            "      --slots N           slots per worker (default: $MPI_JOB_SLOTS or 1)\n"
            "      --workers N         expected worker count (default: $MPI_JOB_WORKERS)\n"
            "      --dest DIR          init: where to deliver the bundle (default /opt/kube)\n"
            "      --no-deliver        init: skip delivering the bundle\n"
            "      --no-reach-check    skip the reachability check through the transport\n"
            "      --no-wait           run: do not wait for workers (init did)\n"
            "      --progress-timeout DUR  run: stop mpirun after DUR of silent output (default off)\n"
            "      --network-timeout DUR  run: stop mpirun when a worker has not answered over the pod\n"
            "                          network for DUR (default 60s; 0 off; $MPI_AGENT_NETWORK_TIMEOUT)\n"
            "      --rsh-timeout DUR   run: stop mpirun when it started nothing, not even mpi-rsh,\n"
            "                          DUR after it started (another launch way is stopped at once;\n"
            "                          default 120s; 0 off: no launch watch; $MPI_AGENT_RSH_TIMEOUT)\n"
            "  $MPI_RSH_DAEMON_EXIT_S  run: stop mpirun DUR after an MPI daemon it launched failed\n"
            "                          while it ran on (default 30s; 0 off)\n"
            "      --grace DUR         run: SIGTERM to SIGKILL delay (default 10s)\n"
            "  -f, --follow            logs: follow the running launcher's log\n"
            "  -v, --verbose           more logging (repeat for trace)\n"
            "      --version           print the version\n",
            cmd,
            !strcmp(cmd, "run")                              ? " -- CMD [ARGS...]"
            : !strcmp(cmd, "status") || !strcmp(cmd, "logs") ? " JOB"
                                                             : "");
}

int agent_opts_parse(struct agent_opts *o, const char *cmd, int argc, char **argv, char **errmsg)
{
    memset(o, 0, sizeof(*o));
    o->cmd = cmd;
    if (opts_from_env(o, errmsg) < 0)
        return -1;
    optind = 0; /* 0: full re-initialisation of GNU getopt (optstring may differ) */
    opterr = 0;
    int c;
    /* run keeps everything after CMD for CMD; other commands accept options anywhere */
    const char *optstring = !strcmp(cmd, "run") ? "+n:vh" : "n:vhf";
    while ((c = getopt_long(argc, argv, optstring, long_opts, NULL)) != -1) {
        if (c == 'h') {
            usage(cmd);
            return 1;
        }
        if (c == OPT_VERSION) {
            printf("mpi-agent %s\n", AGENT_VERSION);
            return 1;
        }
        if (c == '?' || c == ':')
            return kube_set_err(errmsg, "bad option \"%s\" (see mpi-agent %s --help)", argv[optind - 1], cmd);
        if (apply_flag(o, c, optarg, errmsg) < 0)
            return -1;
    }
    o->argv = argv + optind;
    o->argc = argc - optind;
    if (!o->hostfile && set_str(&o->hostfile, DEFAULT_HOSTFILE, errmsg) < 0)
        return -1;
    if (!o->dest && set_str(&o->dest, DEFAULT_DEST, errmsg) < 0)
        return -1;
    if (!o->namespace)
        o->namespace = in_cluster_namespace();
    return 0;
}

void agent_opts_free(struct agent_opts *o)
{
    free(o->namespace);
    free(o->job);
    free(o->kubeconfig);
    free(o->context);
    free(o->hostfile);
    free(o->dest);
    free(o->container);
    free(o->ssh_dir);
    free(o->termination_log);
    memset(o, 0, sizeof(*o));
}
