/* tls_conn.h - private interface of tls_conn.c: one non-blocking client connection to the
 * API server for the exec WebSocket (plain TCP for http://, OpenSSL for https://; the TCP
 * connect is tcp_conn.c's, the http:// CONNECT proxy's tunnel proxy_tunnel.c's), configured
 * from a kube_config; tls_ctx.c builds the OpenSSL context, tls_session.c remembers sessions
 * to resume. */
#ifndef KUBE_TLS_CONN_H
#define KUBE_TLS_CONN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <openssl/ssl.h>

#include "kube/config.h"
#include "kube/exec.h"
#include "tcp_conn.h"

struct kube_conn;

/* Connects to cfg->server (through its proxy, if any) and completes the TLS handshake before
 * deadline (monotonic ms), presenting cred's client certificate when it has one (an exec
 * plugin's). NULL on failure with a one-line *errmsg naming the server, the config and the
 * cause; *retryable is set for refused / unresolvable / timed-out connections. session_dir:
 * where TLS sessions are kept across processes (NULL/"" = this process's memory only). */
struct kube_conn *Kube_conn_open(const struct kube_config *cfg, const struct kube_credential *cred, const char *session_dir,
                                 int64_t deadline, char **errmsg, int *retryable);
/* Sends up to len bytes: >0 sent, 0 would block (poll Kube_conn_events), -1 broken. */
ssize_t Kube_conn_send(struct kube_conn *c, const void *buf, size_t len);
/* Receives up to len bytes: >0 read, 0 orderly EOF, -2 would block, -1 broken. */
ssize_t Kube_conn_recv(struct kube_conn *c, void *buf, size_t len);
/* The socket, for poll(). */
int Kube_conn_fd(const struct kube_conn *c);
/* POLLIN/POLLOUT the last would-block result waits for (TLS may read to write and back). */
short Kube_conn_events(const struct kube_conn *c);
/* The last send/recv error as text ("" when none). */
const char *Kube_conn_error(const struct kube_conn *c);
/* 1 when the last error was a TLS protocol error (e.g. the server's alert that a client
 * certificate is required): permanent, unlike a reset or a timeout. */
int Kube_conn_tls_failed(const struct kube_conn *c);
/* Closes the connection (no TLS close_notify wait) and frees c (NULL is fine). */
void Kube_conn_close(struct kube_conn *c);

/* tls_ctx.c: what the handshake's callbacks read on demand, for one connection: cfg's trust
 * anchors when the server presents a certificate, the client certificate and key (cfg's, or
 * cred's when it carries an exec plugin's) when the server asks for one. A resumed session
 * does neither. cfg and cred are borrowed for the handshake only: tls_start clears them
 * after it, and a callback that runs later fails. */
struct kube_tls_lazy {
    const struct kube_config *cfg;
    const struct kube_credential *cred;
    int trust_loaded;
    char *err; /* the load that failed, one line naming the file or field (owned) */
};
/* An OpenSSL client context (TLS 1.2 and 1.3) whose callbacks load from z, which must outlive
 * it. NULL with a one-line *errmsg when OpenSSL cannot make one. */
SSL_CTX *Kube_tls_ctx_new(struct kube_tls_lazy *z, char **errmsg);
/* Initialises OpenSSL once for the exec connection, without the system's openssl.cnf (before
 * anything else in the process uses OpenSSL, so that nothing loads it). */
void Kube_openssl_init(void);
/* Describes cfg's trust anchor ("CA file X", "certificate-authority-data", ...) into buf. */
const char *Kube_tls_ca_desc(const struct kube_config *cfg, char *buf, size_t n);
/* OpenSSL's last queued error as text (or fallback) into buf; the queue is cleared. */
const char *Kube_tls_errstr(char *buf, size_t n, const char *fallback);

/* tls_session.c: TLS sessions remembered per configuration (server, trust, identity), in
 * memory for this process and, when the connection names a directory (kube_exec_opts'
 * tls_session_dir), in files there so the next process resumes instead of a full handshake. */
/* Before the handshake: offers a remembered session for cfg on ssl (1 offered, 0 none). With
 * none, it may first wait (<= 3 s) for another thread's full handshake to the same server, or
 * make this connection the one others wait for. The session the server sends is saved by a
 * callback (TLS 1.3 sends it after the handshake), to memory and to a file under dir (NULL/""
 * = memory only). */
int Kube_tls_session_offer(SSL *ssl, const struct kube_config *cfg, const struct kube_credential *cred, const char *dir);
/* Installs the new-session callback on ctx. */
void Kube_tls_session_setup(SSL_CTX *ctx);
/* The connection ends (or its handshake failed): other connections stop waiting for it. */
void Kube_tls_session_release(SSL *ssl);

#endif
