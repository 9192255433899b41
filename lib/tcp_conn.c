/* tcp_conn.c - the exec connection's TCP: resolve the host, a non-blocking connect to the first
 * address that answers, bounded by a deadline, with TCP_NODELAY and keepalive (idle 30 s, probes
 * every 10 s); and the deadline-bounded poll() the connection's users wait in. */
#include "tcp_conn.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "kube/clock.h"
#include "kube/str.h"

int Kube_wait_fd(int fd, short events, int64_t deadline)
{
    for (;;) {
        int64_t left = deadline ? deadline - kube_now_ms() : 60000;
        if (left <= 0)
            return 0;
        struct pollfd p = { .fd = fd, .events = events };
        int r = poll(&p, 1, left > 60000 ? 60000 : (int)left);
        if (r > 0)
            return 1;
        if (r < 0 && errno != EINTR)
            return -1;
    }
}

/* Non-blocking connect to one address; the socket or -1 with errno. */
static int connect_one(const struct addrinfo *ai, int64_t deadline)
{
    int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    if (connect(fd, ai->ai_addr, ai->ai_addrlen) < 0 && errno != EINPROGRESS)
        goto fail;
    int r = Kube_wait_fd(fd, POLLOUT, deadline), soerr = 0;
    socklen_t sl = sizeof soerr;
    if (r <= 0) {
        errno = r == 0 ? ETIMEDOUT : errno;
        goto fail;
    }
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0)
        goto fail;
    if (soerr) {
        errno = soerr;
        goto fail;
    }
    int one = 1, idle = 30, intvl = 10;
    if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) < 0 ||
        setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one) < 0 ||
        setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle) < 0 ||
        setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof intvl) < 0)
        goto fail;
    return fd;
fail:;
    int e = errno;
    close(fd);
    errno = e;
    return -1;
}

int Kube_tcp_connect(const struct kube_config *cfg, const char *kind, const char *url, const char *host, long port,
                     int64_t deadline, char **errmsg, int *retryable)
{
    char name[256], ps[16];
    size_t hl = strlen(host);
    if (host[0] == '[') {
        host++;
        hl -= 2;
    } /* IPv6 literal */
    snprintf(name, sizeof name, "%.*s", (int)hl, host);
    snprintf(ps, sizeof ps, "%ld", port);
    struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV }, *res = NULL;
    int g = getaddrinfo(name, ps, &hints, &res);
    if (g) {
        kube_set_err(errmsg, "cannot resolve the %s host of %s (%s): %s", kind, url, cfg->origin,
                     g == EAI_SYSTEM ? strerror(errno) : gai_strerror(g));
        *retryable = g == EAI_AGAIN || g == EAI_NONAME || g == EAI_FAIL;
        return -1;
    }
    int fd = -1, e = ECONNREFUSED;
    for (struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next)
        if ((fd = connect_one(ai, deadline)) < 0)
            e = errno;
    freeaddrinfo(res);
    if (fd < 0) {
        kube_set_err(errmsg, "cannot connect to the %s %s (%s): %s", kind, url, cfg->origin,
                     e == ETIMEDOUT ? "connection timed out" : strerror(e));
        *retryable = 1;
    }
    return fd;
}
