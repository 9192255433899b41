/* tls_conn.h - private interface of tls_conn.c: one non-blocking client connection to the
 * API server (plain TCP for http://, mbedTLS for https://), configured from a kube_config;
 * tls_ctx.c builds the TLS configuration, tls_session.c remembers sessions to resume. */
#ifndef KUBE_TLS_CONN_H
#define KUBE_TLS_CONN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <mbedtls/ctr_drbg.h>
#include <mbedtls/pk.h>
#include <mbedtls/ssl.h>
#include <mbedtls/x509_crt.h>

#include "kube/config.h"
#include "kube/exec.h"

struct kube_conn;

/* Connects to cfg->server and completes the TLS handshake before deadline (monotonic ms).
 * NULL on failure with a one-line *errmsg naming the server, the config and the cause;
 * *retryable is set for refused / unresolvable / timed-out connections. */
struct kube_conn *kube_conn_open(const struct kube_config *cfg, int64_t deadline, char **errmsg, int *retryable);
/* Sends up to len bytes: >0 sent, 0 would block (poll kube_conn_events), -1 broken. */
ssize_t kube_conn_send(struct kube_conn *c, const void *buf, size_t len);
/* Receives up to len bytes: >0 read, 0 orderly EOF, -2 would block, -1 broken. */
ssize_t kube_conn_recv(struct kube_conn *c, void *buf, size_t len);
/* Waits until fd has events or deadline (monotonic ms; 0 = no bound) passes, riding out
 * EINTR: 1 ready, 0 timed out, -1 poll error. */
int kube_wait_fd(int fd, short events, int64_t deadline);
/* The socket, for poll(). */
int kube_conn_fd(const struct kube_conn *c);
/* POLLIN/POLLOUT the last would-block result waits for (TLS may read to write and back). */
short kube_conn_events(const struct kube_conn *c);
/* The last send/recv error as text ("" when none). */
const char *kube_conn_error(const struct kube_conn *c);
/* 1 when the last error was a TLS protocol error (e.g. the server's alert that a client
 * certificate is required): permanent, unlike a reset or a timeout. */
int kube_conn_tls_failed(const struct kube_conn *c);
/* Closes the connection (no TLS close_notify wait) and frees c (NULL is fine). */
void kube_conn_close(struct kube_conn *c);

/* Splits "scheme://host[:port][/prefix]": host keeps IPv6 brackets, port defaults to 443
 * (80 for http), prefix has no trailing slash. 0 ok, -1 malformed. Strings are malloc'd. */
int kube_conn_split_server(const char *server, char **scheme, char **host, long *port, char **prefix);

/* tls_ctx.c: a client configuration (trust anchors, client certificate and key, RNG). */
struct kube_tls {
    mbedtls_ssl_config conf;
    mbedtls_x509_crt ca, cert;
    mbedtls_pk_context key;
    mbedtls_ctr_drbg_context drbg;
    int verify;              /* 0 with insecure-skip-tls-verify */
    unsigned char ip[16];    /* the expected server IP when the name is an address */
    size_t ip_len;           /* 0: verify a DNS name (mbedtls_ssl_set_hostname) */
};
/* Fills t from cfg's CA / insecure flag / client cert and key; the expected server name is
 * set later per connection. 0, or -1 with a one-line *errmsg naming the file or field that
 * could not be used (t is then freed). */
int kube_tls_init(struct kube_tls *t, const struct kube_config *cfg, char **errmsg);
/* Frees what kube_tls_init allocated (a zeroed struct is fine). */
void kube_tls_free(struct kube_tls *t);
/* Describes cfg's trust anchor ("CA file X", "certificate-authority-data", ...) into buf. */
const char *kube_tls_ca_desc(const struct kube_config *cfg, char *buf, size_t n);
/* mbedTLS's text for error code ret, into buf. */
const char *kube_tls_errstr(int ret, char *buf, size_t n);
/* Why the server certificate failed verification (flags from mbedtls_ssl_get_verify_result). */
const char *kube_tls_verify_str(uint32_t flags, char *buf, size_t n);

/* tls_session.c: TLS sessions remembered per configuration (server, trust, identity), in
 * memory for this process and, when kube_tls_session_dir set a directory, in files there
 * so the next process resumes instead of a full handshake (no key exchange or certificate
 * verification: ~50 M instructions less with ECDSA certificates). */
/* kube_tls_session_dir (include/kube/exec.h) names the directory of session files. */
/* One connection's claim on a remembered session: the configuration's key, computed once
 * (it stats the CA/cert/key files), and whether this connection makes the full handshake
 * other connections wait for. */
struct kube_tls_resume {
    unsigned char key[32];
    int leader;
};
/* Offers a remembered session for cfg on ssl (before the handshake); 1 offered, 0 none. With
 * none, it may first wait (≤ 3 s) for another thread's full handshake to the same server, or
 * make this connection the one others wait for (res->leader). */
int kube_tls_session_offer(mbedtls_ssl_context *ssl, const struct kube_config *cfg, struct kube_tls_resume *res);
/* After the handshake: remembers ssl's session under res->key (ssl NULL when the handshake
 * failed) and, for the leader, wakes the connections waiting for it. */
void kube_tls_session_finish(mbedtls_ssl_context *ssl, const struct kube_tls_resume *res);

#endif
