/* tls_conn.c - the exec WebSocket's connection to the API server (libcurl has no WebSocket
 * in Debian 12's 7.88): a TCP connection (tcp_conn.c), or when kube_config_proxy names an
 * http:// proxy (proxy.c) a CONNECT tunnel through it (proxy_tunnel.c), then for https:// an
 * OpenSSL handshake (context from tls_ctx.c; SNI and certificate name =
 * tls-server-name or the server's host, IP addresses matched as IPs), resuming a remembered
 * session when there is one (tls_session.c). mpi-rsh loads libssl but not libcurl and its
 * ~25 dependent libraries (start-up time and memory: docs/rsh.md). The socket stays
 * non-blocking; SIGPIPE never escapes a send. */
#include "tls_conn.h"

#include <arpa/inet.h>
#include <errno.h>
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
#include "kube/str.h"
#include "proxy_tunnel.h"
#include "url_int.h"

struct kube_conn {
    int fd;
    SSL_CTX *ctx;
    SSL *ssl;                  /* NULL for http:// */
    short events;              /* what the last would-block waits for */
    int tls_failed;            /* the last error was a TLS protocol error (an alert: retrying won't help) */
    int no_cert;               /* no client certificate was presented */
    struct kube_tls_lazy lazy; /* what the handshake reads on demand (tls_ctx.c) */
    char err[256];
};

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
    if (c->lazy.err) { /* the trust anchors or the client certificate could not be read */
        kube_set_err(errmsg, "%s", c->lazy.err);
        ERR_clear_error();
        return;
    }
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
    c->lazy.cfg = cfg;
    c->lazy.cred = cred;
    if (!(c->ctx = Kube_tls_ctx_new(&c->lazy, errmsg)))
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
        if (r == 1) {
            c->lazy.cfg = NULL; /* borrowed for the handshake only */
            c->lazy.cred = NULL;
            return 0;
        }
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

struct kube_conn *Kube_conn_open(const struct kube_config *cfg, const struct kube_credential *cred, const char *session_dir,
                                 int64_t deadline, char **errmsg, int *retryable)
{
    char *scheme, *host, *prefix, *proxy = kube_config_proxy(cfg);
    long port;
    *retryable = 0;
    if (Kube_url_split_server(cfg->server, &scheme, &host, &port, &prefix) < 0) {
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
        ok = (c->fd = Kube_proxy_tunnel(cfg, proxy, host, port, deadline, errmsg, retryable)) >= 0;
    else if (ok)
        ok = (c->fd = Kube_tcp_connect(cfg, "API server", cfg->server, host, port, deadline, errmsg, retryable)) >= 0;
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
    free(c->lazy.err);
    free(c);
}
