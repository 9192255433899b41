/* options.c - the operator's command line (upstream's flags where they exist):
 * --kubeconfig, --namespace, --threadiness, --monitoring-port, --agent-image,
 * --gang-scheduling, --cluster-domain, leader election, -v, --version. */
#include "controller.h"
#include "jsonutil.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MPI_OPERATOR_VERSION "0.1.0"

static const char usage[] =
    "usage: mpi-operator [flags]\n"
    "  --kubeconfig PATH          kubeconfig (default: $KUBECONFIG, in-cluster, ~/.kube/config)\n"
    "  --context NAME             kubeconfig context\n"
    "  --namespace NS             watch one namespace (default $KUBEFLOW_NAMESPACE; empty = all)\n"
    "  --threadiness N            reconcile workers (default 2)\n"
    "  --monitoring-port PORT     serve /metrics, /healthz, /readyz (default 0 = off)\n"
    "  --agent-image IMAGE        launcher init container image (default " DEFAULT_AGENT_IMAGE ")\n"
    "  --gang-scheduling NAME     volcano | scheduler-plugins (default none)\n"
    "  --cluster-domain DOMAIN    appended to worker host names in the hostfile (default none)\n"
    "  --leader-elect=BOOL        run leader election (default true)\n"
    "  --lock-namespace NS        namespace of the leader Lease (default mpi-operator)\n"
    "  --lease-duration S, --renew-deadline S, --retry-period S   (default 15, 5, 3)\n"
    "  -v N                       verbosity (0 info, 1 debug, 2 trace)\n"
    "  --version                  print the version\n";

enum { O_KCFG = 256, O_CTX, O_NS, O_THR, O_MON, O_AGENT, O_GANG, O_DOMAIN, O_LE, O_LOCKNS, O_LEASE, O_RENEW, O_RETRY,
       O_VERSION, O_HELP, O_MASTER };

static int to_int(const char *flag, const char *v, int min, int max, int *out, char **err)
{
    char *end;
    long n = strtol(v, &end, 10);
    if (!*v || *end || n < min || n > max)
        return ju_err(err, "%s: expected an integer from %d to %d, got \"%s\"", flag, min, max, v);
    *out = (int)n;
    return 0;
}

static void defaults(struct options *o)
{
    memset(o, 0, sizeof *o);
    build_opts_default(&o->build);
    o->ns = getenv("KUBEFLOW_NAMESPACE");
    if (o->ns && !*o->ns)
        o->ns = NULL;
    o->threadiness = 2;
    o->leader_elect = 1;
    o->lock_ns = "mpi-operator";
    o->lock_name = "mpi-operator";
    o->lease_s = 15;
    o->renew_deadline_s = 5;
    o->retry_s = 3;
}

int options_parse(int argc, char **argv, struct options *o, char **err)
{
    static const struct option longs[] = {
        { "kubeconfig", 1, 0, O_KCFG }, { "kubeConfig", 1, 0, O_KCFG }, { "context", 1, 0, O_CTX },
        { "namespace", 1, 0, O_NS }, { "threadiness", 1, 0, O_THR }, { "monitoring-port", 1, 0, O_MON },
        { "agent-image", 1, 0, O_AGENT }, { "gang-scheduling", 1, 0, O_GANG }, { "cluster-domain", 1, 0, O_DOMAIN },
        { "leader-elect", 1, 0, O_LE }, { "lock-namespace", 1, 0, O_LOCKNS }, { "lease-duration", 1, 0, O_LEASE },
        { "renew-deadline", 1, 0, O_RENEW }, { "retry-period", 1, 0, O_RETRY }, { "version", 0, 0, O_VERSION },
        { "help", 0, 0, O_HELP }, { "master", 1, 0, O_MASTER }, { 0, 0, 0, 0 },
    };
    defaults(o);
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":v:h", longs, NULL)) != -1) {
        int rc = 0;
        switch (c) {
        case O_KCFG: o->kubeconfig = optarg; break;
        case O_CTX: o->context = optarg; break;
        case O_NS: o->ns = *optarg ? optarg : NULL; break;
        case O_THR: rc = to_int("--threadiness", optarg, 1, 64, &o->threadiness, err); break;
        case O_MON: rc = to_int("--monitoring-port", optarg, 0, 65535, &o->monitoring_port, err); break;
        case O_AGENT: o->build.agent_image = optarg; break;
        case O_GANG:
            if (*optarg && strcmp(optarg, "volcano") != 0 && strcmp(optarg, "scheduler-plugins") != 0)
                return ju_err(err, "--gang-scheduling: expected volcano or scheduler-plugins, got \"%s\"", optarg);
            o->build.gang = optarg;
            break;
        case O_DOMAIN: o->build.cluster_domain = optarg; break;
        case O_LE:
            if (strcmp(optarg, "true") != 0 && strcmp(optarg, "false") != 0)
                return ju_err(err, "--leader-elect: expected true or false, got \"%s\"", optarg);
            o->leader_elect = strcmp(optarg, "true") == 0;
            break;
        case O_LOCKNS: o->lock_ns = optarg; break;
        case O_LEASE: rc = to_int("--lease-duration", optarg, 1, 3600, &o->lease_s, err); break;
        case O_RENEW: rc = to_int("--renew-deadline", optarg, 1, 3600, &o->renew_deadline_s, err); break;
        case O_RETRY: rc = to_int("--retry-period", optarg, 1, 3600, &o->retry_s, err); break;
        case 'v': rc = to_int("-v", optarg, 0, 9, &o->verbosity, err); break;
        case O_VERSION: printf("mpi-operator %s\n", MPI_OPERATOR_VERSION); return 1;
        case 'h':
        case O_HELP: fputs(usage, stdout); return 1;
        case O_MASTER: return ju_err(err, "--master: not supported; use --kubeconfig");
        case ':': return ju_err(err, "%s: missing value", argv[optind - 1]);
        default: return ju_err(err, "unknown flag %s (see --help)", argv[optind - 1]);
        }
        if (rc < 0)
            return -1;
    }
    if (optind < argc)
        return ju_err(err, "unexpected argument \"%s\" (see --help)", argv[optind]);
    if (o->renew_deadline_s >= o->lease_s)
        return ju_err(err, "--renew-deadline (%d) must be shorter than --lease-duration (%d)", o->renew_deadline_s, o->lease_s);
    return 0;
}
