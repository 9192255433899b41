/* ssh_connect.c - one DNS + TCP connect try for the SSH transport: every address
 * getaddrinfo returns, each connect bounded by a timeout, keepalive options set so a
 * dead peer is noticed. The retry loop around it lives in ssh_session.c. */
#include "ssh_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* Keepalive and latency options; failures are harmless, so they are not fatal. */
static void tune_socket(int fd, int keepalive_s)
{
    int one = 1, cnt = 4, idle = keepalive_s;
    unsigned int user_timeout = (unsigned int)keepalive_s * 4u * 1000u;
    if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) < 0 ||
        setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one)) < 0 ||
        setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle)) < 0 ||
        setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &idle, sizeof(idle)) < 0 ||
        setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt)) < 0 ||
        setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &user_timeout, sizeof(user_timeout)) < 0)
        return;
}

/* Connects fd to ai within timeout_ms; 0 ok, else an errno value. */
static int connect_one(int fd, const struct addrinfo *ai, int timeout_ms)
{
    if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
        return 0;
    if (errno != EINPROGRESS)
        return errno;
    int64_t deadline = kube_now_ms() + timeout_ms;
    for (;;) {
        struct pollfd p = { .fd = fd, .events = POLLOUT };
        int64_t left = deadline - kube_now_ms();
        if (left <= 0)
            return ETIMEDOUT;
        int r = poll(&p, 1, (int)left);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return errno;
        if (r == 0)
            return ETIMEDOUT;
        int err = 0;
        socklen_t el = sizeof(err);
        if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) < 0)
            return errno;
        return err;
    }
}

static void addr_text(const struct addrinfo *ai, char *buf, size_t n)
{
    if (getnameinfo(ai->ai_addr, ai->ai_addrlen, buf, (socklen_t)n, NULL, 0, NI_NUMERICHOST))
        snprintf(buf, n, "?");
}

/* getaddrinfo results that mean "not (yet) in DNS" rather than "never". */
static int dns_retryable(int gai) { return gai == EAI_NONAME || gai == EAI_AGAIN || gai == EAI_NODATA || gai == EAI_FAIL; }

int Kube_sshi_tcp_connect(const char *host, int port, int timeout_ms, int keepalive_s, int *retry, char **errmsg)
{
    struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };
    struct addrinfo *res = NULL;
    char portstr[16], addr[INET6_ADDRSTRLEN + 1];
    int err = 0;
    snprintf(portstr, sizeof(portstr), "%d", port);
    *retry = 0;
    int gai = getaddrinfo(host, portstr, &hints, &res);
    if (gai != 0) {
        *retry = dns_retryable(gai);
        kube_set_err(errmsg, "DNS: cannot resolve host %s: %s", host,
                     gai == EAI_SYSTEM ? strerror(errno) : gai_strerror(gai));
        return KUBE_SSH_ERR_DNS;
    }
    addr[0] = '\0';
    for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
        int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
        addr_text(ai, addr, sizeof(addr));
        if (fd < 0) {
            err = errno;
            continue;
        }
        err = connect_one(fd, ai, timeout_ms);
        if (err == 0) {
            tune_socket(fd, keepalive_s);
            freeaddrinfo(res);
            return fd;
        }
        close(fd);
    }
    freeaddrinfo(res);
    *retry = 1;
    kube_set_err(errmsg, "connect: %s port %d (%s): %s", host, port, addr, err == ETIMEDOUT ? "timed out" : strerror(err));
    return KUBE_SSH_ERR_CONNECT;
}
