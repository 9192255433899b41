/* holder/main.c - mpi-rsh-holder: one process that holds every worker's exec stream of a
 * launch, as OpenSSH's ControlMaster holds sessions, so per-stream memory is one thread and
 * one TLS connection instead of one mpi-rsh process with its own OpenSSL state.
 *   mpi-rsh-holder [-v] -- COMMAND [ARGS...]     (also --help, --version)
 * listens on a unix socket in a private directory, runs COMMAND (mpirun) with
 * $MPI_RSH_HOLDER naming it, serves each mpi-rsh that hands over its stdio (rsh/thin) until
 * COMMAND exits, then cancels the streams still open (remote kill), removes the socket and
 * exits with COMMAND's status (128+N when killed by signal N). SIGTERM/SIGINT/SIGHUP are
 * passed to COMMAND. When the Kubernetes configuration cannot be loaded it runs COMMAND
 * without a holder (each mpi-rsh then reports the problem itself). A daemon whose stream ends
 * with a non-zero code while COMMAND runs on for $MPI_RSH_DAEMON_EXIT_S (30) seconds stops
 * COMMAND (MPICH's Hydra would wait for ever): the holder prints which pod and code, and exits
 * with that code. See docs/rsh.md. */
#include <errno.h>
#include "mpik8s/contract.h"
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../holder_proto.h"
#include "../rsh.h"
#include "holder.h"
#include "kube/clock.h"
#include "kube/exec.h"
#include "kube/log.h"

#define DRAIN_MS 10000 /* after COMMAND exits: bound on the streams' remote kills */
#define GRACE_MS 3000  /* after COMMAND exits 0: its daemons are exiting; their streams end alone */
#define KILL_MS 10000  /* after the daemon-exit rule's SIGTERM: bound before SIGKILL */

/* The daemon-exit rule's state: code (the daemon's, non-zero) once COMMAND was told to stop. */
struct daemon_stop {
    int code;
    int64_t term_ms;
    int killed;
};

static char dir[4096], sock_path[4200];

/* The private directory and the listening socket in it; the socket, or -1 (message printed). */
static int listen_socket(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/mpi-rsh-holder-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) { /* 0700 */
        fprintf(stderr, "mpi-rsh-holder: cannot create a directory for its socket (%s): %s\n", dir, strerror(errno));
        return -1;
    }
    struct sockaddr_un a = { .sun_family = AF_UNIX };
    snprintf(sock_path, sizeof sock_path, "%s/s", dir);
    int s = strlen(sock_path) < sizeof a.sun_path ? socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0) : -1;
    if (s >= 0)
        strcpy(a.sun_path, sock_path);
    if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof a) < 0 || listen(s, 4096) < 0) {
        fprintf(stderr, "mpi-rsh-holder: cannot listen on %s: %s\n", sock_path,
                s < 0 && errno == 0 ? "path too long" : strerror(errno));
        if (s >= 0)
            close(s);
        rmdir(dir);
        return -1;
    }
    return s;
}

static void remove_socket(void)
{
    unlink(sock_path);
    rmdir(dir);
}

/* Starts COMMAND with signals unblocked (and $MPI_RSH_HOLDER when with_holder). pid or -1. */
static pid_t start_command(char **argv, const sigset_t *blocked, int with_holder)
{
    pid_t pid = fork();
    if (pid != 0)
        return pid;
    sigprocmask(SIG_UNBLOCK, blocked, NULL);
    if (with_holder)
        setenv(RSH_HOLDER_ENV, sock_path, 1);
    else
        unsetenv(RSH_HOLDER_ENV);
    execvp(argv[0], argv);
    fprintf(stderr, "mpi-rsh-holder: cannot run %s: %s\n", argv[0], strerror(errno));
    _exit(127);
}

/* With -v: the streams served and the holder's own CPU time (its threads' TLS and framing),
 * apart from the command's, which the caller measures. */
static void report(const char *cmd)
{
    int n, bad;
    struct rusage ru;
    holder_streams_counts(&n, &bad);
    if (getrusage(RUSAGE_SELF, &ru) == 0)
        KLOG_INFO("%s exited; %d streams served (%d with a non-zero exit), holder CPU %.2f s user + %.2f s system", cmd, n,
                  bad, ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6, ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6);
}

static int status_code(int st) { return WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 128 + WTERMSIG(st) : 255; }

/* The daemon-exit rule (MPIK8S_RSH_ENV_DAEMON_EXIT_S): once a daemon failed, COMMAND has
 * h->daemon_exit_s to end on its own; then it gets SIGTERM, and SIGKILL KILL_MS later. The
 * poll timeout until the next step (-1: none due), after taking the step that is due. */
static int daemon_exit_step(struct holder *h, const char *cmd, pid_t pid, struct daemon_stop *ds)
{
    struct holder_daemon_exit e;
    if (h->daemon_exit_s <= 0 || ds->killed || !holder_streams_daemon_exit(&e))
        return -1;
    int64_t now = kube_now_ms(), due = ds->code ? ds->term_ms + KILL_MS : e.at_ms + (int64_t)h->daemon_exit_s * 1000;
    if (now < due) {
        free(e.pod);
        return (int)(due - now);
    }
    if (!ds->code) {
        fprintf(stderr, MPIK8S_HOLDER_DAEMON_EXIT_FMT, e.pod, e.code, cmd, h->daemon_exit_s);
        fflush(stderr);
        ds->code = e.code;
        ds->term_ms = now;
        kill(pid, SIGTERM);
        free(e.pod);
        return KILL_MS;
    }
    KLOG_WARN("%s still running %d ms after SIGTERM: SIGKILL", cmd, KILL_MS);
    kill(pid, SIGKILL);
    ds->killed = 1;
    free(e.pod);
    return -1;
}

/* Serves clients until COMMAND (pid) exits; its wait status. */
static int serve(struct holder *h, int ls, int sfd, pid_t pid, const char *cmd, struct daemon_stop *ds)
{
    for (;;) {
        struct pollfd p[3] = { { .fd = sfd, .events = POLLIN },
                               { .fd = h->wake_fd, .events = POLLIN },
                               { .fd = ls, .events = POLLIN } };
        int timeout = daemon_exit_step(h, cmd, pid, ds);
        if (poll(p, ls >= 0 ? 3 : 2, timeout) < 0 && errno != EINTR)
            return -1;
        uint64_t n;
        if ((p[1].revents & POLLIN) && read(h->wake_fd, &n, sizeof n) < 0)
            KLOG_DEBUG("eventfd: %s", strerror(errno));
        if (p[0].revents & POLLIN) {
            struct signalfd_siginfo si;
            if (read(sfd, &si, sizeof si) == sizeof si && si.ssi_signo != SIGCHLD)
                kill(pid, (int)si.ssi_signo);
            int st;
            pid_t w;
            while ((w = waitpid(-1, &st, WNOHANG)) > 0)
                if (w == pid)
                    return st;
        }
        if (ls >= 0 && (p[2].revents & POLLIN)) {
            int c = accept4(ls, NULL, NULL, SOCK_CLOEXEC);
            if (c >= 0 && holder_stream_start(h, c) < 0)
                KLOG_WARN("cannot serve a client: out of threads or memory");
            if (c < 0 && (errno == EMFILE || errno == ENFILE)) { /* the client waits in the backlog: no spin */
                KLOG_WARN("accept: %s (%d streams open)", strerror(errno), holder_streams_active());
                poll(NULL, 0, 100);
            }
        }
    }
}

static void usage(FILE *f)
{
    fputs("usage: mpi-rsh-holder [-v] -- COMMAND [ARGS...]\n"
          "       mpi-rsh-holder --help | --version\n"
          "Runs COMMAND (mpirun) with $" RSH_HOLDER_ENV " naming a private unix socket and holds every\n"
          "worker's exec stream of the launch that mpi-rsh hands to it there; exits with COMMAND's status.\n"
          "  -v         more logging (repeat for more); on exit: streams served, non-zero ends, CPU time\n"
          "  --help     print this help\n"
          "  --version  print the version\n",
          f);
}

/* Options before "--" or COMMAND: -1 with *cmd = COMMAND's index, else the exit code (0 after
 * --help or --version on stdout, 2 after a usage error on stderr). */
static int parse_options(int argc, char **argv, int *verbose, int *cmd)
{
    int i = 1;
    for (; i < argc && argv[i][0] == '-' && strcmp(argv[i], "--") != 0; i++) {
        if (!strcmp(argv[i], "-v")) {
            (*verbose)++;
        } else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "--version")) {
            if (argv[i][2] == 'h')
                usage(stdout);
            else
                printf("mpi-rsh-holder %s\n", RSH_VERSION);
            return fflush(stdout) == 0 && !ferror(stdout) ? 0 : 2;
        } else {
            fprintf(stderr, "mpi-rsh-holder: unknown option %s\n", argv[i]);
            usage(stderr);
            return 2;
        }
    }
    if (i < argc && !strcmp(argv[i], "--"))
        i++;
    if (i >= argc) {
        usage(stderr);
        return 2;
    }
    *cmd = i;
    return -1;
}

int main(int argc, char **argv)
{
    int i = 0, verbose = 0;
    kube_log_set_component("mpi-rsh-holder");
    int code = parse_options(argc, argv, &verbose, &i);
    if (code >= 0)
        return code;
    kube_log_set_level(verbose ? KUBE_LOG_INFO + verbose : KUBE_LOG_WARN);
    signal(SIGPIPE, SIG_IGN);
    struct rlimit nf; /* 5 fds per stream (client socket, its stdio, the TLS socket): raise the soft limit */
    if (getrlimit(RLIMIT_NOFILE, &nf) == 0 && nf.rlim_cur < nf.rlim_max) {
        nf.rlim_cur = nf.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &nf) < 0)
            KLOG_DEBUG("setrlimit(NOFILE): %s", strerror(errno));
    }
    sigset_t set;
    sigemptyset(&set);
    int sigs[] = { SIGCHLD, SIGTERM, SIGINT, SIGHUP };
    for (size_t k = 0; k < sizeof sigs / sizeof *sigs; k++)
        sigaddset(&set, sigs[k]);
    int sfd = sigprocmask(SIG_BLOCK, &set, NULL) == 0 ? signalfd(-1, &set, SFD_CLOEXEC) : -1;
    if (sfd < 0) {
        fprintf(stderr, "mpi-rsh-holder: signalfd: %s\n", strerror(errno));
        return 255;
    }

    struct kube_config *cfg = NULL;
    char *err = NULL;
    struct holder h = { .wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK) };
    int ls = -1;
    if (h.wake_fd < 0)
        KLOG_WARN("eventfd: %s; a failed daemon is noticed late", strerror(errno));
    if (kube_config_load(NULL, NULL, &cfg, &err) < 0) {
        KLOG_WARN("not holding streams (each mpi-rsh runs alone): %s", err ? err : "no Kubernetes configuration");
        free(err);
    } else {
        const char *td = getenv(MPIK8S_RSH_ENV_TLS_CACHE_DIR); /* the directory every mpi-rsh uses */
        h.cfg = cfg;
        h.tls_dir = !td ? kube_tls_session_dir_default() : *td ? strdup(td) : NULL;
        if (rsh_reattach_env(&h.reattach_s, &err) < 0) { /* the launcher's setting, read once */
            KLOG_WARN("%s; reattaching up to %d s", err, RSH_REATTACH_DEFAULT_S);
            h.reattach_s = RSH_REATTACH_DEFAULT_S;
            free(err);
            err = NULL;
        }
        if (rsh_daemon_exit_env(&h.daemon_exit_s, &err) < 0) {
            KLOG_WARN("%s; stopping %s %d s after a daemon fails", err, argv[i], MPIK8S_RSH_DAEMON_EXIT_DEFAULT_S);
            h.daemon_exit_s = MPIK8S_RSH_DAEMON_EXIT_DEFAULT_S;
            free(err);
            err = NULL;
        }
        const char *mark = getenv(MPIK8S_RSH_ENV_MARK);
        if (mark && *mark)
            h.daemon_exit_s = 0; /* mpi-agent watches: its daemon-exit stop reads the mark's exit lines */
        ls = listen_socket();
    }
    pid_t pid = start_command(argv + i, &set, ls >= 0);
    if (pid < 0) {
        fprintf(stderr, "mpi-rsh-holder: fork: %s\n", strerror(errno));
        if (ls >= 0) {
            close(ls);
            remove_socket();
        }
        kube_config_free(cfg);
        free(h.tls_dir);
        return 255;
    }
    struct daemon_stop ds = { 0 };
    int st = serve(&h, ls, sfd, pid, argv[i], &ds);
    if (ls >= 0) {
        close(ls);
        remove_socket();
    }
    /* mpirun exits 0 once its daemons have acknowledged the exit command, before they are
     * gone: their streams end on their own within moments. Cancelling them at once would cost
     * a remote kill (a second exec) per stream and a non-zero code for each. */
    if (st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0 && holder_streams_active())
        holder_streams_wait(GRACE_MS);
    if (holder_streams_active()) {
        KLOG_INFO("%s exited; stopping %d streams still open", argv[i], holder_streams_active());
        holder_streams_cancel_all();
    }
    if (holder_streams_wait(DRAIN_MS) < 0)
        KLOG_WARN("%d streams still open %d ms after %s exited; exiting anyway", holder_streams_active(), DRAIN_MS, argv[i]);
    report(argv[i]);
    /* Never a return from main: a stream thread that has just untracked itself may still be in
     * OpenSSL's per-thread cleanup, and exit()'s atexit handlers (OpenSSL's, libcurl's) would free
     * the same state under it. The process is over; the kernel frees the rest. */
    fflush(NULL);
    if (ds.code) /* stopped for a failed daemon: its code, not the signal's */
        _exit(ds.code);
    if (st >= 0 && WIFSIGNALED(st)) { /* die the same way, so the agent says "killed by" */
        int sig = WTERMSIG(st);
        signal(sig, SIG_DFL);
        sigset_t one;
        sigemptyset(&one);
        sigaddset(&one, sig);
        sigprocmask(SIG_UNBLOCK, &one, NULL);
        raise(sig);
    }
    _exit(st < 0 ? 255 : status_code(st));
}
