/* args.c - mpi-rsh's command line, parsed like OpenSSH's ssh(1): short options
 * (combinable, values attached or separate) before and right after HOST, "--"
 * ends options, the remaining words are the command (joined with single spaces,
 * as ssh does). Our own long options (--namespace ..., --help, --version) come
 * before HOST; the usage text. */
#include "rsh.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "kube/util.h"

/* OpenSSH 9.2's option letters: those followed by ':' take a value. */
static const char SSH_OPTS[] = "1246ab:c:e:fgi:kl:m:no:p:qstvxAB:CD:E:F:GI:J:KL:MNO:PQ:R:S:TVw:W:XYy";

static int parse_int(const char *s, int lo, int hi, int *out)
{
    long long v;
    if (kube_parse_int(s, lo, hi, &v) < 0)
        return -1;
    *out = (int)v;
    return 0;
}

/* -o Key=Value / "Key Value": the few keys that mean something here. */
static int ssh_config_option(struct rsh_opts *o, const char *kv, char **errmsg)
{
    size_t kl = strcspn(kv, "= \t");
    const char *v = kv + kl;
    while (*v == '=' || *v == ' ' || *v == '\t')
        v++;
    if (kl == 4 && strncasecmp(kv, "Port", 4) == 0) {
        if (parse_int(v, 1, 65535, &o->port) < 0)
            return kube_set_err(errmsg, "-o Port: expected 1-65535, got \"%s\"", v);
    } else if (kl == 4 && strncasecmp(kv, "User", 4) == 0) {
        o->user = v;
    } else if (kl == 18 && strncasecmp(kv, "ConnectionAttempts", 18) == 0) {
        if (parse_int(v, 1, 1000, &o->attempts) < 0)
            return kube_set_err(errmsg, "-o ConnectionAttempts: expected 1-1000, got \"%s\"", v);
    } else if (kl == 14 && strncasecmp(kv, "ConnectTimeout", 14) == 0) {
        if (parse_int(v, 1, 3600, &o->connect_timeout_s) < 0)
            return kube_set_err(errmsg, "-o ConnectTimeout: expected 1-3600 seconds, got \"%s\"", v);
    }
    /* everything else (StrictHostKeyChecking, UserKnownHostsFile, BatchMode ...) is accepted and ignored:
       host keys are always checked against the job's key, never interactively */
    return 0;
}

/* Applies one short option c with value val (NULL for flags). */
static int short_option(struct rsh_opts *o, int c, const char *val, char **errmsg)
{
    switch (c) {
    case 'n': o->no_stdin = 1; break;
    case 'q': o->quiet = 1; break;
    case 'v': o->verbose++; break;
    case 'l': o->user = val; break;
    case 'i': o->identity = val; break;
    case 'p':
        if (parse_int(val, 1, 65535, &o->port) < 0)
            return kube_set_err(errmsg, "-p: expected a port 1-65535, got \"%s\"", val);
        break;
    case 'o': return ssh_config_option(o, val, errmsg);
    default: break; /* -x -T -t -A -C -4 -6 -F file ... accepted and ignored */
    }
    return 0;
}

/* Parses one "-abc" / "-pVALUE" word; may consume the next word as a value. Returns words used or -1. */
static int short_word(struct rsh_opts *o, int argc, char **argv, int i, char **errmsg)
{
    const char *w = argv[i];
    for (size_t k = 1; w[k]; k++) {
        const char *spec = strchr(SSH_OPTS, w[k]);
        if (!spec || w[k] == ':') {
            o->usage_error = 1;
            return kube_set_err(errmsg, "unknown option -%c", w[k]);
        }
        if (spec[1] != ':') {
            if (short_option(o, w[k], NULL, errmsg) < 0)
                return -1;
            continue;
        }
        if (w[k + 1])
            return short_option(o, w[k], w + k + 1, errmsg) < 0 ? -1 : 1;
        if (i + 1 >= argc) {
            o->usage_error = 1;
            return kube_set_err(errmsg, "option -%c needs a value", w[k]);
        }
        return short_option(o, w[k], argv[i + 1], errmsg) < 0 ? -1 : 2;
    }
    return 1;
}

/* Our long options ("--name=value" or "--name value"). Returns words used or -1. */
static int long_word(struct rsh_opts *o, int argc, char **argv, int i, char **errmsg)
{
    /* from index 7 on: flags without a value */
    static const char *names[] = { "namespace", "container",      "kubeconfig", "context", "transport", "ssh-dir",
                                   "protocol",  "no-session-tag", "help",       "version", NULL };
    const char *w = argv[i] + 2, *eq = strchr(w, '=');
    size_t nl = eq ? (size_t)(eq - w) : strlen(w);
    int k;
    for (k = 0; names[k]; k++)
        if (strlen(names[k]) == nl && strncmp(w, names[k], nl) == 0)
            break;
    if (!names[k] || (k >= 7 && eq)) {
        o->usage_error = 1;
        return kube_set_err(errmsg, names[k] ? "option --%.*s takes no value" : "unknown option --%.*s", (int)nl, w);
    }
    if (k >= 7) {
        if (k == 7)
            o->no_session_tag = 1;
        else
            o->info = k == 8 ? RSH_INFO_HELP : RSH_INFO_VERSION;
        return 1;
    }
    const char *val = eq ? eq + 1 : (i + 1 < argc ? argv[i + 1] : NULL);
    if (!val) {
        o->usage_error = 1;
        return kube_set_err(errmsg, "option --%s needs a value", names[k]);
    }
    int used = eq ? 1 : 2;
    switch (k) {
    case 0: o->namespace = val; break;
    case 1: o->container = val; break;
    case 2: o->kubeconfig = val; break;
    case 3: o->context = val; break;
    case 4:
        if (mpik8s_transport_parse(val, &o->transport) < 0)
            return kube_set_err(errmsg, "--transport: expected exec or ssh, got \"%s\"", val);
        o->transport_set = 1;
        break;
    case 5: o->ssh_dir = val; break;
    case 6:
        if (strcmp(val, "v5") == 0)
            o->proto = 5;
        else if (strcmp(val, "v4") == 0)
            o->proto = 4;
        else
            return kube_set_err(errmsg, "--protocol: expected v5 or v4, got \"%s\"", val);
        break;
    }
    return used;
}

/* Joins argv[from..argc) with single spaces, as ssh builds its command string. */
static char *join_words(int argc, char **argv, int from)
{
    size_t n = 1;
    for (int i = from; i < argc; i++)
        n += strlen(argv[i]) + 1;
    char *s = malloc(n), *p = s;
    if (!s)
        return NULL;
    for (int i = from; i < argc; i++) {
        size_t l = strlen(argv[i]);
        if (i > from)
            *p++ = ' ';
        memcpy(p, argv[i], l);
        p += l;
    }
    *p = 0;
    return s;
}

int rsh_parse_args(int argc, char **argv, struct rsh_opts *o, char **errmsg)
{
    memset(o, 0, sizeof(*o));
    int i = 1, ended = 0;
    while (i < argc) {
        const char *w = argv[i];
        int used;
        if (!ended && strcmp(w, "--") == 0) {
            ended = 1;
            i++;
            continue;
        }
        if (!ended && w[0] == '-' && w[1] == '-' && !o->host)
            used = long_word(o, argc, argv, i, errmsg);
        else if (!ended && w[0] == '-' && w[1])
            used = short_word(o, argc, argv, i, errmsg);
        else if (!o->host)
            used = 1, o->host = w;
        else
            break; /* first command word */
        if (used < 0)
            return -1;
        if (o->info)
            return 0; /* --help, --version: nothing else matters */
        i += used;
    }
    if (!o->host || !*o->host) {
        o->usage_error = 1;
        return kube_set_err(errmsg, "no host given");
    }
    const char *at = strrchr(o->host, '@');
    if (at) {
        if (!o->user) {
            o->user = kube_strdup_printf("%.*s", (int)(at - o->host), o->host);
            o->user_owned = 1;
        }
        o->host = at + 1;
    }
    if (i >= argc)
        return kube_set_err(errmsg, "no command given for %s (interactive shells are not supported)", o->host);
    o->command = join_words(argc, argv, i);
    if (!o->command)
        return kube_set_err(errmsg, "out of memory");
    return 0;
}

void rsh_opts_free(struct rsh_opts *o)
{
    free(o->command);
    free(o->tls_dir);
    if (o->user_owned)
        free((char *)o->user);
    memset(o, 0, sizeof(*o));
}

void rsh_usage(FILE *f, const char *prog)
{
    fprintf(f,
            "usage: %s [ssh options] [--namespace NS] [--container C] [--transport exec|ssh]\n"
            "       %*s [--kubeconfig F] [--context X] [--ssh-dir D] [--protocol v5|v4]\n"
            "       %*s [--no-session-tag] [user@]HOST COMMAND...\n"
            "       %s --help | --version\n"
            "Runs COMMAND with /bin/sh -c in pod HOST (its first DNS label) through the Kubernetes\n"
            "exec API, or on HOST's sshd (--transport ssh), as MPI launchers call ssh; exits with\n"
            "COMMAND's exit code, 255 on a failure of its own.\n"
            "  ssh options (OpenSSH's letters)  honoured: -n -q -v -p PORT -l USER -i FILE\n"
            "                   -o Port=/User=/ConnectionAttempts=/ConnectTimeout=; others ignored\n"
            "  --namespace NS   the pod's namespace (default: $MPI_JOB_NAMESPACE, the FQDN's, the kubeconfig's)\n"
            "  --container C    the container to exec into (default: $MPI_JOB_WORKER_CONTAINER)\n"
            "  --transport T    exec | ssh (default: $MPI_JOB_TRANSPORT or exec)\n"
            "  --kubeconfig F   kubeconfig (default: $KUBECONFIG, ~/.kube/config, in-cluster)\n"
            "  --context X      kubeconfig context\n"
            "  --ssh-dir D      ssh: the job's key directory (default: $MPI_JOB_SSH_DIR)\n"
            "  --protocol P     exec: v5 | v4 (default: v5, falling back to v4)\n"
            "  --no-session-tag exec: send COMMAND untouched (no remote kill on a signal)\n"
            "  --help           print this help\n"
            "  --version        print the version\n",
            prog, (int)strlen(prog), "", (int)strlen(prog), "", prog);
}
