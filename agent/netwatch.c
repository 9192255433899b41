/* netwatch.c - the pod-network watch's thread: each period, one non-blocking TCP connect
 * per worker (all in flight together, polled up to the probe's wait), the outcomes fed to
 * the bookkeeping of agent/netpeer.c; the first worker over the bound is reported. */
#include "netwatch.h"
#include "podstate.h"
#include "netpeer.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "kube/json.h"
#include "kube/log.h"
#include "kube/util.h"

#define BATCH 256 /* sockets in flight at once: stays far below the fd limit */
#define STOP_POLL_MS 100

struct agent_netwatch {
    struct agent_session *s;
    int64_t timeout_ms;
    agent_net_report_fn fn;
    void *ctx;
    volatile int stop;
    pthread_t th;
    struct agent_net_peer *peers;
};

/* One probe in flight. */
struct probe {
    int fd;  /* -1: done (or never started) */
    int err; /* errno of the outcome */
    enum agent_net_outcome o;
};

/* Starts a non-blocking connect to ip:port; finished probes get o set, fd -1. */
static void probe_start(struct probe *p, const char *ip)
{
    struct addrinfo hints = { .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV, .ai_socktype = SOCK_STREAM }, *ai = NULL;
    char port[8];
    snprintf(port, sizeof port, "%d", AGENT_NET_PROBE_PORT);
    p->fd = -1;
    p->o = AGENT_NET_NOT_PROBED;
    p->err = 0;
    if (!ip || !*ip || getaddrinfo(ip, port, &hints, &ai) != 0 || !ai) {
        p->err = EINVAL;
        return;
    }
    int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        p->err = errno;
    } else if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) {
        p->o = AGENT_NET_ANSWERED;
        close(fd);
    } else if (errno == EINPROGRESS) {
        p->fd = fd;
    } else {
        p->err = errno;
        p->o = agent_net_classify(errno);
        close(fd);
    }
    freeaddrinfo(ai);
}

/* Waits for the probes in v[0..n) until deadline (monotonic ms); the unfinished ones are silent
 * (ETIMEDOUT), or not probed when *stop ended the wait (checked every STOP_POLL_MS, so the end
 * of mpirun is not delayed by a probe in flight). */
static void probes_wait(struct probe *v, size_t n, int64_t deadline, const volatile int *stop)
{
    struct pollfd pf[BATCH];
    for (;;) {
        size_t m = 0;
        for (size_t i = 0; i < n; i++)
            if (v[i].fd >= 0)
                pf[m++] = (struct pollfd){ v[i].fd, POLLOUT, 0 };
        int64_t left = deadline - kube_now_ms();
        if (m == 0 || left <= 0 || *stop)
            break;
        int r = poll(pf, m, left < STOP_POLL_MS ? (int)left : STOP_POLL_MS);
        if (r < 0 && errno != EINTR)
            break;
        for (size_t k = 0; k < m && r > 0; k++) {
            if (!pf[k].revents)
                continue;
            for (size_t i = 0; i < n; i++) {
                if (v[i].fd != pf[k].fd)
                    continue;
                int e = 0;
                socklen_t len = sizeof e;
                if (getsockopt(v[i].fd, SOL_SOCKET, SO_ERROR, &e, &len) != 0)
                    e = errno;
                v[i].err = e;
                v[i].o = agent_net_classify(e);
                close(v[i].fd);
                v[i].fd = -1;
            }
        }
    }
    for (size_t i = 0; i < n; i++)
        if (v[i].fd >= 0) {
            close(v[i].fd);
            v[i].fd = -1;
            v[i].err = *stop ? EINTR : ETIMEDOUT;
            v[i].o = *stop ? AGENT_NET_NOT_PROBED : AGENT_NET_SILENT;
        }
}

/* The worker's pod IP and node from the informer (new strings or NULL). */
static void pod_addr(struct agent_session *s, size_t i, char **ip, char **node)
{
    json_t *pod = kube_informer_get(s->inf, s->ns, s->hosts.v[i].pod);
    const char *a = pod ? agent_pod_ip(pod, s->o->ip_family) : NULL;
    const char *nd = pod ? kube_json_at_str(pod, "spec", "nodeName") : NULL;
    *ip = a && *a ? strdup(a) : NULL;
    *node = nd && *nd ? strdup(nd) : NULL;
    json_decref(pod);
}

/* Probes workers [from, from + n) once; records the outcomes. */
static void probe_batch(struct agent_netwatch *nw, size_t from, size_t n)
{
    struct probe v[BATCH];
    for (size_t k = 0; k < n; k++) {
        char *ip, *node;
        pod_addr(nw->s, from + k, &ip, &node);
        probe_start(&v[k], ip);
        free(ip);
        free(node);
    }
    probes_wait(v, n, kube_now_ms() + agent_net_attempt_ms(nw->timeout_ms), &nw->stop);
    int64_t now = kube_now_ms();
    for (size_t k = 0; k < n; k++) {
        struct agent_net_peer *p = &nw->peers[from + k];
        if (v[k].o == AGENT_NET_SILENT && p->silent == 0)
            KLOG_WARN("worker %s: no answer over the pod network (%s); bound %lld s", nw->s->hosts.v[from + k].pod,
                      strerror(v[k].err), (long long)(nw->timeout_ms / 1000));
        else if (v[k].o == AGENT_NET_ANSWERED && p->silent > 0)
            KLOG_INFO("worker %s: answers over the pod network again after %.1f s", nw->s->hosts.v[from + k].pod,
                      agent_net_silence_ms(p, now) / 1000.0);
        else if (v[k].o == AGENT_NET_NOT_PROBED)
            KLOG_DEBUG("worker %s: not probed: %s", nw->s->hosts.v[from + k].pod, strerror(v[k].err));
        agent_net_peer_record(p, v[k].o, v[k].err, now);
    }
}

/* The report for worker i, silent for ms. */
static char *report(struct agent_netwatch *nw, size_t i, int64_t ms)
{
    char *ip, *node;
    pod_addr(nw->s, i, &ip, &node);
    int e = nw->peers[i].last_err;
    char *msg =
        kube_strdup_printf("worker %s (%s, node %s): no answer over the pod network for %lld s (TCP probes "
                           "to port %d: %s)",
                           nw->s->hosts.v[i].pod, ip ? ip : "no IP", node ? node : "-", (long long)((ms + 500) / 1000),
                           AGENT_NET_PROBE_PORT, e == ETIMEDOUT ? "timed out" : strerror(e));
    free(ip);
    free(node);
    return msg;
}

/* Sleeps until t (monotonic ms) unless stopped; returns !stop. */
static int sleep_until(struct agent_netwatch *nw, int64_t t)
{
    for (int64_t now = kube_now_ms(); !nw->stop && now < t; now = kube_now_ms())
        kube_sleep_ms(t - now < STOP_POLL_MS ? t - now : STOP_POLL_MS);
    return !nw->stop;
}

static void *netwatch_main(void *arg)
{
    struct agent_netwatch *nw = arg;
    size_t n = nw->s->hosts.n;
    int64_t period = agent_net_period_ms(nw->timeout_ms);
    int64_t next = kube_now_ms();
    while (sleep_until(nw, next)) {
        next += period;
        for (size_t from = 0; from < n && !nw->stop; from += BATCH)
            probe_batch(nw, from, n - from < BATCH ? n - from : BATCH);
        int64_t now = kube_now_ms();
        long bad = agent_net_overdue(nw->peers, n, now, nw->timeout_ms);
        if (bad >= 0 && !nw->stop) {
            char *msg = report(nw, (size_t)bad, agent_net_silence_ms(&nw->peers[bad], now));
            if (msg)
                nw->fn(nw->ctx, msg, (size_t)bad);
            return NULL;
        }
        if (next < now) /* a round longer than the period: no burst to catch up */
            next = now;
    }
    return NULL;
}

int agent_netwatch_start(struct agent_session *s, double timeout_s, agent_net_report_fn fn, void *ctx,
                         struct agent_netwatch **out)
{
    *out = NULL;
    if (!s->inf || s->hosts.n == 0 || timeout_s <= 0)
        return 0;
    struct agent_netwatch *nw = calloc(1, sizeof *nw);
    if (!nw)
        return -1;
    nw->peers = calloc(s->hosts.n, sizeof *nw->peers);
    if (!nw->peers) {
        free(nw);
        return -1;
    }
    nw->s = s;
    nw->timeout_ms = (int64_t)(timeout_s * 1000);
    nw->fn = fn;
    nw->ctx = ctx;
    int64_t now = kube_now_ms();
    for (size_t i = 0; i < s->hosts.n; i++)
        agent_net_peer_start(&nw->peers[i], now);
    int e = pthread_create(&nw->th, NULL, netwatch_main, nw);
    if (e != 0) {
        free(nw->peers);
        free(nw);
        errno = e;
        return -1;
    }
    KLOG_INFO("watching %zu worker(s) over the pod network: TCP port %d every %.0f s, bound %.0f s", s->hosts.n,
              AGENT_NET_PROBE_PORT, agent_net_period_ms(nw->timeout_ms) / 1000.0, timeout_s);
    *out = nw;
    return 0;
}

void agent_netwatch_stop(struct agent_netwatch *nw)
{
    if (!nw)
        return;
    nw->stop = 1;
    pthread_join(nw->th, NULL);
    free(nw->peers);
    free(nw);
}
