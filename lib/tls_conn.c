/* tls_conn.c - one client connection to the API server without libcurl: resolve, a
 * non-blocking TCP connect bounded by a deadline, then for https:// an mbedTLS handshake
 * (configuration from tls_ctx.c; SNI and certificate name = tls-server-name or the server's
 * host, IP addresses matched as IPs), resuming a remembered session when there is one
 * (tls_session.c). The exec WebSocket (exec_conn.c) runs over it, so mpi-rsh needs neither
 * libcurl nor OpenSSL (start-up time and RSS: see docs/rsh.md). The socket stays
 * non-blocking and every send is MSG_NOSIGNAL: no SIGPIPE. */
#include "tls_conn.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <mbedtls/net_sockets.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "kube/util.h"

struct kube_conn {
    int fd;
    int tls;             /* https:// */
    struct kube_tls cfg; /* trust, identity, RNG */
    mbedtls_ssl_context ssl;
    size_t pending;      /* length of a write mbedTLS holds after WANT_WRITE (0: none) */
    short events;        /* what the last would-block waits for */
    int tls_failed;  /* the last error was a TLS protocol error (an alert: retrying won't help) */
    char err[256];
};

int kube_conn_split_server(const char *server, char **scheme, char **host, long *port, char **prefix)
{
    *scheme = *host = *prefix = NULL;
    const char *p = server ? strstr(server, "://") : NULL;
    if (!p) return -1;
    *scheme = strndup(server, (size_t)(p - server));
    p += 3;
    const char *hend = *p == '[' ? strchr(p, ']') : p + strcspn(p, ":/?#");
    if (!hend) goto bad;
    if (*p == '[') hend++;
    *host = strndup(p, (size_t)(hend - p));
    *port = *scheme && !strcmp(*scheme, "http") ? 80 : 443;
    if (*hend == ':') {
        char *end;
        errno = 0;
        *port = strtol(hend + 1, &end, 10);
        if (end == hend + 1 || errno) goto bad;
        hend = end;
    }
    size_t pl = strlen(hend);
    while (pl > 0 && hend[pl - 1] == '/') pl--;
    *prefix = strndup(hend, pl);
    if (!*scheme || !*host || !**host || !*prefix || *port <= 0 || *port > 65535 || (pl && *hend != '/') ||
        (strcmp(*scheme, "https") && strcmp(*scheme, "http")))
        goto bad;
    return 0;
bad:
    free(*scheme);
    free(*host);
    free(*prefix);
    *scheme = *host = *prefix = NULL;
    return -1;
}

int kube_wait_fd(int fd, short events, int64_t deadline)
{
    for (;;) {
        int64_t left = deadline ? deadline - kube_now_ms() : 60000;
        if (left <= 0) return 0;
        struct pollfd p = {.fd = fd, .events = events};
        int r = poll(&p, 1, left > 60000 ? 60000 : (int)left);
        if (r > 0) return 1;
        if (r < 0 && errno != EINTR) return -1;
    }
}

/* Non-blocking connect to one address; the socket or -1 with errno. */
static int connect_one(const struct addrinfo *ai, int64_t deadline)
{
    int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    if (connect(fd, ai->ai_addr, ai->ai_addrlen) < 0 && errno != EINPROGRESS) goto fail;
    int r = kube_wait_fd(fd, POLLOUT, deadline), soerr = 0;
    socklen_t sl = sizeof soerr;
    if (r <= 0) {
        errno = r == 0 ? ETIMEDOUT : errno;
        goto fail;
    }
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0) goto fail;
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

/* Resolves host and connects to the first address that answers; -1 with *errmsg. */
static int tcp_connect(const struct kube_config *cfg, const char *host, long port, int64_t deadline, char **errmsg,
                       int *retryable)
{
    char name[256], ps[16];
    size_t hl = strlen(host);
    if (host[0] == '[') { host++; hl -= 2; } /* IPv6 literal */
    snprintf(name, sizeof name, "%.*s", (int)hl, host);
    snprintf(ps, sizeof ps, "%ld", port);
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV}, *res = NULL;
    int g = getaddrinfo(name, ps, &hints, &res);
    if (g) {
        kube_set_err(errmsg, "cannot resolve the API server host of %s (%s): %s", cfg->server, cfg->origin,
                     g == EAI_SYSTEM ? strerror(errno) : gai_strerror(g));
        *retryable = g == EAI_AGAIN || g == EAI_NONAME || g == EAI_FAIL;
        return -1;
    }
    int fd = -1, e = ECONNREFUSED;
    for (struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next)
        if ((fd = connect_one(ai, deadline)) < 0) e = errno;
    freeaddrinfo(res);
    if (fd < 0) {
        kube_set_err(errmsg, "cannot connect to the API server %s (%s): %s", cfg->server, cfg->origin,
                     e == ETIMEDOUT ? "connection timed out" : strerror(e));
        *retryable = 1;
    }
    return fd;
}

/* mbedTLS's I/O callbacks over the non-blocking socket; for http:// they are the I/O itself. */
static int bio_send(void *arg, const unsigned char *buf, size_t len)
{
    struct kube_conn *c = arg;
    ssize_t n = send(c->fd, buf, len, MSG_NOSIGNAL);
    if (n >= 0) return (int)n;
    if (errno == EAGAIN || errno == EINTR) return MBEDTLS_ERR_SSL_WANT_WRITE;
    snprintf(c->err, sizeof c->err, "send: %s", strerror(errno));
    return errno == EPIPE || errno == ECONNRESET ? MBEDTLS_ERR_NET_CONN_RESET : MBEDTLS_ERR_NET_SEND_FAILED;
}

static int bio_recv(void *arg, unsigned char *buf, size_t len)
{
    struct kube_conn *c = arg;
    ssize_t n = recv(c->fd, buf, len, 0);
    if (n >= 0) return (int)n;
    if (errno == EAGAIN || errno == EINTR) return MBEDTLS_ERR_SSL_WANT_READ;
    snprintf(c->err, sizeof c->err, "recv: %s", strerror(errno));
    return errno == ECONNRESET ? MBEDTLS_ERR_NET_CONN_RESET : MBEDTLS_ERR_NET_RECV_FAILED;
}

/* Names the server certificate's verification failure, or the handshake's error. */
static void handshake_error(struct kube_conn *c, const struct kube_config *cfg, const char *name, int r, char **errmsg)
{
    char e[256], ca[512];
    uint32_t v = mbedtls_ssl_get_verify_result(&c->ssl);
    if (r == MBEDTLS_ERR_X509_CERT_VERIFY_FAILED && v == MBEDTLS_X509_BADCERT_CN_MISMATCH)
        kube_set_err(errmsg, "TLS: the server certificate of %s is not trusted by %s (%s): hostname mismatch: "
                     "it is not issued for \"%s\"", cfg->server, kube_tls_ca_desc(cfg, ca, sizeof ca), cfg->origin, name);
    else if (r == MBEDTLS_ERR_X509_CERT_VERIFY_FAILED && v)
        kube_set_err(errmsg, "TLS: the server certificate of %s is not trusted by %s (%s): %s", cfg->server,
                     kube_tls_ca_desc(cfg, ca, sizeof ca), cfg->origin, kube_tls_verify_str(v, e, sizeof e));
    else if (r == MBEDTLS_ERR_SSL_FATAL_ALERT_MESSAGE && c->ssl.in_msg &&
             c->ssl.in_msg[1] == MBEDTLS_SSL_ALERT_MSG_PROTOCOL_VERSION)
        kube_set_err(errmsg, "TLS handshake with %s failed (%s): the server refuses TLS 1.2 (protocol_version "
                     "alert), the newest version mbedTLS 2.28 speaks: its --tls-min-version must allow "
                     "VersionTLS12", cfg->server, cfg->origin);
    else if (r == MBEDTLS_ERR_SSL_CONN_EOF && c->ssl.state == MBEDTLS_SSL_SERVER_HELLO)
        kube_set_err(errmsg, "TLS handshake with %s failed (%s): the server closed the connection instead of "
                     "answering the ClientHello; does it refuse TLS 1.2, the newest version mbedTLS 2.28 "
                     "speaks? (kube-apiserver --tls-min-version must allow VersionTLS12)", cfg->server, cfg->origin);
    else if (c->ssl.client_auth && !cfg->cert_file && !cfg->cert_data)
        kube_set_err(errmsg, "TLS handshake with %s failed (%s): the server requires a client certificate and "
                     "none is configured (%s)", cfg->server, cfg->origin, c->err[0] ? c->err : kube_tls_errstr(r, e, sizeof e));
    else
        kube_set_err(errmsg, "TLS handshake with %s failed (%s): %s", cfg->server, cfg->origin,
                     r == MBEDTLS_ERR_SSL_CONN_EOF ? "the server closed the connection"
                     : c->err[0]                  ? c->err
                                                  : kube_tls_errstr(r, e, sizeof e));
}

/* The name to verify: an IP address is matched against IP SANs (tls_ctx.c's callback) and
 * sent as no SNI; a DNS name is SNI and verified by mbedTLS. */
static int set_server_name(struct kube_conn *c, const char *name)
{
    int ip4 = inet_pton(AF_INET, name, c->cfg.ip) == 1;
    if (ip4 || inet_pton(AF_INET6, name, c->cfg.ip) == 1) {
        c->cfg.ip_len = ip4 ? 4 : 16;
        return 0;
    }
    return mbedtls_ssl_set_hostname(&c->ssl, name) == 0 ? 0 : -1;
}

/* The TLS session over c->fd, verified against name (a DNS name or an IP address). */
static int tls_start(struct kube_conn *c, const struct kube_config *cfg, const char *name, int64_t deadline,
                     char **errmsg, int *retryable)
{
    if (kube_tls_init(&c->cfg, cfg, errmsg) < 0) return -1;
    c->tls = 1;
    mbedtls_ssl_init(&c->ssl);
    if (mbedtls_ssl_setup(&c->ssl, &c->cfg.conf) != 0) {
        kube_set_err(errmsg, "TLS: cannot create a session for %s", cfg->server);
        return -1;
    }
    if (set_server_name(c, name) < 0) {
        kube_set_err(errmsg, "TLS: cannot verify the server name \"%s\" of %s (%s)", name, cfg->server, cfg->origin);
        return -1;
    }
    mbedtls_ssl_set_bio(&c->ssl, c, bio_send, bio_recv, NULL);
    struct kube_tls_resume res;
    int r;
    kube_tls_session_offer(&c->ssl, cfg, &res);
    while ((r = mbedtls_ssl_handshake(&c->ssl)) != 0) {
        short ev = r == MBEDTLS_ERR_SSL_WANT_READ ? POLLIN : r == MBEDTLS_ERR_SSL_WANT_WRITE ? POLLOUT : 0;
        int w = ev ? kube_wait_fd(c->fd, ev, deadline) : -1;
        if (w > 0) continue;
        kube_tls_session_finish(NULL, &res);
        if (w == 0) {
            kube_set_err(errmsg, "TLS handshake with %s timed out (%s)", cfg->server, cfg->origin);
            *retryable = 1;
        } else {
            handshake_error(c, cfg, name, r, errmsg);
        }
        return -1;
    }
    kube_tls_session_finish(&c->ssl, &res);
    return 0;
}

struct kube_conn *kube_conn_open(const struct kube_config *cfg, int64_t deadline, char **errmsg, int *retryable)
{
    char *scheme, *host, *prefix;
    long port;
    *retryable = 0;
    if (kube_conn_split_server(cfg->server, &scheme, &host, &port, &prefix) < 0) {
        kube_set_err(errmsg, "%s: server URL \"%s\" is not http(s)://host[:port][/path]", cfg->origin, cfg->server);
        return NULL;
    }
    struct kube_conn *c = calloc(1, sizeof(*c));
    int ok = c != NULL;
    if (!c) kube_set_err(errmsg, "out of memory");
    if (ok) ok = (c->fd = tcp_connect(cfg, host, port, deadline, errmsg, retryable)) >= 0;
    if (ok && !strcmp(scheme, "https")) {
        char name[256];
        const char *h = cfg->tls_server_name ? cfg->tls_server_name : host;
        size_t hl = strlen(h);
        if (h[0] == '[') { h++; hl -= 2; }
        snprintf(name, sizeof name, "%.*s", (int)hl, h);
        ok = tls_start(c, cfg, name, deadline, errmsg, retryable) == 0;
    }
    free(scheme);
    free(host);
    free(prefix);
    if (!ok && c) {
        kube_conn_close(c);
        c = NULL;
    }
    return c;
}

/* The outcome of a read/write that returned r <= 0 (mbedTLS's, or on a plain http:// socket
 * the I/O callbacks' own codes): -2 would block, 0 EOF, -1 broken. */
static ssize_t tls_result(struct kube_conn *c, int r, const char *what)
{
    if (r == MBEDTLS_ERR_SSL_WANT_READ || r == MBEDTLS_ERR_SSL_WANT_WRITE) {
        c->events = r == MBEDTLS_ERR_SSL_WANT_READ ? POLLIN : POLLOUT;
        return -2;
    }
    if (r == 0 || r == MBEDTLS_ERR_SSL_PEER_CLOSE_NOTIFY) return 0;
    if (r == MBEDTLS_ERR_SSL_CONN_EOF) {
        snprintf(c->err, sizeof c->err, "TLS %s: connection closed without close_notify", what);
        return 0;
    }
    c->tls_failed = r != MBEDTLS_ERR_NET_CONN_RESET && r != MBEDTLS_ERR_NET_SEND_FAILED && r != MBEDTLS_ERR_NET_RECV_FAILED;
    if (c->tls_failed || !c->err[0]) { /* else c->err holds the socket's error (bio_send/recv) */
        char e[200];
        snprintf(c->err, sizeof c->err, "TLS %s: %s", what, kube_tls_errstr(r, e, sizeof e));
    }
    return -1;
}

ssize_t kube_conn_send(struct kube_conn *c, const void *buf, size_t len)
{
    size_t n = len > 1 << 30 ? 1 << 30 : len;
    /* after WANT_WRITE mbedTLS holds the record it built and reports its length when the
     * retry flushes it: the caller's buffer may have grown since, so retry with that length */
    if (c->tls && c->pending && n > c->pending) n = c->pending;
    int r = c->tls ? mbedtls_ssl_write(&c->ssl, buf, n) : bio_send(c, buf, n);
    if (r > 0 || (r == 0 && !c->tls)) {
        c->pending = 0;
        return r;
    }
    ssize_t s = tls_result(c, r, "send");
    if (s == -2 && c->tls) c->pending = n;
    return s == -2 ? 0 : -1;
}

ssize_t kube_conn_recv(struct kube_conn *c, void *buf, size_t len)
{
    size_t n = len > 1 << 30 ? 1 << 30 : len;
    int r = c->tls ? mbedtls_ssl_read(&c->ssl, buf, n) : bio_recv(c, buf, n);
    return r > 0 ? r : tls_result(c, r, "recv");
}

int kube_conn_fd(const struct kube_conn *c) { return c->fd; }

short kube_conn_events(const struct kube_conn *c) { return c->events ? c->events : POLLIN; }

const char *kube_conn_error(const struct kube_conn *c) { return c->err; }

int kube_conn_tls_failed(const struct kube_conn *c) { return c->tls_failed; }

void kube_conn_close(struct kube_conn *c)
{
    if (!c) return;
    if (c->tls) {
        mbedtls_ssl_free(&c->ssl);
        kube_tls_free(&c->cfg);
    }
    if (c->fd >= 0) close(c->fd);
    free(c);
}
