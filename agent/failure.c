/* failure.c - attributing a failed mpirun: the parsed report's host (or rank,
 * placed by the hostfile when mpirun was given no mapping option) to the worker
 * pod, the pod to its node (pod cache), and a kill without a code to an OOM
 * kill when the container says OOMKilled or its memory cgroup counted one. */
#include "failure.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpik8s/contract.h"
#include "kube/exec.h"
#include "kube/json.h"
#include "kube/log.h"
#include "kube/util.h"

#define CGROUP_EXEC_MS 5000

/* Prints every memory cgroup file there is, each after a "==> name <==" line (v2, then v1). */
static const char cgroup_script[] =
    "cd /sys/fs/cgroup 2>/dev/null || exit 0; for f in memory.events memory.max memory/memory.oom_control "
    "memory/memory.limit_in_bytes memory/memory.failcnt; do [ -r \"$f\" ] && echo \"==> ${f##*/} <==\" && cat \"$f\"; "
    "done; exit 0";

char *agent_failure_last_lines(const char *text, size_t len)
{
    size_t start = len, lines = 0;
    if (start && text[start - 1] == '\n')
        start--;
    while (start > 0 && len - start < AGENT_FAILURE_LAST_BYTES) {
        if (text[start - 1] == '\n' && ++lines == AGENT_FAILURE_LAST_LINES)
            break;
        start--;
    }
    char *out = strndup(text + start, len - start);
    for (char *p = out; p && *p; p++)
        if ((*p < 0x20 && *p != '\n' && *p != '\t') || (unsigned char)*p >= 0x7f)
            *p = '?';
    return out;
}

/* Index in s->hosts of the worker mpirun named host (hostfile name or its pod), -1 none. */
static long host_index(const struct agent_session *s, const char *host)
{
    for (size_t i = 0; host && i < s->hosts.n; i++) {
        const char *h = s->hosts.v[i].host, *p = s->hosts.v[i].pod;
        size_t pl = strlen(p);
        if (strcmp(h, host) == 0 || strcmp(p, host) == 0 || (strncmp(host, p, pl) == 0 && host[pl] == '.'))
            return (long)i;
    }
    return -1;
}

/* 1 when argv places ranks other than in hostfile order, slot by slot. */
static int custom_mapping(char *const *argv)
{
    static const char *const opts[] = { "map-by", "rank-by", "rankfile", "pernode", "npernode", "ppn",
                                        "bynode", "-rr",     "hosts",    "host",    "-H",       "-f" };
    for (size_t i = 0; argv && argv[i]; i++)
        for (size_t k = 0; k < sizeof opts / sizeof opts[0]; k++) {
            const char *a = argv[i], *o = opts[k];
            while (*a == '-' && *o != '-')
                a++;
            if (strcmp(a, o) == 0 || (strncmp(a, o, strlen(o)) == 0 && a[strlen(o)] == '='))
                return 1;
        }
    return 0;
}

/* The worker that holds rank when ranks fill the hostfile's slots in order; -1 none. */
static long rank_index(const struct agent_session *s, int rank)
{
    long first = 0;
    for (size_t i = 0; rank >= 0 && i < s->hosts.n; i++) {
        long n = agent_host_slots(&s->hosts.v[i], s->o->slots);
        if (rank < first + n)
            return (long)i;
        first += n;
    }
    return -1;
}

/* The worker container's status (borrowed) in pod. */
static json_t *container_status(json_t *pod, const char *name)
{
    json_t *cs = kube_json_at(pod, "status", "containerStatuses"), *c, *pick = NULL;
    size_t i;
    json_array_foreach(cs, i, c) {
        const char *n = kube_json_at_str(c, "name");
        if (!pick || (name && n && strcmp(n, name) == 0))
            pick = c;
    }
    return pick;
}

/* The worker container's memory limit as written in its spec ("64Mi"), borrowed or NULL. */
static const char *spec_limit(json_t *pod, const char *name)
{
    json_t *cs = kube_json_at(pod, "spec", "containers"), *c, *pick = NULL;
    size_t i;
    json_array_foreach(cs, i, c) {
        const char *n = kube_json_at_str(c, "name");
        if (!pick || (name && n && strcmp(n, name) == 0))
            pick = c;
    }
    return kube_json_at_str(pick, "resources", "limits", "memory");
}

int agent_failure_cgroup(struct agent_session *s, const char *pod, struct agent_cgroup_mem *m)
{
    if (!s->client || !pod)
        return 0;
    struct kube_exec_opts eo;
    kube_exec_opts_default(&eo);
    eo.namespace = s->ns;
    eo.pod = pod;
    eo.container = s->o->container;
    eo.command = cgroup_script; /* run as /bin/sh -c */
    eo.timeout_ms = CGROUP_EXEC_MS;
    eo.fd_in = -1;
    eo.capture = 1;
    eo.capture_max = 8192;
    eo.attempts = 1;
    eo.connect_timeout_ms = eo.handshake_timeout_ms = CGROUP_EXEC_MS;
    eo.linger_ms = 500;
    struct kube_exec_result r = { 0 };
    int outcome = kube_exec_run(kube_client_config(s->client), &eo, &r);
    int ok = outcome == KUBE_EXEC_EXITED && r.out && agent_cgroup_mem_parse(r.out, strlen(r.out), m);
    if (!ok)
        KLOG_DEBUG("memory cgroup of %s not read: %s", pod, r.message ? r.message : "no counters");
    kube_exec_result_free(&r);
    return ok;
}

int agent_failure_oom_state(json_t *pod, const char *name, const char **limit)
{
    json_t *st = container_status(pod, name);
    const char *now = kube_json_at_str(st, "state", "terminated", "reason");
    const char *last = kube_json_at_str(st, "lastState", "terminated", "reason");
    *limit = spec_limit(pod, name);
    return (now && strcmp(now, "OOMKilled") == 0) || (last && strcmp(last, "OOMKilled") == 0);
}

/* Sets the OOM keys when the container was OOMKilled or, for a kill without a code (r not
 * NULL), its memory cgroup counted an OOM kill. */
static void check_oom(struct agent_session *s, json_t *pod, const struct agent_rank_failure *r, json_t *o)
{
    const char *limit;
    char q[40];
    if (agent_failure_oom_state(pod, s->o->container, &limit)) {
        json_object_set_new(o, MPIK8S_FAIL_OOM_SOURCE, json_string("OOMKilled"));
    } else {
        struct agent_cgroup_mem m;
        /* Hydra 4.2 reports a SIGKILL as "EXIT CODE: 9" (hydra_code_hint) */
        int hydra9 = r && r->exit_code == 9 && r->form && strcmp(r->form, "hydra-exit-code") == 0;
        int killed = r && (r->signal == 9 || (r->signal == 0 && r->exit_code < 0) || r->exit_code == 137 || hydra9);
        if (!killed || !agent_failure_cgroup(s, kube_obj_name(pod), &m) || m.oom_kills <= 0)
            return;
        json_object_set_new(o, MPIK8S_FAIL_OOM_SOURCE, json_string("cgroup"));
        if (hydra9) { /* the kernel's OOM kill: the 9 was the signal */
            json_object_del(o, MPIK8S_FAIL_EXIT_CODE);
            json_object_set_new(o, MPIK8S_FAIL_SIGNAL, json_string("SIGKILL"));
            json_object_set_new(o, MPIK8S_FAIL_SIGNAL_NUMBER, json_integer(9));
        }
        if (!limit && m.limit_bytes > 0)
            limit = agent_bytes_quantity(m.limit_bytes, q, sizeof q);
    }
    json_object_set_new(o, MPIK8S_FAIL_OOM, json_true());
    if (limit)
        json_object_set_new(o, MPIK8S_FAIL_MEMORY_LIMIT, json_string(limit));
}

static void set_str(json_t *o, const char *k, const char *v)
{
    if (v)
        json_object_set_new(o, k, json_string(v));
}

/* Hydra 4.2 reports a process killed by signal N as "EXIT CODE: N" without 4.0's "EXIT STRING:
 * ... (signal N)" line, so an exit code that is also a crash signal's number may be either: the
 * hint says so, naming the signal (" (or killed by SIGSEGV: Hydra reports both as 11)"); NULL
 * when not ambiguous. */
static char *hydra_code_hint(const char *form, const json_t *code)
{
    long long c = json_integer_value(code);
    char b[32];
    /* the signals that end a crashed or killed process; codes 1-3 and the rest are plain exits */
    if (strcmp(form, "hydra-exit-code") != 0 || !(c == 4 || (c >= 6 && c <= 9) || c == 11 || c == 15))
        return NULL;
    const char *name = agent_signal_name((int)c, b, sizeof b);
    return name ? kube_strdup_printf(" (or killed by %s: Hydra reports both as %lld)", name, c) : NULL;
}

/* The object's one human line from its keys. */
static char *phrase_of(json_t *o)
{
    const char *pod = kube_json_at_str(o, MPIK8S_FAIL_POD);
    const char *node = kube_json_at_str(o, MPIK8S_FAIL_NODE);
    const char *host = kube_json_at_str(o, MPIK8S_FAIL_HOST);
    const char *sig = kube_json_at_str(o, MPIK8S_FAIL_SIGNAL);
    const char *lim = kube_json_at_str(o, MPIK8S_FAIL_MEMORY_LIMIT);
    const char *form = kube_json_at_str(o, MPIK8S_FAIL_FORM) ?: "";
    json_t *rank = kube_json_at(o, MPIK8S_FAIL_RANK), *code = kube_json_at(o, MPIK8S_FAIL_EXIT_CODE);
    json_t *pid = kube_json_at(o, MPIK8S_FAIL_PID);
    int daemon = strcmp(form, "daemon-exit") == 0, lost = strcmp(form, "ompi-daemon-lost") == 0;
    const char *source = kube_json_at_str(o, MPIK8S_FAIL_SOURCE) ?: "";
    char *who = daemon || lost ? strdup("the MPI daemon")
                : rank         ? kube_strdup_printf("rank %lld", (long long)json_integer_value(rank))
                : pid          ? kube_strdup_printf("a process (PID %lld)", (long long)json_integer_value(pid))
                               : strdup("a rank");
    char *where = pod    ? kube_strdup_printf(" on pod %s (node %s)", pod, node ? node : "?")
                  : host ? kube_strdup_printf(" on host %s", host)
                         : strdup("");
    char *what = sig    ? kube_strdup_printf(" was killed by %s", sig)
                 : code ? kube_strdup_printf(" exited with code %lld", (long long)json_integer_value(code))
                 : lost ? strdup(" was lost")
                 : strcmp(form, "ompi-abort") == 0 ? strdup(" called abort")
                                                   : strdup(" exited improperly (without MPI_Finalize?)");
    char *oom = kube_json_at_bool(o, 0, MPIK8S_FAIL_OOM)
                    ? kube_strdup_printf(": OOM-killed (%s%s)", lim ? "limit " : "no memory limit", lim ? lim : "")
                    : strdup("");
    const char *unnamed =
        strcmp(form, "ompi-notice") == 0 ? " (mpirun's exit code; Open MPI named no rank)"
        : lost && code                   ? " (Open MPI lost communication with it)"
        : lost    ? ": Open MPI lost communication with it (the daemon died, or the pod network to it failed)"
        : !daemon ? ""
        : strcmp(source, "holder") == 0      ? " and the launch did not end on its own (the stream holder stopped it)"
        : strcmp(source, "launch-mark") == 0 ? " and the launch failed (mpirun named no rank)"
                                             : " and the launch did not end on its own (mpi-agent stopped it)";
    char *ambiguous = hydra_code_hint(form, code);
    char *out = kube_strdup_printf("%s%s%s%s%s%s", who ?: "", where ?: "", what ?: "", oom ?: "", unnamed, ambiguous ?: "");
    free(who), free(where), free(what), free(oom), free(ambiguous);
    return out;
}

/* reason from the keys set so far. */
static const char *reason_of(json_t *o)
{
    if (kube_json_at_bool(o, 0, MPIK8S_FAIL_OOM))
        return MPIK8S_FAIL_R_OOM;
    if (kube_json_at(o, MPIK8S_FAIL_SIGNAL))
        return MPIK8S_FAIL_R_SIGNAL;
    return kube_json_at(o, MPIK8S_FAIL_EXIT_CODE) ? MPIK8S_FAIL_R_EXIT_CODE : MPIK8S_FAIL_R_UNKNOWN;
}

/* Fills the object's pod and node keys from worker index i (and its cache entry); the pod or NULL. */
static json_t *place(struct agent_session *s, long i, json_t *o)
{
    if (i < 0 || (size_t)i >= s->hosts.n)
        return NULL;
    set_str(o, MPIK8S_FAIL_POD, s->hosts.v[i].pod);
    json_t *pod = s->inf ? kube_informer_get(s->inf, s->ns, s->hosts.v[i].pod) : NULL;
    set_str(o, MPIK8S_FAIL_NODE, kube_json_at_str(pod, "spec", "nodeName"));
    return pod;
}

static void rank_keys(const struct agent_rank_failure *r, json_t *o)
{
    char b[24];
    if (r->rank >= 0)
        json_object_set_new(o, MPIK8S_FAIL_RANK, json_integer(r->rank));
    if (r->pid > 0)
        json_object_set_new(o, MPIK8S_FAIL_PID, json_integer(r->pid));
    set_str(o, MPIK8S_FAIL_HOST, r->host);
    if (r->exit_code >= 0)
        json_object_set_new(o, MPIK8S_FAIL_EXIT_CODE, json_integer(r->exit_code));
    if (r->signal > 0) {
        json_object_set_new(o, MPIK8S_FAIL_SIGNAL, json_string(agent_signal_name(r->signal, b, sizeof b)));
        json_object_set_new(o, MPIK8S_FAIL_SIGNAL_NUMBER, json_integer(r->signal));
    }
    set_str(o, MPIK8S_FAIL_MPI, r->mpi);
    set_str(o, MPIK8S_FAIL_FORM, r->form);
}

/* ORTE's notice alone says a process returned a non-zero code, and mpirun then exits with
 * that process's code (ORTE_UPDATE_EXIT_STATUS keeps the first one): taken when it is 1..127.
 * From 128 up it may be 128 + a signal (the notice is the same): nothing is taken. */
static int notice_code(struct agent_rank_failure *r, int cmd_code)
{
    if (strcmp(r->form, "ompi-notice") != 0)
        return 1;
    if (cmd_code < 1 || cmd_code > 127)
        return 0;
    r->exit_code = cmd_code;
    return 1;
}

json_t *agent_failure_explain(struct agent_session *s, const char *tail, size_t len, char *const *argv, int cmd_code,
                              char **phrase)
{
    struct agent_rank_failure r;
    *phrase = NULL;
    if (!agent_failure_parse(tail, len, &r))
        return NULL;
    if (!notice_code(&r, cmd_code)) {
        agent_rank_failure_free(&r);
        return NULL;
    }
    json_t *o = json_object();
    rank_keys(&r, o);
    long i = host_index(s, r.host);
    int by_map = i < 0 && !r.host && !custom_mapping(argv);
    if (by_map)
        i = rank_index(s, r.rank);
    set_str(o, MPIK8S_FAIL_SOURCE,
            strcmp(r.form, "ompi-notice") == 0   ? "mpirun-exit"
            : strcmp(r.form, "daemon-exit") == 0 ? r.stopper
            : by_map && i >= 0                   ? "rankmap"
                                                 : "mpirun");
    json_t *pod = place(s, i, o);
    if (pod)
        check_oom(s, pod, &r, o);
    json_decref(pod);
    set_str(o, MPIK8S_FAIL_REASON, reason_of(o));
    char *last = agent_failure_last_lines(tail, r.at);
    if (last && *last)
        set_str(o, MPIK8S_FAIL_LAST_LINES, last);
    free(last);
    *phrase = phrase_of(o);
    set_str(o, MPIK8S_FAIL_MESSAGE, *phrase);
    agent_rank_failure_free(&r);
    return o;
}

json_t *agent_failure_worker_lost(struct agent_session *s, size_t i, const char *why, const char *tail, size_t len)
{
    json_t *o = json_object();
    json_t *pod = place(s, (long)i, o);
    if (pod)
        check_oom(s, pod, NULL, o); /* the container's state only: no exec into a pod that is going */
    json_decref(pod);
    set_str(o, MPIK8S_FAIL_REASON, kube_json_at_bool(o, 0, MPIK8S_FAIL_OOM) ? MPIK8S_FAIL_R_OOM : MPIK8S_FAIL_R_WORKER_LOST);
    set_str(o, MPIK8S_FAIL_SOURCE, "watcher");
    set_str(o, MPIK8S_FAIL_MESSAGE, why);
    char *last = agent_failure_last_lines(tail, len);
    if (last && *last)
        set_str(o, MPIK8S_FAIL_LAST_LINES, last);
    free(last);
    return o;
}

json_t *agent_failure_daemon_end(struct agent_session *s, json_t *found, const char *pod, int code, const char *tail,
                                 size_t len, char **phrase)
{
    const char *form = kube_json_at_str(found, MPIK8S_FAIL_FORM) ?: "";
    if (found &&
        (strcmp(form, "ompi-daemon-lost") != 0 || !pod || strcmp(kube_json_at_str(found, MPIK8S_FAIL_POD) ?: "", pod) != 0 ||
         kube_json_at(found, MPIK8S_FAIL_EXIT_CODE)))
        return found; /* a finding of its own, or not this daemon's */
    json_t *o = found ? found : json_object();
    if (!found) {
        long i = host_index(s, pod);
        set_str(o, MPIK8S_FAIL_FORM, "daemon-exit");
        set_str(o, MPIK8S_FAIL_SOURCE, "launch-mark");
        if (i < 0)
            set_str(o, MPIK8S_FAIL_HOST, pod);
        json_decref(place(s, i, o));
        char *last = agent_failure_last_lines(tail, len);
        if (last && *last)
            set_str(o, MPIK8S_FAIL_LAST_LINES, last);
        free(last);
    }
    json_object_set_new(o, MPIK8S_FAIL_EXIT_CODE, json_integer(code));
    set_str(o, MPIK8S_FAIL_REASON, reason_of(o));
    free(*phrase);
    *phrase = phrase_of(o);
    set_str(o, MPIK8S_FAIL_MESSAGE, *phrase);
    return o;
}
