/* options.c - the operator's command line, in Go's flag syntax as upstream's
 * operator reads it (-flag, --flag, -flag=value, -flag value; a bool flag
 * alone is true; "--" ends the flags): upstream's flags (--kubeConfig,
 * --master, --namespace, --threadiness, --monitoring-port, --gang-scheduling,
 * --lock-namespace, --cluster-domain, --kube-api-qps, --kube-api-burst,
 * --controller-queue-rate-limit, --controller-queue-burst, --version), klog's
 * usual ones (-v, -alsologtostderr, -logtostderr, -stderrthreshold) and ours
 * (--kubeconfig, --context, --agent-image, leader election). */
#include "options.h"
#include "kube/json.h"
#include "kube/util.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MPI_OPERATOR_VERSION "0.1.0"

static const char usage[] =
    "usage: mpi-operator [flags]   (Go flag syntax: -flag, --flag, -flag=value, -flag value)\n"
    "  --kubeconfig PATH          kubeconfig (default: $KUBECONFIG, in-cluster, ~/.kube/config);\n"
    "                             also --kubeConfig (upstream's spelling)\n"
    "  --master URL               API server URL, overriding the kubeconfig's (upstream's flag)\n"
    "  --context NAME             kubeconfig context\n"
    "  --namespace NS             watch one namespace (default $KUBEFLOW_NAMESPACE; empty = all)\n"
    "  --threadiness N            reconcile workers (default 2)\n"
    "  --monitoring-port PORT     serve /metrics, /healthz, /readyz (default 0 = off)\n"
    "  --agent-image IMAGE        launcher init container image (default " DEFAULT_AGENT_IMAGE ")\n"
    "  --gang-scheduling NAME     volcano, or the scheduler-plugins scheduler's name (default none)\n"
    "  --cluster-domain DOMAIN    appended to worker host names in the hostfile (default none)\n"
    "  --kube-api-qps Q           client-side limit of API requests per second (default 0: none)\n"
    "  --kube-api-burst N         burst of that limit (default 10)\n"
    "  --controller-queue-rate-limit N, --controller-queue-burst N   (default 10, 100)\n"
    "  --leader-elect[=BOOL]      run leader election (default true)\n"
    "  --lock-namespace NS        namespace of the leader Lease (default mpi-operator)\n"
    "  --lease-duration S, --renew-deadline S, --retry-period S   (default 15, 5, 3)\n"
    "  -v N                       verbosity (0 info, 1 debug, 2 trace)\n"
    "  -alsologtostderr, -logtostderr, -stderrthreshold SEVERITY   klog's flags, accepted\n"
    "                             (the log always goes to stderr)\n"
    "  --version                  print the version\n";

enum ftype { F_STR, F_INT, F_DOUBLE, F_BOOL, F_SPECIAL };

struct flag {
    const char *name;
    enum ftype type;
    size_t off;   /* offset in struct options (F_STR/F_INT/F_DOUBLE/F_BOOL) */
    int min, max; /* F_INT/F_DOUBLE range */
};

#define OFF(f) offsetof(struct options, f)

static const struct flag flags[] = {
    { "kubeconfig", F_STR, OFF(kubeconfig), 0, 0 },
    { "kubeConfig", F_STR, OFF(kubeconfig), 0, 0 },
    { "master", F_SPECIAL, 0, 0, 0 },
    { "context", F_STR, OFF(context), 0, 0 },
    { "namespace", F_SPECIAL, 0, 0, 0 },
    { "threadiness", F_INT, OFF(threadiness), 1, 64 },
    { "monitoring-port", F_INT, OFF(monitoring_port), 0, 65535 },
    { "agent-image", F_STR, OFF(build.agent_image), 0, 0 },
    { "gang-scheduling", F_SPECIAL, 0, 0, 0 },
    { "cluster-domain", F_STR, OFF(build.cluster_domain), 0, 0 },
    { "kube-api-qps", F_DOUBLE, OFF(kube_api_qps), 0, 100000 },
    { "kube-api-burst", F_INT, OFF(kube_api_burst), 0, 100000 },
    { "controller-queue-rate-limit", F_INT, OFF(queue_rate_limit), 1, 100000 },
    { "controller-queue-burst", F_INT, OFF(queue_burst), 1, 100000 },
    { "leader-elect", F_BOOL, OFF(leader_elect), 0, 0 },
    { "lock-namespace", F_STR, OFF(lock_ns), 0, 0 },
    { "lease-duration", F_INT, OFF(lease_s), 1, 3600 },
    { "renew-deadline", F_INT, OFF(renew_deadline_s), 1, 3600 },
    { "retry-period", F_INT, OFF(retry_s), 1, 3600 },
    { "v", F_INT, OFF(verbosity), 0, 9 },
    { "alsologtostderr", F_BOOL, OFF(alsologtostderr), 0, 0 },
    { "logtostderr", F_BOOL, OFF(logtostderr), 0, 0 },
    { "stderrthreshold", F_SPECIAL, 0, 0, 0 },
    { "version", F_SPECIAL, 0, 0, 0 },
    { "help", F_SPECIAL, 0, 0, 0 },
    { "h", F_SPECIAL, 0, 0, 0 },
};

static void defaults(struct options *o)
{
    memset(o, 0, sizeof *o);
    objects_build_opts_default(&o->build);
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
    o->kube_api_qps = 0; /* no limit by default (upstream: 5/10): see docs/controller.md */
    o->kube_api_burst = 10;
    o->queue_rate_limit = 10;
    o->queue_burst = 100;
    o->logtostderr = 1;
}

static const struct flag *lookup(const char *name, size_t n)
{
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++)
        if (strlen(flags[i].name) == n && strncmp(flags[i].name, name, n) == 0)
            return &flags[i];
    return NULL;
}

/* Go's strconv.ParseBool. */
static int parse_bool(const char *flag, const char *v, int *out, char **errmsg)
{
    static const char *const t[] = { "1", "t", "T", "true", "TRUE", "True" };
    static const char *const f[] = { "0", "f", "F", "false", "FALSE", "False" };
    for (size_t i = 0; i < 6; i++) {
        if (strcmp(v, t[i]) == 0)
            return *out = 1, 0;
        if (strcmp(v, f[i]) == 0)
            return *out = 0, 0;
    }
    return kube_set_err(errmsg, "--%s: expected true or false, got \"%s\"", flag, v);
}

static int parse_int(const struct flag *f, const char *v, int *out, char **errmsg)
{
    long long n;
    if (kube_parse_int(v, f->min, f->max, &n) < 0)
        return kube_set_err(errmsg, "--%s: expected an integer from %d to %d, got \"%s\"", f->name, f->min, f->max, v);
    *out = (int)n;
    return 0;
}

static int parse_double(const struct flag *f, const char *v, double *out, char **errmsg)
{
    char *end;
    double d = strtod(v, &end);
    if (!*v || *end || !(d >= f->min && d <= f->max))
        return kube_set_err(errmsg, "--%s: expected a number from %d to %d, got \"%s\"", f->name, f->min, f->max, v);
    *out = d;
    return 0;
}

/* klog's severity: a name (any case) or its number. */
static int parse_severity(const char *v, int *out, char **errmsg)
{
    static const char *const names[] = { "INFO", "WARNING", "ERROR", "FATAL" };
    for (int i = 0; i < 4; i++) {
        char num[2] = { (char)('0' + i), 0 };
        if (strcasecmp(v, names[i]) == 0 || strcmp(v, num) == 0)
            return *out = i, 0;
    }
    return kube_set_err(errmsg, "--stderrthreshold: expected INFO, WARNING, ERROR or FATAL (or 0-3), got \"%s\"", v);
}

/* Flags with their own checks or effects; 1 = exit 0 (help/version printed). */
static int set_special(struct options *o, const char *name, const char *v, char **errmsg)
{
    if (strcmp(name, "namespace") == 0) {
        o->ns = *v ? v : NULL;
    } else if (strcmp(name, "gang-scheduling") == 0) {
        /* as upstream: "volcano" = Volcano's PodGroups; any other name is the scheduler
         * (schedulerName) of scheduler-plugins' coscheduling PodGroups */
        o->build.gang = v;
    } else if (strcmp(name, "master") == 0) {
        if (*v && strncmp(v, "https://", 8) != 0 && strncmp(v, "http://", 7) != 0)
            return kube_set_err(errmsg, "--master: expected an http:// or https:// URL, got \"%s\"", v);
        o->master = *v ? v : NULL;
    } else if (strcmp(name, "stderrthreshold") == 0) {
        return parse_severity(v, &o->stderrthreshold, errmsg);
    } else if (strcmp(name, "version") == 0) {
        printf("mpi-operator %s\n", MPI_OPERATOR_VERSION);
        return 1;
    } else {
        fputs(usage, stdout);
        return 1;
    }
    return 0;
}

static int is_boolish(const struct flag *f)
{
    return f->type == F_BOOL || strcmp(f->name, "version") == 0 || strcmp(f->name, "help") == 0 || strcmp(f->name, "h") == 0;
}

static int set_flag(struct options *o, const struct flag *f, const char *v, char **errmsg)
{
    char *base = (char *)o;
    switch (f->type) {
    case F_STR: *(const char **)(base + f->off) = v; return 0;
    case F_INT: return parse_int(f, v, (int *)(base + f->off), errmsg);
    case F_DOUBLE: return parse_double(f, v, (double *)(base + f->off), errmsg);
    case F_BOOL: return parse_bool(f->name, v, (int *)(base + f->off), errmsg);
    case F_SPECIAL: break;
    }
    return set_special(o, f->name, v, errmsg);
}

/* One flag at argv[*i] (Go's FlagSet.parseOne); 0 next, 1 exit 0, 2 flags ended, -1 error. */
static int parse_one(struct options *o, int argc, char **argv, int *i, char **errmsg)
{
    const char *s = argv[*i];
    if (strlen(s) < 2 || s[0] != '-')
        return 2;
    const char *name = s + 1;
    if (*name == '-') {
        name++;
        if (!*name) {
            (*i)++; /* "--" ends the flags */
            return 2;
        }
    }
    if (*name == '-' || *name == '=')
        return kube_set_err(errmsg, "bad flag syntax: %s", s);
    const char *eq = strchr(name, '=');
    size_t n = eq ? (size_t)(eq - name) : strlen(name);
    const struct flag *f = lookup(name, n);
    if (!f)
        return kube_set_err(errmsg, "unknown flag %.*s (see --help)", (int)(name - s + n), s);
    (*i)++;
    const char *v = eq ? eq + 1 : NULL;
    if (!v && is_boolish(f))
        v = "true";
    if (!v) {
        if (*i >= argc)
            return kube_set_err(errmsg, "--%s: missing value", f->name);
        v = argv[(*i)++];
    }
    if (f->type == F_SPECIAL && is_boolish(f)) {
        int on;
        if (parse_bool(f->name, v, &on, errmsg) < 0)
            return -1;
        return on ? set_special(o, f->name, v, errmsg) : 0;
    }
    return set_flag(o, f, v, errmsg);
}

int options_parse(int argc, char **argv, struct options *o, char **errmsg)
{
    defaults(o);
    int i = 1, rc = 0;
    while (i < argc && (rc = parse_one(o, argc, argv, &i, errmsg)) == 0)
        ;
    if (rc < 0 || rc == 1)
        return rc;
    if (i < argc)
        return kube_set_err(errmsg, "unexpected argument \"%s\" (see --help)", argv[i]);
    if (o->renew_deadline_s >= o->lease_s)
        return kube_set_err(errmsg, "--renew-deadline (%d) must be shorter than --lease-duration (%d)", o->renew_deadline_s,
                            o->lease_s);
    return 0;
}
