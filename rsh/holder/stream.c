/* stream.c - one thin client's exec stream in the holder, on its own thread: receive the
 * request and the client's stdin/stdout/stderr (rsh/holder_proto.h), run the exec stream as
 * mpi-rsh would (kube_exec_run, session tag, remote kill when stopped), write a failure's
 * one-line message to the client's stderr, reply the exit code. The client's socket is the
 * stream's cancel fd: a cancel message or the client going away stops the stream. */
#include "holder.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "../holder_proto.h"
#include "../rsh.h"
#include "kube/clock.h"
#include "kube/exec.h"
#include "kube/log.h"
#include "kube/util.h"
#include "mpik8s/contract.h"
#include "mpik8s/util.h"

#define STACK_SIZE (256 * 1024) /* kube_exec_run's deepest frames use well under this */
#define REQ_TIMEOUT_S 10        /* a client that connects sends its request at once */

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static int *socks; /* client sockets being served */
static size_t nsocks, capsocks;
static int served, failed;                   /* streams ended, and those with a non-zero exit code */
static struct holder_daemon_exit first_exit; /* the first daemon that failed (pod NULL: none yet) */

struct stream {
    struct holder *h;
    int sock;
    int fds[3];
    char *buf; /* the request; fields point into it */
    const char *f[RSH_HOLDER_NFIELDS];
};

static int track(int sock)
{
    pthread_mutex_lock(&mu);
    if (nsocks == capsocks) {
        size_t c = capsocks ? capsocks * 2 : 64;
        int *n = realloc(socks, c * sizeof *n);
        if (!n) {
            pthread_mutex_unlock(&mu);
            return -1;
        }
        socks = n;
        capsocks = c;
    }
    socks[nsocks++] = sock;
    pthread_mutex_unlock(&mu);
    return 0;
}

static void untrack(int sock, int code)
{
    pthread_mutex_lock(&mu);
    served++;
    failed += code != 0;
    for (size_t i = 0; i < nsocks; i++)
        if (socks[i] == sock) {
            socks[i] = socks[--nsocks];
            break;
        }
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&mu);
}

void holder_streams_counts(int *nserved, int *nfailed)
{
    pthread_mutex_lock(&mu);
    *nserved = served;
    *nfailed = failed;
    pthread_mutex_unlock(&mu);
}

/* Records pod's daemon as the first that failed, unless one is already, and wakes the main
 * thread (its poll then times the daemon-exit rule). */
static void daemon_exited(struct holder *h, const char *pod, int code)
{
    int first = 0;
    pthread_mutex_lock(&mu);
    if (!first_exit.pod && (first_exit.pod = strdup(pod))) {
        first_exit.code = code;
        first_exit.at_ms = kube_now_ms();
        first = 1;
    }
    pthread_mutex_unlock(&mu);
    uint64_t one = 1;
    if (first && h->wake_fd >= 0 && write(h->wake_fd, &one, sizeof one) != sizeof one)
        KLOG_WARN("cannot wake the main thread: %s", strerror(errno));
}

int holder_streams_daemon_exit(struct holder_daemon_exit *e)
{
    pthread_mutex_lock(&mu);
    *e = first_exit;
    e->pod = first_exit.pod ? strdup(first_exit.pod) : NULL;
    pthread_mutex_unlock(&mu);
    return e->pod != NULL;
}

int holder_streams_active(void)
{
    pthread_mutex_lock(&mu);
    int n = (int)nsocks;
    pthread_mutex_unlock(&mu);
    return n;
}

void holder_streams_cancel_all(void)
{
    pthread_mutex_lock(&mu);
    for (size_t i = 0; i < nsocks; i++)
        shutdown(socks[i], SHUT_RD); /* readable: EOF = cancel */
    pthread_mutex_unlock(&mu);
}

int holder_streams_wait(int ms)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += ms / 1000;
    until.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&mu);
    while (nsocks && pthread_cond_timedwait(&changed, &mu, &until) != ETIMEDOUT) {}
    int left = (int)nsocks;
    pthread_mutex_unlock(&mu);
    return left ? -1 : 0;
}

/* Receives the request and its 3 fds into st. 0 ok, -1 with *why. */
static int receive(struct stream *st, const char **why)
{
    struct timeval tv = { .tv_sec = REQ_TIMEOUT_S };
    setsockopt(st->sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    if (!(st->buf = malloc(RSH_HOLDER_REQ_MAX + 1))) {
        *why = "out of memory";
        return -1;
    }
    union {
        char buf[CMSG_SPACE(3 * sizeof(int))];
        struct cmsghdr align;
    } u;
    struct iovec iov = { .iov_base = st->buf, .iov_len = RSH_HOLDER_REQ_MAX };
    struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof u.buf };
    ssize_t n;
    do
        n = recvmsg(st->sock, &m, MSG_CMSG_CLOEXEC);
    while (n < 0 && errno == EINTR);
    struct cmsghdr *c = n > 0 ? CMSG_FIRSTHDR(&m) : NULL;
    if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS && c->cmsg_len == CMSG_LEN(3 * sizeof(int)))
        memcpy(st->fds, CMSG_DATA(c), sizeof st->fds);
    else if (c && c->cmsg_type == SCM_RIGHTS) { /* wrong count: close whatever came */
        int *got = (int *)CMSG_DATA(c);
        for (size_t i = 0; i < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++)
            close(got[i]);
    }
    if (n <= 0 || (m.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) || st->fds[2] < 0) {
        *why = n < 0 ? "no request (timed out)" : "a request without its 3 file descriptors or too large";
        return -1;
    }
    st->buf[n] = 0;
    char *p = st->buf, *end = st->buf + n;
    if (strcmp(p, RSH_HOLDER_MAGIC) != 0) {
        *why = "not an " RSH_HOLDER_MAGIC " request";
        return -1;
    }
    p += strlen(p) + 1;
    for (int i = 0; i < RSH_HOLDER_NFIELDS; i++) {
        if (p >= end) {
            *why = "a request with missing fields";
            return -1;
        }
        st->f[i] = p;
        p += strlen(p) + 1;
    }
    return 0;
}

/* A field that must be a number lo..hi. */
static int num_field(const struct stream *st, int i, int lo, int hi, int *out)
{
    long long v;
    if (kube_parse_int(st->f[i], lo, hi, &v) < 0)
        return -1;
    *out = (int)v;
    return 0;
}

/* Reads the cancel message (if any) after a cancelled stream: the signal, or SIGHUP when the
 * client went away. */
static int cancel_signal(int sock)
{
    char b[2];
    ssize_t n = recv(sock, b, 2, MSG_DONTWAIT);
    return n == 2 && b[0] == RSH_HOLDER_CANCEL && b[1] > 0 && b[1] < 65 ? b[1] : SIGHUP;
}

/* Runs the request's stream; the exit code. */
static int run(struct stream *st)
{
    int in = 0, proto = 0, ping = 0, attempts = 0, cto = 0, tagged = 0;
    if (num_field(st, RSH_HF_STDIN, 0, 1, &in) < 0 || num_field(st, RSH_HF_PROTO, 0, 5, &proto) < 0 ||
        num_field(st, RSH_HF_PING_MS, 0, 3600000, &ping) < 0 || num_field(st, RSH_HF_ATTEMPTS, 0, 1000, &attempts) < 0 ||
        num_field(st, RSH_HF_CONNECT_S, 0, 86400, &cto) < 0 || num_field(st, RSH_HF_TAG, 0, 1, &tagged) < 0 ||
        !*st->f[RSH_HF_POD]) {
        dprintf(st->fds[2], "mpi-rsh: the stream holder got a malformed request\n");
        return 255;
    }
    const char *pod = st->f[RSH_HF_POD];
    char *perr = NULL, *named = mpik8s_host_to_pod(pod, &perr); /* the pod mpi-rsh mapped its host to */
    int is_pod = named && strcmp(named, pod) == 0;
    if (!is_pod)
        dprintf(st->fds[2], "mpi-rsh: the stream holder got a malformed request: %s\n",
                perr ? perr : "expected a pod name, not a host's DNS name");
    free(named);
    free(perr);
    if (!is_pod)
        return 255;
    char tag[17];
    tagged = tagged && rsh_session_tag(tag) == 0;
    char *cmd = rsh_remote_command(st->f[RSH_HF_COMMAND], tagged ? tag : NULL);
    if (!cmd) {
        dprintf(st->fds[2], "mpi-rsh: %s: out of memory\n", pod);
        return 255;
    }
    const struct kube_config *cfg = st->h->cfg;
    struct kube_exec_opts x;
    struct kube_exec_result r;
    kube_exec_opts_default(&x);
    x.namespace = *st->f[RSH_HF_NAMESPACE] ? st->f[RSH_HF_NAMESPACE] : cfg->namespace ? cfg->namespace : "default";
    x.pod = pod;
    x.container = *st->f[RSH_HF_CONTAINER] ? st->f[RSH_HF_CONTAINER] : NULL;
    x.command = cmd;
    x.fd_in = in ? st->fds[0] : -1;
    x.fd_out = st->fds[1];
    x.fd_err = st->fds[2];
    x.proto = proto == 5 ? KUBE_EXEC_PROTO_V5 : proto == 4 ? KUBE_EXEC_PROTO_V4 : KUBE_EXEC_PROTO_AUTO;
    x.attempts = attempts;
    x.connect_timeout_ms = cto * 1000;
    x.ping_interval_ms = ping;
    x.cancel_fd = st->sock;
    x.user_agent = "mpi-rsh/0.1 (holder)";
    x.tls_session_dir = st->h->tls_dir;
    int outcome = kube_exec_run(cfg, &x, &r);
    if (outcome == KUBE_EXEC_STREAM_ERROR && r.cut && tagged && st->h->reattach_s > 0)
        outcome = rsh_reattach(cfg, &x, tag, st->h->reattach_s, st->fds[2], &r);
    int code = r.exit_code;
    if (outcome == KUBE_EXEC_CANCELLED) {
        int sig = cancel_signal(st->sock);
        if (tagged)
            rsh_remote_kill(cfg, &x, tag);
        code = 128 + sig;
    } else if (r.message && (outcome != KUBE_EXEC_EXITED || code == 255)) {
        dprintf(st->fds[2], "mpi-rsh: %s: %s\n", pod, r.message);
    }
    if (code == 0 && outcome != KUBE_EXEC_EXITED)
        code = 255; /* never 0 without a Success status */
    if (code != 0 && outcome != KUBE_EXEC_CANCELLED) {
        daemon_exited(st->h, pod, code);
        if (mpik8s_rsh_mark_exit(pod, code) < 0) /* mpi-agent's daemon-exit stop */
            KLOG_DEBUG("%s: %s", MPIK8S_RSH_ENV_MARK, strerror(errno));
    }
    kube_exec_result_free(&r);
    free(cmd);
    return code;
}

static void *serve(void *arg)
{
    struct stream *st = arg;
    const char *why = NULL;
    int code = 255;
    if (receive(st, &why) < 0) {
        KLOG_WARN("a client's request refused: %s", why);
        if (st->fds[2] >= 0)
            dprintf(st->fds[2], "mpi-rsh: the stream holder refused the request: %s\n", why);
    } else {
        code = run(st);
    }
    char reply[2] = { RSH_HOLDER_EXIT, (char)code };
    if (send(st->sock, reply, 2, MSG_NOSIGNAL) != 2)
        KLOG_DEBUG("client gone before its reply (exit %d)", code);
    for (int i = 0; i < 3; i++)
        if (st->fds[i] >= 0)
            close(st->fds[i]);
    untrack(st->sock, code);
    close(st->sock);
    free(st->buf);
    free(st);
    return NULL;
}

int holder_stream_start(struct holder *h, int sock)
{
    struct stream *st = calloc(1, sizeof *st);
    pthread_attr_t at;
    pthread_t t;
    if (!st || track(sock) < 0) {
        free(st);
        close(sock);
        return -1;
    }
    st->h = h;
    st->sock = sock;
    st->fds[0] = st->fds[1] = st->fds[2] = -1;
    int ok = pthread_attr_init(&at) == 0;
    if (ok) {
        pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
        pthread_attr_setstacksize(&at, STACK_SIZE);
        ok = pthread_create(&t, &at, serve, st) == 0;
        pthread_attr_destroy(&at);
    }
    if (!ok) {
        untrack(sock, 255);
        close(sock);
        free(st);
        return -1;
    }
    return 0;
}
