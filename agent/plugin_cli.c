/* plugin_cli.c - `kubectl mpijob VERB ...`: kubectl's flags (-n, -A, --context, --kubeconfig,
 * -o, --help), each verb's usage, the connection (the plugin reads --context and --kubeconfig
 * itself: kubectl passes them through) and the dispatch to the verb's file. */
#include "plugin.h"

#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "kube/log.h"
#include "kube/parse_int.h"
#include "kube/util.h"

enum { OPT_CONTEXT = 256, OPT_KUBECONFIG, OPT_PREVIOUS, OPT_RANK, OPT_WORKER };

static const struct option plugin_long_opts[] = {
    { "namespace", required_argument, NULL, 'n' },
    { "all-namespaces", no_argument, NULL, 'A' },
    { "context", required_argument, NULL, OPT_CONTEXT },
    { "kubeconfig", required_argument, NULL, OPT_KUBECONFIG },
    { "output", required_argument, NULL, 'o' },
    { "follow", no_argument, NULL, 'f' },
    { "previous", no_argument, NULL, OPT_PREVIOUS },
    { "rank", required_argument, NULL, OPT_RANK },
    { "worker", required_argument, NULL, OPT_WORKER },
    { "verbose", no_argument, NULL, 'v' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
};

struct plugin_verb {
    const char *name;
    int (*fn)(struct agent_session *s, const struct plugin_opts *po);
    const char *usage; /* after "kubectl mpijob " */
    const char *help;
};

static const struct plugin_verb verbs[] = {
    { "get", plugin_get, "get [JOB...] [-n NS | -A] [-o wide|json|yaml|name]",
      "list MPIJobs: NAME, STATE, WORKERS (Running/total), AGE, LAUNCH (created to mpirun started), REASON" },
    { "describe", plugin_describe, "describe JOB [-n NS]",
      "conditions over time, launch phases, the failure, blocked pods, restarts, Kueue admission, Events" },
    { "logs", plugin_logs, "logs JOB [-f] [--previous] [--rank R] [-n NS]",
      "the launcher's output: live (-f follows it), or kept in ConfigMap JOB-log after cleanup" },
    { "why", plugin_why, "why JOB [-n NS]", "the one sentence that says why the job is not Running" },
    { "exec", plugin_exec, "exec JOB --worker I [-n NS] -- CMD [ARGS...]",
      "run CMD in worker I's container (its exit code is the plugin's)" },
    { "hostfile", plugin_hostfile, "hostfile JOB [-n NS]", "the hostfile the job's launcher uses (the job's flavour)" },
};
#define NVERBS (sizeof(verbs) / sizeof(verbs[0]))

static const char *common_flags =
    "Flags:\n"
    "  -n, --namespace NS     the job's namespace (default: the context's, else default)\n"
    "  -A, --all-namespaces   get: every namespace\n"
    "      --context NAME     the kubeconfig context to use\n"
    "      --kubeconfig FILE  the kubeconfig (default: $KUBECONFIG, ~/.kube/config)\n"
    "  -o, --output FORMAT    get: wide, json, yaml or name\n"
    "  -f, --follow           logs: follow the running launcher\n"
    "      --previous         logs: the launcher's previous run (its container's last instance)\n"
    "      --rank R           logs: only rank R's lines (mpirun --tag-output / -prepend-rank)\n"
    "      --worker I         exec: the worker's index\n"
    "  -h, --help             this help\n";

int plugin_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("error: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return 1;
}

static void usage_all(FILE *f)
{
    fprintf(f, "kubectl mpijob: inspect and debug MPIJobs (kubeflow.org)\n\nUsage:\n  kubectl mpijob VERB [flags]\n\n"
               "Verbs:\n");
    for (size_t i = 0; i < NVERBS; i++)
        fprintf(f, "  %-9s %s\n", verbs[i].name, verbs[i].help);
    fprintf(f, "\n%s\nUse \"kubectl mpijob VERB --help\" for more about a verb.\n", common_flags);
}

static void usage_verb(const struct plugin_verb *v)
{
    printf("%s\n\nUsage:\n  kubectl mpijob %s\n\n%s", v->help, v->usage, common_flags);
}

static int set_opt_str(char **dst, const char *v)
{
    free(*dst);
    *dst = strdup(v);
    if (*dst)
        return 0;
    plugin_error("out of memory");
    return -1;
}

static int parse_output(const char *v, enum plugin_output *out)
{
    static const char *names[] = { "", "wide", "json", "yaml", "name" };
    for (size_t i = 1; i < sizeof(names) / sizeof(names[0]); i++)
        if (!strcmp(v, names[i])) {
            *out = (enum plugin_output)i;
            return 0;
        }
    plugin_error("unable to match a printer suitable for the output format \"%s\", allowed formats are: "
                 "json,name,wide,yaml",
                 v);
    return -1;
}

static int parse_index(const char *flag, const char *v, long *out)
{
    long long n;
    if (kube_parse_int(v, 0, 1000000, &n) < 0) {
        plugin_error("%s: expected a whole number >= 0, got \"%s\"", flag, v);
        return -1;
    }
    *out = (long)n;
    return 0;
}

/* Applies one flag; -1 on a bad value (printed). */
static int apply(struct plugin_opts *po, int c, const char *arg)
{
    if (arg && *arg == '=' && (c == 'n' || c == 'o')) /* -o=json, -n=ns: kubectl (pflag) takes them */
        arg++;
    switch (c) {
    case 'n': return set_opt_str(&po->namespace, arg);
    case 'A': po->all_namespaces = 1; return 0;
    case 'o': return parse_output(arg, &po->output);
    case 'f': po->follow = 1; return 0;
    case 'v': po->verbose++; return 0;
    case OPT_CONTEXT: return set_opt_str(&po->context, arg);
    case OPT_KUBECONFIG: return set_opt_str(&po->kubeconfig, arg);
    case OPT_PREVIOUS: po->previous = 1; return 0;
    case OPT_RANK: return parse_index("--rank", arg, &po->rank);
    case OPT_WORKER: return parse_index("--worker", arg, &po->worker);
    }
    return -1;
}

/* Parses argv (argv[0] is the verb); the words after "--" are the exec command.
 * 0 ok, 1 help printed, -1 error printed. */
static int parse(struct plugin_opts *po, const struct plugin_verb *v, int argc, char **argv)
{
    int split = argc;
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--")) {
            split = i;
            break;
        }
    po->cmd = argv + (split < argc ? split + 1 : argc);
    po->ncmd = split < argc ? argc - split - 1 : 0;
    optind = 0;
    opterr = 0;
    int c;
    while ((c = getopt_long(split, argv, ":n:Ao:fvh", plugin_long_opts, NULL)) != -1) {
        if (c == 'h') {
            usage_verb(v);
            return 1;
        }
        if (c == '?' || c == ':') {
            const char *bad = argv[optind - 1];
            plugin_error("%s \"%s\" for \"kubectl mpijob %s\" (see kubectl mpijob %s --help)",
                         c == ':' ? "flag needs an argument:" : "unknown flag:", bad, v->name, v->name);
            return -1;
        }
        if (apply(po, c, optarg) < 0)
            return -1;
    }
    po->args = argv + optind;
    po->nargs = split - optind;
    return 0;
}

/* Connects s as kubectl would: --kubeconfig, else $KUBECONFIG, else ~/.kube/config; --context;
 * the namespace from -n, else the context's, else default. 0, or -1 (printed). */
static int connect_session(struct agent_session *s, struct agent_opts *o, const struct plugin_opts *po)
{
    memset(o, 0, sizeof(*o));
    o->cmd = po->verb;
    o->launcher_uid = -1;
    if ((po->namespace && !(o->namespace = strdup(po->namespace))) ||
        (po->kubeconfig && !(o->kubeconfig = strdup(po->kubeconfig))) ||
        (po->context && !(o->context = strdup(po->context))) || !(o->hostfile = strdup("/nonexistent/kubectl-mpijob"))) {
        plugin_error("out of memory");
        return -1;
    }
    o->hostfile_given = 0;
    char *err = NULL;
    if (agent_session_connect(s, o, &err) < 0) {
        plugin_error("%s", err ? err : "cannot connect");
        free(err);
        return -1;
    }
    return 0;
}

static void opts_free(struct plugin_opts *po)
{
    free(po->namespace);
    free(po->context);
    free(po->kubeconfig);
}

int agent_plugin_main(int argc, char **argv)
{
    kube_log_set_component(PLUGIN_NAME);
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
        usage_all(argc < 2 ? stderr : stdout);
        return argc < 2 ? 1 : 0;
    }
    const struct plugin_verb *v = NULL;
    for (size_t i = 0; i < NVERBS; i++)
        if (!strcmp(argv[1], verbs[i].name))
            v = &verbs[i];
    if (!v) {
        plugin_error("unknown command \"%s\" for \"kubectl mpijob\" (verbs: get, describe, logs, why, exec, hostfile)",
                     argv[1]);
        return 1;
    }
    struct plugin_opts po = { .verb = v->name, .rank = -1, .worker = -1 };
    int rc = parse(&po, v, argc - 1, argv + 1);
    if (rc != 0) {
        opts_free(&po);
        return rc > 0 ? 0 : 1;
    }
    kube_log_set_verbosity(po.verbose);
    struct agent_opts o;
    struct agent_session s = { 0 };
    rc = connect_session(&s, &o, &po) < 0 ? 1 : v->fn(&s, &po);
    agent_session_close(&s);
    agent_opts_free(&o);
    opts_free(&po);
    return rc;
}
