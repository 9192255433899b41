/* target.c - where and what mpi-rsh runs: the namespace from an FQDN (the pod: the contract's
 * rule, mpik8s_host_to_pod), settings from the environment the agent writes, the
 * remote command line with its session tag, and the script that kills a tagged
 * session's processes inside the pod. */
#include "rsh.h"
#include "mpik8s/contract.h"
#include "mpik8s/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/util.h"
#include "kube/ws.h"

char *rsh_host_namespace(const char *host)
{
    /* <pod>.<subdomain>.<ns>.svc[.cluster.local] */
    const char *a = strchr(host, '.');
    const char *b = a ? strchr(a + 1, '.') : NULL;
    const char *c = b ? strchr(b + 1, '.') : NULL;
    if (!c || strncmp(c, ".svc", 4) != 0 || (c[4] && c[4] != '.') || c == b + 1)
        return NULL;
    return kube_strdup_printf("%.*s", (int)(c - b - 1), b + 1);
}

static int env_int(const char *name, int lo, int hi, int *out, char **errmsg)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return 0;
    long long x;
    if (kube_parse_int(v, lo, hi, &x) < 0)
        return kube_set_err(errmsg, "%s: expected a number %d-%d, got \"%s\"", name, lo, hi, v);
    *out = (int)x;
    return 0;
}

static const char *env_str(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

int rsh_apply_env(struct rsh_opts *o, char **errmsg)
{
    if (!o->namespace)
        o->namespace = env_str(MPIK8S_ENV_JOB_NAMESPACE);
    if (!o->container)
        o->container = env_str(MPIK8S_ENV_WORKER_CONTAINER);
    if (!o->ssh_dir)
        o->ssh_dir = env_str(MPIK8S_ENV_SSH_DIR);
    if (!o->transport_set && env_str(MPIK8S_ENV_TRANSPORT)) {
        const char *t = env_str(MPIK8S_ENV_TRANSPORT);
        if (mpik8s_transport_parse(t, &o->transport) < 0)
            return kube_set_err(errmsg, MPIK8S_ENV_TRANSPORT ": expected exec or ssh, got \"%s\"", t);
    }
    if (!o->port && env_int(MPIK8S_ENV_SSH_PORT, 1, 65535, &o->port, errmsg) < 0)
        return -1;
    if (!o->attempts && env_int("MPI_RSH_ATTEMPTS", 1, 1000, &o->attempts, errmsg) < 0)
        return -1;
    if (env_int("MPI_RSH_PING_MS", 10, 3600000, &o->ping_ms, errmsg) < 0)
        return -1;
    if (rsh_reattach_env(&o->reattach_s, errmsg) < 0)
        return -1;
    const char *tls = getenv(MPIK8S_RSH_ENV_TLS_CACHE_DIR);
    o->tls_dir_set = tls != NULL;
    if (tls && *tls && !(o->tls_dir = strdup(tls)))
        return kube_set_err(errmsg, "MPI_RSH_TLS_CACHE_DIR: out of memory");
    return 0;
}

int rsh_reattach_env(int *secs, char **errmsg)
{
    *secs = RSH_REATTACH_DEFAULT_S;
    return env_int(RSH_REATTACH_ENV, 0, 86400, secs, errmsg);
}

int rsh_daemon_exit_env(int *secs, char **errmsg)
{
    *secs = MPIK8S_RSH_DAEMON_EXIT_DEFAULT_S;
    return env_int(MPIK8S_RSH_ENV_DAEMON_EXIT_S, 0, 86400, secs, errmsg);
}

int rsh_session_tag(char tag[17])
{
    uint8_t raw[8];
    if (kube_ws_random(raw, sizeof(raw)) < 0)
        return -1;
    for (int i = 0; i < 8; i++)
        snprintf(tag + 2 * i, 3, "%02x", raw[i]);
    return 0;
}

char *rsh_remote_command(const char *command, const char *tag)
{
    if (!tag)
        return kube_strdup_printf("%s", command);
    /* three shells (docs/rsh.md "Reattach"): the exec'd one, which a runtime kills when its stream
     * is cut (containerd after a kubelet restart); its child, which lives on, runs COMMAND and leaves
     * its exit code for a reattach; and COMMAND's own, started as the exec API starts it (/bin/sh -c:
     * $0, line numbers and syntax errors read the same; exit and exec are its own) */
    char *q = mpik8s_sh_quote(command), *mid = NULL, *qmid = NULL, *line = NULL;
    if (q)
        mid = kube_strdup_printf("/bin/sh -c %s; r=$?; echo $r >" RSH_RC_DIR "/.mpi-rsh-%s.rc 2>/dev/null; exit $r", q, tag);
    if (mid)
        qmid = mpik8s_sh_quote(mid);
    if (qmid)
        line = kube_strdup_printf("export MPI_RSH_SESSION=%s; /bin/sh -c %s; exit $?", tag, qmid);
    free(q);
    free(mid);
    free(qmid);
    return line;
}

char *rsh_wait_script(const char *tag, int follow)
{
    /* the grep pattern brackets the tag's first character, as rsh_kill_script's: neither this
     * script nor grep carries MPI_RSH_SESSION=TAG. The processes first, then the file: the
     * session's shell writes it before it exits. */
    if (!tag[0])
        return NULL;
    return kube_strdup_printf("f=" RSH_RC_DIR "/.mpi-rsh-%s.rc; a() { grep -q -s -e 'MPI_RSH_SESSION=[%c]%s' "
                              "/proc/[0-9]*/cmdline /proc/[0-9]*/environ; }; if a; then echo " RSH_WAIT_ATTACHED "; "
                              "%s fi; if [ -f $f ]; then echo \"" RSH_WAIT_EXIT " $(cat $f)\"; "
                              "rm -f $f; else echo " RSH_WAIT_GONE "; fi",
                              tag, tag[0], tag + 1, follow ? "while a; do sleep 1; done;" : "exit 0;");
}

/* The number after "RSH_WAIT_EXIT " in a line of n bytes: 0..255, or -1. */
static int exit_line_code(const char *l, size_t n)
{
    size_t ne = strlen(RSH_WAIT_EXIT " ");
    char num[8];
    long long v;
    if (n <= ne || n - ne >= sizeof num)
        return -1;
    memcpy(num, l + ne, n - ne);
    num[n - ne] = 0;
    return kube_parse_int(num, 0, 255, &v) < 0 ? -1 : (int)v;
}

static int line_is(const char *l, size_t n, const char *word) { return n == strlen(word) && !strncmp(l, word, n); }

int rsh_wait_parse(const char *out, int *attached, int *code)
{
    int result = RSH_WAITED_NOTHING;
    *attached = 0;
    for (const char *l = out; l && *l;) {
        size_t n = strcspn(l, "\n");
        if (line_is(l, n, RSH_WAIT_ATTACHED)) {
            *attached = 1;
        } else if (line_is(l, n, RSH_WAIT_GONE)) {
            result = RSH_WAITED_GONE;
        } else if (!strncmp(l, RSH_WAIT_EXIT " ", strlen(RSH_WAIT_EXIT " "))) {
            int c = exit_line_code(l, n); /* an unreadable code is no code */
            result = c < 0 ? RSH_WAITED_GONE : RSH_WAITED_EXIT;
            if (c >= 0)
                *code = c;
        }
        l += n + (l[n] == '\n');
    }
    return result;
}

char *rsh_kill_script(const char *tag, int grace_s)
{
    /* every process whose command line (the sh -c) or environment (its children: orted, ranks)
       carries the tag, found by one grep over /proc; the pattern brackets the tag's first
       character, so neither this script nor grep itself carries the literal tag */
    if (!tag[0])
        return NULL;
    return kube_strdup_printf("k() { n=0; for f in $(grep -l -s -e 'MPI_RSH_SESSION=[%c]%s' /proc/[0-9]*/cmdline "
                              "/proc/[0-9]*/environ); do p=${f#/proc/}; p=${p%%%%/*}; [ \"$p\" = $$ ] && continue; "
                              "kill -$1 $p 2>/dev/null && n=$((n+1)); done; }; "
                              "k TERM; [ $n -eq 0 ] && exit 0; sleep %d; k KILL; exit 0",
                              tag[0], tag + 1, grace_s);
}
