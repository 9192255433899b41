/* supervise.c - `mpi-agent run`: CMD runs as a child in its own process group
 * with stdout/stderr piped through the agent unchanged (to see first output and
 * silence). SIGTERM/SIGINT/SIGHUP are forwarded to the group and escalated to
 * SIGKILL after the grace period. A watcher thread follows the worker pods in
 * the informer: a worker deleted, failed or NotReady stops CMD, naming it (and,
 * for a preempted worker, its preemptor once CMD is stopped: agent/preemptor.c); the
 * pod-network watch (agent/netwatch.h) does the same for a worker silent over the pod
 * network past the network timeout, the launch watch (agent/rshwatch.h) for an mpirun that
 * never calls mpi-rsh, and the daemon-exit stop (agent/daemonexit.h) for one that runs on after
 * a daemon it launched failed. The agent is a child subreaper, so nothing CMD started outlives it. */
#include "supervise.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "daemonexit.h"
#include "failure.h"
#include "netwatch.h"
#include "podstate.h"
#include "preemptor.h"
#include "reach.h"
#include "ranksup.h"
#include "stackcrash.h"
#include "rshwatch.h"
#include "kube/json.h"
#include "kube/log.h"
#include "kube/poddisrupt.h"
#include "kube/util.h"

#define DRAIN_MS 2000 /* after CMD exits, wait this long for its pipes to close */
/* After CMD failed with no reason of ours, wait this long for the pod watcher to name a worker
 * that went: mpirun may notice a lost daemon (its exec stream closed) before the pod cache shows
 * the worker Failed or deleted, and then the worker, not "command exited 205", is the cause. */
#define LOST_WAIT_MS 5000
#define LEFTOVER_TERM_MS 2000

struct watcher {
    struct agent_session *s;
    int notify_fd; /* write end: one byte when a worker goes bad */
    volatile int stop;
    pthread_mutex_t mu;
    char *msg;         /* "worker w-1: being deleted ..." (the first report; later ones dropped) */
    size_t bad;        /* its index in s->hosts */
    json_t *preempted; /* that worker's pod when the scheduler preempted it, or NULL */
};

/* Records the first bad worker (msg and preempted: taken) and wakes the supervisor; called
 * from the pod watcher's thread and, through watcher_report, the pod-network watch's. */
static void watcher_report_pod(struct watcher *w, char *msg, size_t idx, json_t *preempted)
{
    pthread_mutex_lock(&w->mu);
    int first = !w->msg;
    if (first) {
        w->msg = msg;
        w->bad = idx;
        w->preempted = preempted;
    }
    pthread_mutex_unlock(&w->mu);
    if (!first) {
        free(msg);
        json_decref(preempted);
        return;
    }
    if (write(w->notify_fd, "!", 1) < 0)
        KLOG_WARN("watcher: cannot notify: %s", strerror(errno));
}

/* The pod-network watch's report (agent/netwatch.h's callback). */
static void watcher_report(void *ctx, char *msg, size_t idx) { watcher_report_pod(ctx, msg, idx, NULL); }

struct sup {
    struct agent_session *s;
    pid_t pid;
    int out_fd, err_fd, sig_fd, note_fd;
    int child_done, status;
    int stopping;    /* we asked CMD to stop */
    int64_t kill_at; /* monotonic ms to SIGKILL the group, 0 = none */
    int64_t started, last_output, drain_until;
    int64_t lost_wait_until;     /* CMD failed: until then a worker the watcher names is its cause */
    char *reason;                /* why we stopped CMD, or NULL */
    long lost;                   /* index of the worker whose failure stopped CMD, -1 none */
    json_t *preempted;           /* its pod when it was preempted (the preemptor is named at the end), or NULL */
    struct agent_launchwatch lw; /* mpirun must call mpi-rsh within a bound */
    struct agent_daemonexit de;  /* nor run on after a daemon failed */
    int up;                      /* the ranks are up: the readiness probe's file is written */
    int64_t up_look;             /* monotonic ms of the last look at the launch mark */
};

/* "worker POD: reason (phase P, node N)" for a worker that is not ready (by: its preemptor or
 * NULL), or NULL when it is ready. */
static char *worker_line(const char *name, const json_t *pod, const char *by)
{
    struct agent_pod_view v;
    char *msg = NULL;
    if (agent_pod_assess_by(pod, by, &v) == 0 && v.verdict != AGENT_POD_READY)
        msg = v.verdict == AGENT_POD_MISSING
                  ? kube_strdup_printf("worker %s: deleted", name)
                  : kube_strdup_printf("worker %s: %s (phase %s, node %s)", name, v.reason, v.phase, v.node ? v.node : "-");
    agent_pod_view_free(&v);
    return msg;
}

/* Returns the first worker that is not ready, as "worker POD: reason" (its index in *idx), or
 * NULL; *preempted (when not NULL) gets its pod (new reference) when the scheduler preempted it. */
static char *bad_worker(struct agent_session *s, size_t *idx, json_t **preempted)
{
    char *msg = NULL;
    for (size_t i = 0; i < s->hosts.n && !msg; i++) {
        *idx = i;
        json_t *pod = kube_informer_get(s->inf, s->ns, s->hosts.v[i].pod);
        msg = worker_line(s->hosts.v[i].pod, pod, NULL);
        if (msg && preempted && kube_pod_preempted(pod))
            *preempted = json_incref(pod);
        json_decref(pod);
    }
    return msg;
}

static void *watcher_main(void *arg)
{
    struct watcher *w = arg;
    uint64_t gen = kube_informer_generation(w->s->inf);
    while (!w->stop) {
        size_t idx;
        json_t *preempted = NULL;
        char *msg = bad_worker(w->s, &idx, &preempted);
        if (msg) {
            watcher_report_pod(w, msg, idx, preempted);
            return NULL;
        }
        gen = kube_informer_wait_change(w->s->inf, gen, 100); /* short: lets stop be quick */
    }
    return NULL;
}

/* Asks CMD's process group to stop; escalation after the grace period. */
static void sup_stop(struct sup *u, int sig, char *why)
{
    if (why && !u->reason)
        u->reason = why;
    else
        free(why);
    if (!u->child_done && kill(-u->pid, sig) != 0 && errno != ESRCH)
        KLOG_WARN("kill(-%d, %d): %s", (int)u->pid, sig, strerror(errno));
    if (!u->stopping) {
        u->stopping = 1;
        u->kill_at = kube_now_ms() + (int64_t)(u->s->o->grace_s * 1000);
    }
}

/* Copies what is readable on *fd to out; closes *fd (sets -1) at EOF. */
static void pass_through(struct sup *u, int *fd, int out)
{
    char buf[65536];
    ssize_t r = read(*fd, buf, sizeof(buf));
    if (r < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (r <= 0) {
        close(*fd);
        *fd = -1;
        return;
    }
    agent_phase_mark(&u->s->phases, AGENT_PHASE_FIRST_OUTPUT);
    u->last_output = kube_now_ms();
    agent_outbuf_append(&u->s->output, buf, (size_t)r);
    /* our stdout gone (-1): keep draining so CMD never blocks */
    (void)kube_write_all(out, buf, (size_t)r);
}

/* Reaps CMD and any orphans we inherited as subreaper. */
static void reap(struct sup *u)
{
    int st;
    pid_t p;
    while ((p = waitpid(-1, &st, WNOHANG)) > 0) {
        if (p == u->pid && !u->child_done) {
            u->child_done = 1;
            u->status = st;
            u->drain_until = kube_now_ms() + DRAIN_MS;
            if (!(WIFEXITED(st) && WEXITSTATUS(st) == 0) && !u->reason && u->note_fd >= 0)
                u->lost_wait_until = kube_now_ms() + LOST_WAIT_MS;
        }
    }
}

static void on_signal(struct sup *u)
{
    struct signalfd_siginfo si;
    while (read(u->sig_fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
        int sig = (int)si.ssi_signo;
        if (sig == SIGCHLD)
            continue;
        KLOG_WARN("received %s: forwarding to %s (SIGKILL in %.0f s)", strsignal(sig),
                  u->child_done ? "leftovers" : "the command", u->s->o->grace_s);
        u->s->stopped_by_signal = 1;
        sup_stop(u, sig, kube_strdup_printf("received %s", strsignal(sig)));
    }
    reap(u);
}

/* Checks the workers when output has been silent for the progress timeout. */
static void on_silence(struct sup *u)
{
    struct agent_session *s = u->s;
    struct agent_reach_result *rr = NULL;
    int bad = agent_reach_all(s, 5.0, &rr);
    char *rep = rr ? agent_reach_report(s, rr) : NULL;
    size_t idx;
    char *pods = bad_worker(s, &idx, NULL);
    char *why = kube_strdup_printf("no progress for %.0f s (no output); workers: %s%s%s", s->o->progress_timeout_s,
                                   bad == 0 ? "all reachable" : "unreachable:",
                                   bad == 0 ? ""
                                   : rep    ? rep
                                            : "?",
                                   pods ? pods : "");
    for (char *p = why; p && *p; p++)
        if (*p == '\n')
            *p = ' ';
    KLOG_ERROR("%s; stopping the command", why);
    sup_stop(u, SIGTERM, why);
    free(rep);
    free(pods);
    agent_reach_results_free(rr, s->hosts.n);
}

/* The launch watch's look: an mpirun that has not called mpi-rsh within the bound is stopped; one
 * that ended without calling it fails the run (agent/rshwatch.h). */
static void launch_watch(struct sup *u, int64_t now)
{
    int code = u->child_done && WIFEXITED(u->status) ? WEXITSTATUS(u->status) : -1;
    char *why = agent_launchwatch_step(&u->lw, u->s, u->pid, u->child_done, code, now);
    if (!why)
        return;
    if (u->child_done) {
        KLOG_ERROR("%s", why);
        if (!u->reason)
            u->reason = why;
        else
            free(why);
        return;
    }
    KLOG_ERROR("%s; stopping the command", why);
    sup_stop(u, SIGTERM, why);
}

/* The daemon-exit stop's look: its line goes where mpirun's output goes (the log, and the text
 * the failure attribution reads: form "daemon-exit"), and CMD is asked to stop. */
static void daemon_exit(struct sup *u, int64_t now)
{
    const char *cmd = u->s->o->argv && u->s->o->argv[0] ? u->s->o->argv[0] : "the command";
    const char *base = strrchr(cmd, '/');
    char *line = agent_daemonexit_step(&u->de, u->lw.mark, base ? base + 1 : cmd, now);
    if (!line)
        return;
    (void)kube_write_all(2, line, strlen(line));
    agent_outbuf_append(&u->s->output, line, strlen(line));
    free(line);
    sup_stop(u, SIGTERM, NULL);
}

/* Writes the readiness probe's file once the run's ranks are up (agent/ranksup.h): at the first
 * output, or once mpi-rsh launched into every worker; at once when the launch watch is off, and
 * when no MPI launcher ran in the command's first AGENT_RANKSUP_NO_LAUNCHER_MS. */
static void ranks_up(struct sup *u, int64_t now)
{
    struct agent_session *s = u->s;
    if (u->up || u->child_done || u->stopping)
        return;
    int no_mpi = !u->lw.w.launcher_at && now - u->started >= AGENT_RANKSUP_NO_LAUNCHER_MS;
    if (!s->phases.at_ms[AGENT_PHASE_FIRST_OUTPUT] && u->lw.mark && !no_mpi) {
        if (now - u->up_look < AGENT_RANKSUP_LOOK_MS)
            return;
        u->up_look = now;
        size_t n = agent_ranksup_launched_file(u->lw.mark, &s->hosts);
        if (n < s->hosts.n)
            return;
    }
    u->up = 1;
    char *err = NULL;
    if (access(s->o->dest, W_OK) != 0)
        KLOG_DEBUG("ranks up; %s: %s (not in a launcher pod?)", s->o->dest, strerror(errno));
    else if (agent_ranksup_write(s->o->dest, &err) < 0)
        KLOG_WARN("the ranks are up, but the launcher cannot say so to its readiness probe: %s", err);
    else
        KLOG_DEBUG("ranks up: %s/%s written", s->o->dest, AGENT_RANKSUP_FILE);
    free(err);
}

/* Milliseconds until the next timed action (poll timeout), -1 for none. */
static int next_timeout(const struct sup *u)
{
    int64_t now = kube_now_ms(), t = -1;
    if (u->kill_at)
        t = u->kill_at - now;
    if (u->child_done && (t < 0 || u->drain_until - now < t))
        t = u->drain_until - now;
    if (u->child_done && u->lost_wait_until && !u->reason && u->note_fd >= 0 && (t < 0 || u->lost_wait_until - now < t))
        t = u->lost_wait_until - now;
    double pt = u->s->o->progress_timeout_s;
    if (pt > 0 && !u->stopping) {
        int64_t d = u->last_output + (int64_t)(pt * 1000) - now;
        if (t < 0 || d < t)
            t = d;
    }
    if (t < 0 && (u->kill_at || u->child_done || pt > 0))
        t = 0;
    int lp = agent_launchwatch_period_ms(&u->lw, now); /* the launch watch's next look */
    if (lp >= 0 && (t < 0 || t > lp))
        t = lp;
    if (!u->up && (t < 0 || t > AGENT_RANKSUP_LOOK_MS))
        t = AGENT_RANKSUP_LOOK_MS;
    /* a bounded poll: reaping does not depend on SIGCHLD alone */
    return t < 0 || t > 1000 ? 1000 : (int)t;
}

/* One round of the event loop; returns 0 when done. */
static int sup_step(struct sup *u, struct watcher *w)
{
    struct pollfd p[4] = {
        { u->out_fd, POLLIN, 0 }, { u->err_fd, POLLIN, 0 }, { u->sig_fd, POLLIN, 0 }, { u->note_fd, POLLIN, 0 }
    };
    int pr = poll(p, 4, next_timeout(u));
    if (pr < 0 && errno != EINTR)
        return 0;
    if (p[0].revents)
        pass_through(u, &u->out_fd, 1);
    if (p[1].revents)
        pass_through(u, &u->err_fd, 2);
    if (p[2].revents)
        on_signal(u);
    if (p[3].revents & POLLIN) {
        char c;
        if (read(u->note_fd, &c, 1) < 0)
            KLOG_DEBUG("watcher pipe: %s", strerror(errno));
        pthread_mutex_lock(&w->mu);
        char *msg = w->msg ? strdup(w->msg) : NULL;
        size_t bad = w->bad;
        json_t *preempted = w->preempted;
        w->preempted = NULL;
        pthread_mutex_unlock(&w->mu);
        close(u->note_fd);
        u->note_fd = -1;
        if (msg && !u->child_done) {
            KLOG_ERROR("%s: stopping the command", msg);
            if (!u->reason) {
                u->lost = (long)bad;
                u->preempted = json_incref(preempted);
            }
            sup_stop(u, SIGTERM, msg);
        } else if (msg && u->lost_wait_until && !u->reason) {
            /* the command failed first: the worker that went is why (LOST_WAIT_MS) */
            KLOG_ERROR("%s: the command had failed already", msg);
            u->lost = (long)bad;
            u->preempted = json_incref(preempted);
            u->reason = msg;
        } else {
            free(msg);
        }
        json_decref(preempted);
    }
    reap(u);
    int64_t now = kube_now_ms();
    if (u->kill_at && now >= u->kill_at) {
        KLOG_WARN("grace period over: SIGKILL to process group %d", (int)u->pid);
        kill(-u->pid, SIGKILL);
        u->kill_at = 0;
    }
    if (u->s->o->progress_timeout_s > 0 && !u->stopping && !u->child_done &&
        now - u->last_output >= (int64_t)(u->s->o->progress_timeout_s * 1000))
        on_silence(u);
    if (!u->stopping)
        launch_watch(u, now);
    if (!u->stopping && !u->child_done)
        daemon_exit(u, now);
    ranks_up(u, now);
    int lost_wait = u->lost_wait_until && !u->reason && u->note_fd >= 0 && now < u->lost_wait_until;
    if (u->child_done && ((u->out_fd < 0 && u->err_fd < 0) || now >= u->drain_until) && !lost_wait)
        return 0;
    return 1;
}

/* Ends whatever is left of CMD's process group and reaps it, bounded. */
static void kill_leftovers(struct sup *u)
{
    if (kill(-u->pid, 0) != 0)
        return;
    KLOG_DEBUG("process group %d outlived the command: SIGTERM", (int)u->pid);
    kill(-u->pid, SIGTERM);
    int64_t until = kube_now_ms() + LEFTOVER_TERM_MS;
    while (kill(-u->pid, 0) == 0 && kube_now_ms() < until) {
        reap(u);
        kube_sleep_ms(20);
    }
    if (kill(-u->pid, 0) == 0) {
        kill(-u->pid, SIGKILL);
        kube_sleep_ms(50);
    }
    reap(u);
}

/* In the child: restores signals, joins its own group, wires the pipes, execs. */
static void child_exec(char **argv, int out_w, int err_w, const sigset_t *old)
{
    signal(SIGPIPE, SIG_DFL);
    sigprocmask(SIG_SETMASK, old, NULL);
    setpgid(0, 0);
    if (dup2(out_w, 1) < 0 || dup2(err_w, 2) < 0)
        _exit(127);
    execvp(argv[0], argv);
    dprintf(2, "mpi-agent: cannot run %s: %s\n", argv[0], strerror(errno));
    _exit(127);
}

/* Starts the child; 0 ok, -1 with *errmsg. */
static int sup_spawn(struct sup *u, char **argv, const sigset_t *old, char **errmsg)
{
    int po[2], pe[2];
    if (pipe2(po, O_CLOEXEC) != 0)
        return kube_set_err(errmsg, "pipe: %s", strerror(errno));
    if (pipe2(pe, O_CLOEXEC) != 0) {
        kube_set_err(errmsg, "pipe: %s", strerror(errno));
        close(po[0]);
        close(po[1]);
        return -1;
    }
    agent_phase_mark(&u->s->phases, AGENT_PHASE_MPIRUN_STARTED);
    u->started = u->last_output = kube_now_ms();
    u->pid = fork();
    if (u->pid == 0)
        child_exec(argv, po[1], pe[1], old);
    close(po[1]);
    close(pe[1]);
    u->out_fd = po[0];
    u->err_fd = pe[0];
    if (u->pid < 0) {
        kube_set_err(errmsg, "fork: %s", strerror(errno));
        close(po[0]);
        close(pe[0]);
        return -1;
    }
    if (setpgid(u->pid, u->pid) != 0 && errno != EACCES)
        KLOG_DEBUG("setpgid: %s", strerror(errno));
    return 0;
}

/* After a failed run: s->failure and its human line (new string), or NULL when neither
 * mpirun's text nor the supervisor names the failed process. */
static char *attribute(struct sup *u, int code)
{
    struct agent_session *s = u->s;
    size_t len = 0;
    char *tail = agent_outbuf_copy(&s->output, &len, NULL), *phrase = NULL;
    if (!tail)
        return NULL;
    char *pod = NULL;
    int dcode = 0;
    if (u->lost >= 0)
        s->failure = agent_failure_worker_lost(s, (size_t)u->lost, u->reason, tail, len);
    else if (!u->reason) {
        s->failure = agent_failure_explain(s, tail, len, s->o->argv, WIFEXITED(u->status) ? code : -1, &phrase);
        /* a daemon that mpi-rsh saw end non-zero: Hydra names none, Open MPI no code */
        if (agent_daemonexit_read(u->lw.mark, &pod, &dcode))
            s->failure = agent_failure_daemon_end(s, s->failure, pod, dcode, tail, len, &phrase);
    }
    free(pod);
    free(tail);
    if (s->failure)
        KLOG_ERROR("failed: %s", kube_json_at_str(s->failure, MPIK8S_FAIL_MESSAGE));
    return phrase;
}

/* A preempted worker stopped CMD: its line again, naming the preemptor from the scheduler's
 * Event (bounded wait; kept as it was when the Event does not come). */
static void name_preemptor(struct sup *u)
{
    if (!u->preempted || u->lost < 0)
        return;
    char *by = agent_preemptor_find(u->s, u->preempted, AGENT_PREEMPTOR_WAIT_MS);
    char *line = by ? worker_line(u->s->hosts.v[u->lost].pod, u->preempted, by) : NULL;
    if (line) {
        free(u->reason);
        u->reason = line;
    }
    free(by);
}

/* An Open MPI launcher killed by a signal before any mpi-rsh call, on an IPv6-only pod: the
 * reason names the stack and what it lacks (agent/stackcrash.h). */
static void ipv6_crash(struct sup *u, int sig, double secs)
{
    if (u->reason || u->stopping || u->lw.w.rsh_called || !u->lw.w.launcher_at || u->s->o->mpi != MPIK8S_MPI_OPENMPI ||
        agent_host_has_ipv4() != 0)
        return;
    u->reason = agent_stackcrash_ipv6_line(u->lw.w.seen, sig, secs);
    if (u->reason)
        KLOG_ERROR("%s", u->reason);
}

/* Hydra's proxies unable to reach mpiexec on an IPv6-only pod (agent/stackcrash.h). */
static void hydra_ipv6(struct sup *u, int code)
{
    if (u->reason || (u->stopping && !u->de.fired) || u->s->o->mpi == MPIK8S_MPI_OPENMPI || agent_host_has_ipv4() != 0)
        return;
    size_t len = 0;
    char *out = agent_outbuf_copy(&u->s->output, &len, NULL);
    u->reason = agent_stackcrash_hydra_ipv6_line(out, len, code);
    free(out);
    if (u->reason)
        KLOG_ERROR("%s", u->reason);
}

/* An exit status of 0 after the MPI's own account of a failure (agent_failure_reported) is not
 * trusted: the form found (static), the run then a failure; NULL when none. */
static const char *reported_failure(struct sup *u)
{
    size_t len = 0;
    char *out = agent_outbuf_copy(&u->s->output, &len, NULL);
    const char *form = out ? agent_failure_reported(out, len) : NULL;
    free(out);
    return form;
}

static char *describe_exit(struct sup *u, int *code)
{
    name_preemptor(u);
    double secs = (kube_now_ms() - u->started) / 1000.0;
    const char *cmd = "command", *lied = NULL;
    char *how;
    if (WIFEXITED(u->status)) {
        *code = WEXITSTATUS(u->status);
        how = kube_strdup_printf("%s exited %d after %.1f s", cmd, *code, secs);
        if (*code != 0)
            hydra_ipv6(u, *code);
        if (*code == 0 && u->lw.failed)
            *code = 1; /* its ranks ran, but not on the workers */
        else if (*code == 0 && (lied = reported_failure(u)))
            *code = 1;
    } else {
        int sig = WIFSIGNALED(u->status) ? WTERMSIG(u->status) : SIGKILL;
        *code = 128 + sig;
        how = kube_strdup_printf("%s killed by %s after %.1f s", cmd, strsignal(sig), secs);
        ipv6_crash(u, sig, secs);
        hydra_ipv6(u, *code); /* an mpiexec the daemon-exit stop ended */
    }
    char *sum = u->reason ? kube_strdup_printf("%s; %s", u->reason, how)
                          : kube_strdup_printf("%s on %zu worker(s)", how, u->s->hosts.n);
    free(how);
    if (lied && sum) {
        char *more =
            kube_strdup_printf("%s; not trusted: its output holds the MPI's own failure report (%s), exit 1", sum, lied);
        free(sum);
        sum = more;
    }
    char *who = *code != 0 ? attribute(u, *code) : NULL;
    if (who) {
        char *both = kube_strdup_printf("%s; %s", who, sum);
        free(sum);
        sum = both;
    }
    free(who);
    return sum;
}

/* Starts the watcher thread when the informer is synced; 0 ok (or skipped), -1 error. */
static int start_watcher(struct agent_session *s, struct watcher *w, pthread_t *th, int *note_rd)
{
    int np[2];
    *note_rd = -1;
    if (!s->inf || !kube_informer_has_synced(s->inf))
        return 0;
    if (pipe2(np, O_CLOEXEC) != 0)
        return -1;
    w->s = s;
    w->notify_fd = np[1];
    if (pthread_create(th, NULL, watcher_main, w) != 0) {
        close(np[0]);
        close(np[1]);
        return -1;
    }
    *note_rd = np[0];
    return 1;
}

void agent_supervise_sigset(sigset_t *set)
{
    sigemptyset(set);
    sigaddset(set, SIGTERM);
    sigaddset(set, SIGINT);
    sigaddset(set, SIGHUP);
    sigaddset(set, SIGCHLD);
}

int agent_supervise(struct agent_session *s, char **argv, char **summary)
{
    struct sup u = { .s = s, .out_fd = -1, .err_fd = -1, .note_fd = -1, .lost = -1 };
    struct watcher w = { .notify_fd = -1 };
    pthread_mutex_init(&w.mu, NULL);
    pthread_t th;
    sigset_t set, old;
    agent_supervise_sigset(&set);
    pthread_sigmask(SIG_BLOCK, &set, &old);
    /* the child starts with the mask the process had, less the supervised signals (agent_cmd_run blocked them) */
    sigdelset(&old, SIGTERM), sigdelset(&old, SIGINT), sigdelset(&old, SIGHUP);
    sigdelset(&old, SIGCHLD);
    signal(SIGPIPE, SIG_IGN);
    if (!s->output.buf && agent_outbuf_init(&s->output, AGENT_OUTBUF_MAX) < 0)
        KLOG_WARN("not keeping the command's output: out of memory");
    if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0)
        KLOG_DEBUG("PR_SET_CHILD_SUBREAPER: %s", strerror(errno));
    u.sig_fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
    int watching = start_watcher(s, &w, &th, &u.note_fd);
    struct agent_netwatch *nw = NULL;
    if (watching > 0 && s->o->network_timeout_s > 0 &&
        agent_netwatch_start(s, s->o->network_timeout_s, watcher_report, &w, &nw) < 0)
        KLOG_WARN("not watching the workers over the pod network: %s", strerror(errno));
    char *err = NULL;
    int code = 127;
    agent_launchwatch_start(&u.lw, s, s->o->argv ? s->o->argv : argv, kube_now_ms());
    u.de.bound_ms = (int64_t)(s->o->daemon_exit_s * 1000);
    if (u.sig_fd < 0 || watching < 0 || sup_spawn(&u, argv, &old, &err) < 0) {
        *summary = kube_strdup_printf("cannot start %s: %s", argv[0], err ? err : strerror(errno));
        free(err);
    } else {
        if (!watching)
            KLOG_WARN("not watching the workers while the command runs (no pod cache)");
        while (sup_step(&u, &w))
            ;
        kill_leftovers(&u);
        *summary = describe_exit(&u, &code);
    }
    agent_phase_mark(&s->phases, AGENT_PHASE_FINISHED);
    agent_launchwatch_end(&u.lw);
    agent_daemonexit_free(&u.de);
    agent_netwatch_stop(nw); /* before the watcher's pipe closes: it may still report */
    if (watching > 0) {
        w.stop = 1;
        pthread_join(th, NULL);
        close(w.notify_fd);
    }
    free(w.msg);
    json_decref(w.preempted);
    json_decref(u.preempted);
    pthread_mutex_destroy(&w.mu);
    int *fds[] = { &u.out_fd, &u.err_fd, &u.sig_fd, &u.note_fd };
    for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
        if (*fds[i] >= 0)
            close(*fds[i]);
    free(u.reason);
    return code;
}

void agent_print_rank_map(struct agent_session *s)
{
    int rank = 0;
    for (size_t i = 0; i < s->hosts.n; i++) {
        int n = agent_host_slots(&s->hosts.v[i], s->o->slots);
        json_t *pod = s->inf ? kube_informer_get(s->inf, s->ns, s->hosts.v[i].pod) : NULL;
        const char *node = pod ? kube_json_at_str(pod, "spec", "nodeName") : NULL;
        const char *ip = pod ? agent_pod_ip(pod, s->o->ip_family) : NULL;
        char *gpus = pod ? agent_pod_gpus(pod) : NULL;
        char r[48];
        if (n == 1)
            snprintf(r, sizeof(r), "rank %d", rank);
        else
            snprintf(r, sizeof(r), "ranks %d-%d", rank, rank + n - 1);
        KLOG_INFO("%s -> pod %s (node %s, IP %s%s%s)", r, s->hosts.v[i].pod, node ? node : "?", ip ? ip : "?",
                  gpus ? ", GPUs " : "", gpus ? gpus : "");
        free(gpus);
        json_decref(pod);
        rank += n;
    }
}
