/* tls_conn.h - private interface of tls_conn.c: one non-blocking client connection to the
 * API server (plain TCP for http://, OpenSSL for https://), configured from a kube_config. */
#ifndef KUBE_TLS_CONN_H
#define KUBE_TLS_CONN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <openssl/ssl.h>

#include "kube/config.h"

struct kube_conn;

/* Connects to cfg->server and completes the TLS handshake before deadline (monotonic ms).
 * NULL on failure with a one-line *errmsg naming the server, the config and the cause;
 * *retryable is set for refused / unresolvable / timed-out connections. */
struct kube_conn *kube_conn_open(const struct kube_config *cfg, int64_t deadline, char **errmsg, int *retryable);
/* Sends up to len bytes: >0 sent, 0 would block (poll kube_conn_events), -1 broken. */
ssize_t kube_conn_send(struct kube_conn *c, const void *buf, size_t len);
/* Receives up to len bytes: >0 read, 0 orderly EOF, -2 would block, -1 broken. */
ssize_t kube_conn_recv(struct kube_conn *c, void *buf, size_t len);
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

/* tls_ctx.c: a client context from cfg's CA / insecure flag / client cert and key; NULL with
 * a one-line *errmsg naming the file or field that could not be used. */
SSL_CTX *kube_tls_ctx_new(const struct kube_config *cfg, char **errmsg);
/* Describes cfg's trust anchor ("CA file X", "certificate-authority-data", ...) into buf. */
const char *kube_tls_ca_desc(const struct kube_config *cfg, char *buf, size_t n);
/* OpenSSL's last queued error as text into buf (fallback when none); clears the queue. */
const char *kube_tls_errstr(char *buf, size_t n, const char *fallback);

#endif
