/* tls_conn.c - the exec WebSocket's connection to the API server (libcurl has no WebSocket
 * in Debian 12's 7.88): resolve, a non-blocking TCP connect bounded by a deadline, through
 * an http:// proxy's CONNECT tunnel when kube_config_proxy names one (proxy.c), then for
 * https:// an OpenSSL handshake (context from tls_ctx.c; SNI and certificate name =
 * tls-server-name or the server's host, IP addresses matched as IPs), resuming a remembered
 * session when there is one (tls_session.c). mpi-rsh loads libssl but not libcurl and its
 * ~25 dependent libraries (start-up time and memory: docs/rsh.md). The socket stays
 * non-blocking; SIGPIPE never escapes a send. */
#include "tls_conn.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "kube/config.h"
#include "kube/util.h"

struct kube_conn {
    int fd;
    SSL_CTX *ctx;
    SSL *ssl;       /* NULL for http:// */
    short events;   /* what the last would-block waits for */
    int tls_failed; /* the last error was a TLS protocol error (an alert: retrying won't help) */
    int no_cert;    /* no client certificate was presented */
    char err[256];
};

int Kube_conn_split_server(const char *server, char **scheme, char **host, long *port, char **prefix)
{
    *scheme = *host = *prefix = NULL;
    const char *p = server ? strstr(server, "://") : NULL;
    if (!p)
        return -1;
    *scheme = strndup(server, (size_t)(p - server));
    p += 3;
    const char *hend = *p == '[' ? strchr(p, ']') : p + strcspn(p, ":/?#");
    if (!hend)
        goto bad;
    if (*p == '[')
        hend++;
    *host = strndup(p, (size_t)(hend - p));
    *port = *scheme && !strcmp(*scheme, "http") ? 80 : 443;
    if (*hend == ':') {
        char *end;
        errno = 0;
        *port = strtol(hend + 1, &end, 10);
        if (end == hend + 1 || errno)
            goto bad;
        hend = end;
    }
    size_t pl = strlen(hend);
    while (pl > 0 && hend[pl - 1] == '/')
        pl--;
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

/* Resolves host and connects to the first address that answers; -1 with *errmsg. */
static int tcp_connect(const struct kube_config *cfg, const char *kind, const char *url, const char *host, long port,
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

/* Runs fn under a blocked SIGPIPE and swallows one it raised: a library must not kill its
 * caller for writing to a peer that went away, nor change the process's signal dispositions. */
static int no_sigpipe(SSL *ssl, int (*fn)(SSL *, const void *, int), const void *buf, int len)
{
    sigset_t pipe, old, pending;
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    sigpending(&pending);
    int was_pending = sigismember(&pending, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe, &old);
    int r = fn(ssl, buf, len);
    int e = errno;
    sigpending(&pending);
    if (!was_pending && sigismember(&pending, SIGPIPE)) {
        struct timespec zero = { 0, 0 };
        while (sigtimedwait(&pipe, NULL, &zero) < 0 && errno == EINTR) {}
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    errno = e;
    return r;
}

static int do_connect(SSL *ssl, const void *buf, int len)
{
    (void)buf;
    (void)len;
    return SSL_connect(ssl);
}

/* Names the server certificate's verification failure, or the handshake's error. */
static void handshake_error(struct kube_conn *c, const struct kube_config *cfg, const char *name, char **errmsg)
{
    char e[256], ca[512];
    long v = SSL_get_verify_result(c->ssl);
    int name_err = v == X509_V_ERR_IP_ADDRESS_MISMATCH || v == X509_V_ERR_HOSTNAME_MISMATCH;
    if (v != X509_V_OK)
        kube_set_err(errmsg, "TLS: the server certificate of %s is not trusted by %s (%s): %s%s%s%s", cfg->server,
                     Kube_tls_ca_desc(cfg, ca, sizeof ca), cfg->origin, X509_verify_cert_error_string(v),
                     name_err ? " (expected \"" : "", name_err ? name : "", name_err ? "\")" : "");
    else if (ERR_GET_REASON(ERR_peek_last_error()) == SSL_R_SSLV3_ALERT_HANDSHAKE_FAILURE && !cfg->cert_file &&
             !cfg->cert_data)
        kube_set_err(errmsg,
                     "TLS handshake with %s failed (%s): the server refused it; it may require a client "
                     "certificate and none is configured (%s)",
                     cfg->server, cfg->origin, Kube_tls_errstr(e, sizeof e, "handshake failure"));
    else
        kube_set_err(errmsg, "TLS handshake with %s failed (%s): %s", cfg->server, cfg->origin,
                     Kube_tls_errstr(e, sizeof e, "the server closed the connection"));
}

/* The TLS session over c->fd, verified against name (a DNS name or an IP address). */
static int tls_start(struct kube_conn *c, const struct kube_config *cfg, const struct kube_credential *cred,
                     const char *name, const char *session_dir, int64_t deadline, char **errmsg, int *retryable)
{
    if (!(c->ctx = Kube_tls_ctx_new(cfg, cred, errmsg)))
        return -1;
    if (!(c->ssl = SSL_new(c->ctx)) || SSL_set_fd(c->ssl, c->fd) != 1)
        return kube_set_err(errmsg, "TLS: cannot create a session for %s", cfg->server);
    unsigned char ip[16];
    int is_ip = inet_pton(AF_INET, name, ip) == 1 || inet_pton(AF_INET6, name, ip) == 1;
    X509_VERIFY_PARAM *vp = SSL_get0_param(c->ssl);
    int ok = is_ip ? X509_VERIFY_PARAM_set1_ip_asc(vp, name) == 1
                   : SSL_set_tlsext_host_name(c->ssl, name) == 1 && SSL_set1_host(c->ssl, name) == 1;
    if (!ok)
        return kube_set_err(errmsg, "TLS: cannot verify the server name \"%s\" of %s (%s)", name, cfg->server, cfg->origin);
    Kube_tls_session_offer(c->ssl, cfg, cred, session_dir);
    for (;;) {
        int r = no_sigpipe(c->ssl, do_connect, NULL, 0);
        if (r == 1)
            return 0;
        int err = SSL_get_error(c->ssl, r);
        short ev = err == SSL_ERROR_WANT_READ ? POLLIN : err == SSL_ERROR_WANT_WRITE ? POLLOUT : 0;
        int w = ev ? Kube_wait_fd(c->fd, ev, deadline) : -1;
        if (w > 0)
            continue;
        Kube_tls_session_release(c->ssl);
        if (w == 0) {
            kube_set_err(errmsg, "TLS handshake with %s timed out (%s)", cfg->server, cfg->origin);
            *retryable = 1;
        } else {
            handshake_error(c, cfg, name, errmsg);
        }
        return -1;
    }
}

/* Reads the proxy's reply to CONNECT up to the blank line: 0 on a 2xx, -1 with *errmsg. */
static int proxy_reply(int fd, const struct kube_config *cfg, const char *proxy, int64_t deadline, char **errmsg,
                       int *retryable)
{
    char buf[4096];
    size_t len = 0;
    while (len < sizeof buf - 1) { /* byte by byte: nothing after the reply head may be consumed */
        ssize_t n = recv(fd, buf + len, 1, 0);
        if (n == 1) {
            buf[++len] = '\0';
            if (len >= 4 && !memcmp(buf + len - 4, "\r\n\r\n", 4))
                break;
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
            int w = Kube_wait_fd(fd, POLLIN, deadline);
            if (w > 0)
                continue;
            kube_set_err(errmsg, "proxy %s: no reply to CONNECT for %s (%s)%s", proxy, cfg->server, cfg->origin,
                         w == 0 ? ": timed out" : "");
            *retryable = 1;
            return -1;
        }
        kube_set_err(errmsg, "proxy %s closed the connection before answering CONNECT for %s (%s)", proxy, cfg->server,
                     cfg->origin);
        *retryable = 1;
        return -1;
    }
    int code = 0;
    char *eol = strstr(buf, "\r\n");
    if (eol)
        *eol = '\0';
    if (sscanf(buf, "HTTP/1.%*d %d", &code) != 1 || code < 200 || code > 299) {
        kube_set_err(errmsg, "proxy %s refused CONNECT to %s (%s): %.200s", proxy, cfg->server, cfg->origin,
                     len ? buf : "no reply");
        *retryable = code == 502 || code == 503 || code == 504;
        return -1;
    }
    return 0;
}

/* Splits "scheme://user:pass@host..." into the URL without its credentials (for connecting and
 * for messages) and "Proxy-Authorization: Basic ...\r\n" (percent-decoded, as Go decodes the
 * URL's userinfo), or "" without credentials. 0, or -1 on allocation failure. */
static int proxy_userinfo(const char *proxy, char **bare, char **auth)
{
    const char *p = strstr(proxy, "://"), *at = NULL;
    *bare = *auth = NULL;
    if (p) {
        p += 3;
        const char *end = p + strcspn(p, "/?#");
        for (const char *q = p; q < end; q++)
            if (*q == '@')
                at = q;
    }
    if (!at) {
        *bare = strdup(proxy);
        *auth = strdup("");
        return *bare && *auth ? 0 : -1;
    }
    size_t n = (size_t)(at - p), o = 0;
    char *dec = malloc(n + 1);
    for (size_t i = 0; dec && i < n; i++) {
        unsigned int v;
        if (p[i] == '%' && i + 2 < n + 1 && sscanf(p + i + 1, "%2x", &v) == 1) {
            dec[o++] = (char)v;
            i += 2;
        } else {
            dec[o++] = p[i];
        }
    }
    char *b64 = dec ? kube_base64_encode(dec, o) : NULL;
    *auth = b64 ? kube_strdup_printf("Proxy-Authorization: Basic %s\r\n", b64) : NULL;
    *bare = kube_strdup_printf("%.*s%s", (int)(p - proxy), proxy, at + 1);
    if (dec)
        explicit_bzero(dec, n + 1);
    if (b64)
        explicit_bzero(b64, strlen(b64));
    free(dec);
    free(b64);
    return *bare && *auth ? 0 : -1;
}

/* Connects to the proxy and opens a CONNECT tunnel to host:port; the socket or -1. */
static int proxy_connect(const struct kube_config *cfg, const char *proxy_url, const char *host, long port, int64_t deadline,
                         char **errmsg, int *retryable)
{
    char *pscheme = NULL, *phost = NULL, *pprefix = NULL, *proxy = NULL, *auth = NULL;
    long pport;
    if (proxy_userinfo(proxy_url, &proxy, &auth) < 0) {
        free(proxy);
        free(auth);
        return kube_set_err(errmsg, "out of memory");
    }
    if (Kube_conn_split_server(proxy, &pscheme, &phost, &pport, &pprefix) < 0 || strcmp(pscheme, "http")) {
        kube_set_err(errmsg, "proxy %s for %s (%s): the exec connection supports http:// proxies only", proxy, cfg->server,
                     cfg->origin);
        free(pscheme);
        free(phost);
        free(pprefix);
        free(proxy);
        explicit_bzero(auth, strlen(auth));
        free(auth);
        return -1;
    }
    int fd = tcp_connect(cfg, "proxy", proxy, phost, pport, deadline, errmsg, retryable);
    char *req = fd >= 0
                    ? kube_strdup_printf("CONNECT %s:%ld HTTP/1.1\r\nHost: %s:%ld\r\n%s\r\n", host, port, host, port, auth)
                    : NULL;
    size_t off = 0, len = req ? strlen(req) : 0;
    while (req && off < len) {
        ssize_t n = send(fd, req + off, len - off, MSG_NOSIGNAL);
        if (n > 0) {
            off += (size_t)n;
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EINTR) && Kube_wait_fd(fd, POLLOUT, deadline) > 0)
            continue;
        break;
    }
    int ok = req && off == len;
    if (fd >= 0 && !ok)
        kube_set_err(errmsg, "proxy %s: cannot send CONNECT for %s (%s)", proxy, cfg->server, cfg->origin);
    if (ok)
        ok = proxy_reply(fd, cfg, proxy, deadline, errmsg, retryable) == 0;
    if (req)
        explicit_bzero(req, strlen(req));
    free(req);
    explicit_bzero(auth, strlen(auth));
    free(auth);
    free(proxy);
    free(pscheme);
    free(phost);
    free(pprefix);
    if (!ok && fd >= 0) {
        close(fd);
        fd = -1;
    }
    return fd;
}

struct kube_conn *Kube_conn_open(const struct kube_config *cfg, const struct kube_credential *cred, const char *session_dir,
                                 int64_t deadline, char **errmsg, int *retryable)
{
    char *scheme, *host, *prefix, *proxy = kube_config_proxy(cfg);
    long port;
    *retryable = 0;
    if (Kube_conn_split_server(cfg->server, &scheme, &host, &port, &prefix) < 0) {
        kube_set_err(errmsg, "%s: server URL \"%s\" is not http(s)://host[:port][/path]", cfg->origin, cfg->server);
        free(proxy);
        return NULL;
    }
    struct kube_conn *c = calloc(1, sizeof(*c));
    int ok = c != NULL;
    if (!c)
        kube_set_err(errmsg, "out of memory");
    if (c)
        c->fd = -1;
    if (ok && proxy)
        ok = (c->fd = proxy_connect(cfg, proxy, host, port, deadline, errmsg, retryable)) >= 0;
    else if (ok)
        ok = (c->fd = tcp_connect(cfg, "API server", cfg->server, host, port, deadline, errmsg, retryable)) >= 0;
    if (ok && !strcmp(scheme, "https")) {
        char name[256];
        const char *h = cfg->tls_server_name ? cfg->tls_server_name : host;
        size_t hl = strlen(h);
        if (h[0] == '[') {
            h++;
            hl -= 2;
        }
        snprintf(name, sizeof name, "%.*s", (int)hl, h);
        c->no_cert = !cfg->cert_file && !cfg->cert_data && !(cred && cred->cert);
        ok = tls_start(c, cfg, cred, name, session_dir, deadline, errmsg, retryable) == 0;
    }
    free(proxy);
    free(scheme);
    free(host);
    free(prefix);
    if (!ok && c) {
        Kube_conn_close(c);
        c = NULL;
    }
    return c;
}

/* The outcome of an SSL_read/SSL_write that returned r <= 0: -2 would block, 0 EOF, -1 broken. */
static ssize_t ssl_result(struct kube_conn *c, int r, const char *what)
{
    int err = SSL_get_error(c->ssl, r);
    if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) {
        c->events = err == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT;
        return -2;
    }
    if (err == SSL_ERROR_ZERO_RETURN)
        return 0;
    c->tls_failed = err == SSL_ERROR_SSL;
    char e[200];
    int reason = ERR_GET_REASON(ERR_peek_last_error());
    if (reason == SSL_R_TLSV13_ALERT_CERTIFICATE_REQUIRED) {
        ERR_clear_error();
        snprintf(c->err, sizeof c->err,
                 "TLS %s: the server requires a client certificate (alert: certificate "
                 "required)%s",
                 what, c->no_cert ? "; none is configured" : "");
        return -1;
    }
    if (c->no_cert && (reason == SSL_R_UNEXPECTED_EOF_WHILE_READING || (err == SSL_ERROR_SYSCALL && !errno))) {
        /* TLS 1.3: a server that wants a client certificate closes after the handshake */
        ERR_clear_error();
        snprintf(c->err, sizeof c->err,
                 "TLS %s: the server closed the connection right after the handshake; "
                 "it may require a client certificate, and none is configured",
                 what);
        c->tls_failed = 1;
        return -1;
    }
    snprintf(c->err, sizeof c->err, "TLS %s: %s", what,
             err == SSL_ERROR_SYSCALL && errno
                 ? strerror(errno)
                 : Kube_tls_errstr(e, sizeof e,
                                   err == SSL_ERROR_SYSCALL ? "connection closed without close_notify" : "protocol error"));
    return err == SSL_ERROR_SYSCALL && !errno && !ERR_peek_error() ? 0 : -1;
}

static int ssl_write(SSL *ssl, const void *buf, int len) { return SSL_write(ssl, buf, len); }

ssize_t Kube_conn_send(struct kube_conn *c, const void *buf, size_t len)
{
    int n = len > 1 << 30 ? 1 << 30 : (int)len;
    if (!c->ssl) {
        ssize_t w = send(c->fd, buf, (size_t)n, MSG_NOSIGNAL);
        if (w >= 0)
            return w;
        c->events = POLLOUT;
        if (errno == EAGAIN || errno == EINTR)
            return 0;
        snprintf(c->err, sizeof c->err, "send: %s", strerror(errno));
        return -1;
    }
    ERR_clear_error();
    errno = 0;
    int r = no_sigpipe(c->ssl, ssl_write, buf, n);
    if (r > 0)
        return r;
    ssize_t s = ssl_result(c, r, "send");
    return s == -2 ? 0 : -1;
}

ssize_t Kube_conn_recv(struct kube_conn *c, void *buf, size_t len)
{
    int n = len > 1 << 30 ? 1 << 30 : (int)len;
    if (!c->ssl) {
        ssize_t r = recv(c->fd, buf, (size_t)n, 0);
        if (r >= 0)
            return r;
        c->events = POLLIN;
        if (errno == EAGAIN || errno == EINTR)
            return -2;
        snprintf(c->err, sizeof c->err, "recv: %s", strerror(errno));
        return -1;
    }
    ERR_clear_error();
    errno = 0;
    int r = SSL_read(c->ssl, buf, n);
    if (r > 0)
        c->no_cert = 0; /* the server accepted us: a later EOF is an ordinary close */
    return r > 0 ? r : ssl_result(c, r, "recv");
}

int Kube_conn_fd(const struct kube_conn *c) { return c->fd; }

short Kube_conn_events(const struct kube_conn *c) { return c->events ? c->events : POLLIN; }

const char *Kube_conn_error(const struct kube_conn *c) { return c->err; }

int Kube_conn_tls_failed(const struct kube_conn *c) { return c->tls_failed; }

void Kube_conn_close(struct kube_conn *c)
{
    if (!c)
        return;
    if (c->ssl)
        Kube_tls_session_release(c->ssl);
    SSL_free(c->ssl);
    SSL_CTX_free(c->ctx);
    if (c->fd >= 0)
        close(c->fd);
    free(c);
}
