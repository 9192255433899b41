/* failure_parse.c - reads the first failure report of mpirun or Hydra out of the
 * launcher's output, and a worker's memory cgroup counters. The texts, as
 * captured from Debian 12's Open MPI 4.1.4 and MPICH 4.0.2 and read in PRRTE's
 * help-prterun.txt (Open MPI 5), are in tests/unit/data/mpirun/ (README there); and the
 * stream holder's line when it stopped an mpirun that outlived a failed daemon. */
#include "failure_parse.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/str.h"
#include "mpik8s/contract.h"

#define HYDRA_BANNER "BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES"
#define OMPI_NONZERO "detected that one or more processes exited with non-zero status"
#define LOOKAHEAD 8 /* lines after a report's first line where its fields may be */

/* The text split into NUL-terminated lines (in one owned copy). */
struct lines {
    char *buf;
    char **v;
    size_t n;
};

static int split(const char *text, size_t len, struct lines *l)
{
    l->buf = strndup(text ? text : "", text ? len : 0);
    size_t cap = 1;
    for (size_t i = 0; l->buf && l->buf[i]; i++)
        cap += l->buf[i] == '\n';
    l->v = l->buf ? calloc(cap, sizeof *l->v) : NULL;
    l->n = 0;
    if (!l->v) {
        free(l->buf);
        return -1;
    }
    for (char *p = l->buf; p; l->n++) {
        l->v[l->n] = p;
        p = strchr(p, '\n');
        if (p)
            *p++ = '\0';
        size_t k = strlen(l->v[l->n]);
        if (k && l->v[l->n][k - 1] == '\r')
            l->v[l->n][k - 1] = '\0';
    }
    return 0;
}

static int lit(const char **p, const char *s)
{
    size_t n = strlen(s);
    if (strncmp(*p, s, n) != 0)
        return 0;
    *p += n;
    return 1;
}

static void spaces(const char **p)
{
    while (**p == ' ' || **p == '\t')
        (*p)++;
}

/* A decimal number in [0, max]; advances *p. */
static int num(const char **p, long max, long *v)
{
    if (!isdigit((unsigned char)**p))
        return 0;
    errno = 0;
    char *e;
    long x = strtol(*p, &e, 10);
    if (errno || x > max)
        return 0;
    *v = x;
    *p = e;
    return 1;
}

/* A word up to a blank (a host name); new string or NULL. */
static char *word(const char **p)
{
    size_t n = strcspn(*p, " \t");
    if (n == 0 || n > 253)
        return NULL;
    char *w = strndup(*p, n);
    *p += n;
    return w;
}

/* The daemon-exit stop's line (mpik8s/contract.h MPIK8S_AGENT_DAEMON_EXIT_FMT, or the stream
 * holder's MPIK8S_HOLDER_DAEMON_EXIT_FMT): mpirun was stopped, as it ran on after the MPI daemon
 * on pod H exited with code C (Hydra waits for ever). */
static int daemon_notice(const char *line, struct agent_rank_failure *f)
{
    const char *p = line;
    long code;
    const char *by = lit(&p, MPIK8S_AGENT_DAEMON_EXIT_PREFIX)    ? "agent"
                     : lit(&p, MPIK8S_HOLDER_DAEMON_EXIT_PREFIX) ? "holder"
                                                                 : NULL;
    char *pod = by ? word(&p) : NULL;
    if (!pod || !lit(&p, MPIK8S_HOLDER_DAEMON_EXIT_CODE) || !num(&p, 255, &code) || code == 0 || *p != ';') {
        free(pod);
        return 0;
    }
    f->host = pod;
    f->exit_code = (int)code;
    f->form = "daemon-exit";
    f->stopper = by;
    return 1;
}

/* "N with PID P on node H exited on signal S[ (name)]." (Open MPI 4 and 5) */
static int ompi_signal_line(const char *line, struct agent_rank_failure *f)
{
    const char *p = strstr(line, " noticed that process rank ");
    long r, pid, sig;
    if (!p)
        return 0;
    p += strlen(" noticed that process rank ");
    if (!num(&p, INT_MAX, &r) || !lit(&p, " with PID ") || !num(&p, LONG_MAX, &pid) || !lit(&p, " on node "))
        return 0;
    char *host = word(&p);
    if (!host || !lit(&p, " exited on signal ") || !num(&p, 64, &sig) || sig == 0) {
        free(host);
        return 0;
    }
    f->rank = (int)r, f->pid = pid, f->host = host, f->signal = (int)sig;
    f->form = "ompi-signal";
    return 1;
}

/* ompi_signal_line on line i, or on it joined with the next two: PRRTE 3.0 wraps its help texts
 * at 80 columns ("... on node o5sig-worker-1 exited on" / "signal 11 (Segmentation fault)."),
 * ORTE does not. */
static int ompi_signal(const struct lines *l, size_t i, struct agent_rank_failure *f)
{
    if (!strstr(l->v[i], " noticed that process rank "))
        return 0;
    if (ompi_signal_line(l->v[i], f))
        return 1;
    const char *b = i + 1 < l->n ? l->v[i + 1] : "", *c = i + 2 < l->n ? l->v[i + 2] : "";
    char *joined = kube_strdup_printf("%s %s %s", l->v[i], b, c);
    int found = joined && ompi_signal_line(joined, f);
    free(joined);
    return found;
}

/* The rank in a process name: "[[18053,1],1]" (ORTE) or "[prterun-h-1@1,1]" (PRRTE). */
static int proc_name_rank(const char *s, long *r)
{
    const char *end = strrchr(s, ']'), *c = end;
    while (c && c > s && isdigit((unsigned char)c[-1]))
        c--;
    if (!end || c == end || c == s || c[-1] != ',')
        return 0;
    return num(&c, INT_MAX, r) && c == end;
}

/* OMPI_NONZERO, then "Process name: ..." and "Exit code: N" (Open MPI 4 and 5). */
static int ompi_exit(const struct lines *l, size_t i, struct agent_rank_failure *f)
{
    long r = -1, code = -1;
    if (!strstr(l->v[i], OMPI_NONZERO))
        return 0;
    for (size_t k = i + 1; k < l->n && k <= i + LOOKAHEAD; k++) {
        const char *p = l->v[k];
        spaces(&p);
        if (lit(&p, "Process name:")) {
            spaces(&p);
            if (!proc_name_rank(p, &r))
                return 0;
        } else if (lit(&p, "Exit code:")) {
            spaces(&p);
            if (!num(&p, 255, &code))
                return 0;
        }
    }
    if (r < 0 || code < 0)
        return 0;
    f->rank = (int)r, f->exit_code = (int)code;
    f->form = "ompi-exit";
    return 1;
}

/* "... has exited due to process rank N with PID P on" / "node H exiting improperly" or
 * "node H calling \"abort\"" (ORTE's orterun:proc-exit-no-sync, proc-ordered-abort; PRRTE's prun:). */
static int ompi_improper(const struct lines *l, size_t i, struct agent_rank_failure *f)
{
    const char *p = strstr(l->v[i], " has exited due to process rank ");
    long r, pid;
    if (!p || i + 1 >= l->n)
        return 0;
    p += strlen(" has exited due to process rank ");
    if (!num(&p, INT_MAX, &r) || !lit(&p, " with PID ") || !num(&p, LONG_MAX, &pid))
        return 0;
    const char *q = l->v[i + 1];
    if (!lit(&q, "node "))
        return 0;
    char *host = word(&q);
    const char *form = !host                            ? NULL
                       : lit(&q, " exiting improperly") ? "ompi-improper-exit"
                       : lit(&q, " calling \"abort\"")  ? "ompi-abort"
                                                        : NULL;
    if (!form) {
        free(host);
        return 0;
    }
    f->rank = (int)r, f->pid = pid, f->host = host, f->form = form;
    return 1;
}

/* One "=   ..." line of a Hydra banner. */
static int hydra_field(const char *p, struct agent_rank_failure *f)
{
    long v, pid;
    if (lit(&p, "RANK ")) {
        if (!num(&p, INT_MAX, &v) || !lit(&p, " "))
            return -1;
        f->rank = (int)v;
    }
    if (lit(&p, "PID ")) {
        if (!num(&p, LONG_MAX, &pid) || !lit(&p, " RUNNING AT ") || f->host)
            return -1;
        f->pid = pid;
        f->host = word(&p);
        return f->host ? 1 : -1;
    }
    if (lit(&p, "EXIT CODE: ")) {
        if (!num(&p, 255, &v))
            return -1;
        f->exit_code = (int)v;
    } else if (lit(&p, "KILLED BY SIGNAL: ")) {
        if (!num(&p, 64, &v) || v == 0)
            return -1;
        f->signal = (int)v;
    }
    return 1;
}

static int ucx_caught(const struct lines *l, const struct agent_rank_failure *f, int sig);

/* HYDRA_BANNER, then "=   [RANK n ]PID p RUNNING AT h" and "=   EXIT CODE: n" or
 * "=   KILLED BY SIGNAL: n (name)"; "...EXIT STRING: name (signal n)" after it (after the
 * other processes' cleanup messages, up to the next banner) tells a signal from an exit code
 * in MPICH 4.0's form. Fills f field by field, also when it then returns 0 (hydra() below). */
static int hydra_report(const struct lines *l, size_t i, struct agent_rank_failure *f)
{
    if (!strstr(l->v[i], HYDRA_BANNER))
        return 0;
    for (size_t k = i + 1; k < l->n; k++) {
        const char *p = l->v[k], *s;
        long sig;
        if (strstr(p, HYDRA_BANNER))
            break; /* the next process's report (Hydra before 4.0 lists each) */
        if (k <= i + LOOKAHEAD && lit(&p, "=") && *p == ' ') {
            spaces(&p);
            if (hydra_field(p, f) < 0)
                return 0;
        } else if ((s = strstr(p, "TERMINATED WITH THE EXIT STRING: ")) && (s = strstr(s, "(signal ")) &&
                   (s += strlen("(signal "), num(&s, 64, &sig)) && sig == f->exit_code && sig > 0) {
            f->signal = (int)sig;
            f->exit_code = -1;
            break;
        }
    }
    if (!f->host || (f->exit_code < 0 && f->signal == 0))
        return 0;
    if (f->signal == 0 && f->exit_code > 0 && f->pid > 0 && ucx_caught(l, f, f->exit_code)) {
        f->signal = f->exit_code;
        f->exit_code = -1;
    }
    f->form = f->signal ? "hydra-signal" : "hydra-exit-code";
    f->mpi = "mpich";
    return 1;
}

/* hydra_report into a finding of its own, given to f (blank, as the caller keeps it between
 * forms) only when it is one: like the other forms, a report that matched in part leaves f as it
 * was (a banner's host without a code, then another form's host, leaked before). */
static int hydra(const struct lines *l, size_t i, struct agent_rank_failure *f)
{
    struct agent_rank_failure h = { .rank = -1, .pid = -1, .exit_code = -1 };
    if (!hydra_report(l, i, &h)) {
        free(h.host);
        return 0;
    }
    *f = h;
    return 1;
}

/* The report's first line: i, or before it the rules and blank lines, and ORTE's notice
 * "Primary job  terminated normally, but N process returned / a non-zero exit code. ...". */
static size_t report_start(const struct lines *l, size_t i)
{
    for (int notice = 0; notice < 2; notice++) {
        while (i > 0 && strspn(l->v[i - 1], "-=") == strlen(l->v[i - 1]))
            i--;
        if (i < 2 || strncmp(l->v[i - 1], "a non-zero exit code.", 21) != 0 || strncmp(l->v[i - 2], "Primary job ", 12) != 0)
            break;
        i -= 2;
    }
    return i;
}

/* MPICH's ch4:ucx prints "[HOST:PID ...] Caught signal N (Name ...)" from the failing process
 * itself: 1 when text has that line for f's host (first DNS label) and PID with N = sig. */
static int ucx_caught(const struct lines *l, const struct agent_rank_failure *f, int sig)
{
    size_t hl = strcspn(f->host, ".");
    for (size_t k = 0; k < l->n; k++) {
        const char *p = l->v[k], *c = strstr(p, "] Caught signal ");
        long pid, s;
        if (!c || !lit(&p, "[") || strncmp(p, f->host, hl) != 0 || p[hl] != ':')
            continue;
        p += hl + 1;
        c += strlen("] Caught signal ");
        if (num(&p, LONG_MAX, &pid) && pid == f->pid && num(&c, 64, &s) && s == sig)
            return 1;
    }
    return 0;
}

void agent_rank_failure_free(struct agent_rank_failure *f)
{
    free(f->host);
    f->host = NULL;
}

static void reset(struct agent_rank_failure *f)
{
    agent_rank_failure_free(f);
    memset(f, 0, sizeof *f);
    f->rank = -1, f->pid = -1, f->exit_code = -1;
}

/* ORTE's notice alone ("Primary job  terminated normally, but N process returned" / "a
 * non-zero exit code. ..."): 1 when line i starts it. Open MPI 4 often exits after it without
 * its report (a non-MPI program; ranks that fail together): the text names no rank. */
static int ompi_notice(const struct lines *l, size_t i, struct agent_rank_failure *f)
{
    if (i + 1 >= l->n || strncmp(l->v[i], "Primary job ", 12) != 0 || !strstr(l->v[i], " terminated normally, but ") ||
        strncmp(l->v[i + 1], "a non-zero exit code.", 21) != 0)
        return 0;
    f->form = "ompi-notice";
    return 1;
}

/* ORTE's and PRRTE's [node-died] (help-errmgr-base.txt): "ORTE has lost communication with a
 * remote daemon." (PRRTE: "PRTE has ..."), and within the next lines "  Remote daemon: NAME on
 * node H": 1 with the host when line i starts it. The daemon died (killed, OOM, its pod gone) or
 * the network to it failed: no rank, no code in the text. */
static int ompi_daemon_lost(const struct lines *l, size_t i, struct agent_rank_failure *f)
{
    const char *p = l->v[i];
    if (!(lit(&p, "ORTE") || lit(&p, "PRTE")) || strcmp(p, " has lost communication with a remote daemon.") != 0)
        return 0;
    for (size_t k = i + 1; k < l->n && k <= i + 4; k++) {
        const char *q = l->v[k], *on;
        spaces(&q);
        if (!lit(&q, "Remote daemon:") || !(on = strstr(q, " on node ")))
            continue;
        q = on + strlen(" on node ");
        if ((f->host = word(&q)) == NULL || *q != '\0') {
            free(f->host);
            f->host = NULL;
            return 0;
        }
        f->form = "ompi-daemon-lost";
        return 1;
    }
    return 0;
}

int agent_failure_parse(const char *text, size_t len, struct agent_rank_failure *f)
{
    struct lines l;
    memset(f, 0, sizeof *f);
    reset(f);
    if (split(text, len, &l) < 0)
        return 0;
    int found = 0;
    for (size_t i = 0; i < l.n && !found; i++) {
        found = ompi_signal(&l, i, f) || ompi_exit(&l, i, f) || ompi_improper(&l, i, f);
        if (found)
            f->mpi = "openmpi";
        if (found || (found = hydra(&l, i, f)) || (found = daemon_notice(l.v[i], f)))
            f->at = (size_t)(l.v[report_start(&l, i)] - l.buf);
        else
            reset(f);
    }
    for (size_t i = 0; i < l.n && !found; i++) /* no rank's report: a daemon lost */
        if ((found = ompi_daemon_lost(&l, i, f))) {
            f->mpi = "openmpi";
            f->at = (size_t)(l.v[report_start(&l, i)] - l.buf);
        }
    for (size_t i = 0; i < l.n && !found; i++) /* no report: the notice, if any */
        if ((found = ompi_notice(&l, i, f))) {
            f->mpi = "openmpi";
            f->at = (size_t)(l.v[report_start(&l, i + 2)] - l.buf);
        }
    free(l.v);
    free(l.buf);
    return found;
}

/* "name value" lines: the value of key in text (v1 memory.oom_control, v2 memory.events). */
static long long keyed(const char *text, const char *key)
{
    size_t kl = strlen(key);
    for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
        long v;
        const char *q = p;
        if (strncmp(q, key, kl) == 0 && q[kl] == ' ' && (q += kl + 1, num(&q, LONG_MAX, &v)))
            return v;
    }
    return -1;
}

/* A limit: "max" or a byte count; v1's "unlimited" is PAGE_COUNTER_MAX pages (>= 2^60 here). */
static long long limit_of(const char *text)
{
    long v;
    const char *p = text;
    if (!num(&p, LONG_MAX, &v) || (*p && *p != '\n') || v >= (1LL << 60))
        return -1;
    return v;
}

/* One "==> name <==" section; a counter seen twice keeps its largest value. */
static void section(struct agent_cgroup_mem *m, const char *name, const char *body)
{
    long v;
    const char *p = body;
    if (strcmp(name, "memory.events") == 0 || strcmp(name, "memory.oom_control") == 0) {
        long long k = keyed(body, "oom_kill");
        m->version = name[7] == 'e' ? 2 : 1;
        m->oom_kills = k > m->oom_kills ? k : m->oom_kills;
    } else if (strcmp(name, "memory.max") == 0 || strcmp(name, "memory.limit_in_bytes") == 0) {
        m->limit_bytes = limit_of(body);
    } else if (strcmp(name, "memory.failcnt") == 0 && num(&p, LONG_MAX, &v)) {
        m->failcnt = v > m->failcnt ? v : m->failcnt;
    }
}

int agent_cgroup_mem_parse(const char *text, size_t len, struct agent_cgroup_mem *m)
{
    m->oom_kills = m->limit_bytes = m->failcnt = -1;
    m->version = 0;
    struct lines l;
    if (split(text, len, &l) < 0)
        return 0;
    for (size_t i = 0; i < l.n; i++) {
        const char *p = l.v[i];
        size_t n = strlen(p);
        if (!lit(&p, "==> ") || n < 9 || strcmp(l.v[i] + n - 4, " <==") != 0)
            continue;
        char *name = strndup(p, n - 8);
        /* the body: the lines up to the next header, joined back */
        size_t k = i + 1;
        while (k < l.n && strncmp(l.v[k], "==> ", 4) != 0)
            k++;
        for (size_t j = i + 1; j + 1 < k; j++)
            l.v[j][strlen(l.v[j])] = '\n';
        if (name)
            section(m, name, i + 1 < l.n ? l.v[i + 1] : "");
        free(name);
        i = k - 1;
    }
    free(l.v);
    free(l.buf);
    return m->oom_kills >= 0 || m->failcnt >= 0;
}

char *agent_bytes_quantity(long long bytes, char *buf, size_t n)
{
    static const char *const units[] = { "Ki", "Mi", "Gi", "Ti" };
    int u = -1;
    long long v = bytes;
    while (u < 3 && v >= 1024 && v % 1024 == 0)
        v /= 1024, u++;
    snprintf(buf, n, "%lld%s", v, u >= 0 ? units[u] : "");
    return buf;
}

const char *agent_signal_name(int sig, char *buf, size_t n)
{
    static const char *const names[] = { NULL,       "SIGHUP",  "SIGINT",    "SIGQUIT", "SIGILL",  "SIGTRAP",   "SIGABRT",
                                         "SIGBUS",   "SIGFPE",  "SIGKILL",   "SIGUSR1", "SIGSEGV", "SIGUSR2",   "SIGPIPE",
                                         "SIGALRM",  "SIGTERM", "SIGSTKFLT", "SIGCHLD", "SIGCONT", "SIGSTOP",   "SIGTSTP",
                                         "SIGTTIN",  "SIGTTOU", "SIGURG",    "SIGXCPU", "SIGXFSZ", "SIGVTALRM", "SIGPROF",
                                         "SIGWINCH", "SIGIO",   "SIGPWR",    "SIGSYS" };
    if (sig > 0 && sig < (int)(sizeof names / sizeof names[0]))
        return names[sig];
    snprintf(buf, n, "signal %d", sig);
    return buf;
}

const char *agent_failure_reported(const char *text, size_t len)
{
    struct agent_rank_failure f;
    const char *form = NULL;
    if (agent_failure_parse(text, len, &f) && f.mpi && strcmp(f.form, "ompi-notice") != 0)
        form = f.form;
    agent_rank_failure_free(&f);
    return form;
}
