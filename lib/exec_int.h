/* exec_int.h - private interface between the exec client's files: the upgraded
 * connection (exec_conn.c) and the session loop over it (exec_loop.c). */
#ifndef KUBE_EXEC_INT_H
#define KUBE_EXEC_INT_H

#include <stdint.h>

#include "kube/config.h"
#include "kube/exec.h"
#include "kube/error.h"
#include "tls_conn.h"

struct exec_conn {
    struct kube_conn *k; /* TCP or TLS connection (tls_conn.c) */
    int fd;
    uint8_t *pre; /* WebSocket bytes that arrived with the reply head */
    size_t pre_len;
    int proto; /* 5 or 4 */
};

/* Why a connect attempt failed, for the retry and fallback decisions. */
struct exec_attempt {
    struct kube_error err; /* http_code 0 = no reply; message is the one-line reason */
    int retryable;         /* refused / DNS / timeout / 429 / 5xx */
    int proto_refused;     /* 400/403 without a Status body: the subprotocol offer was refused */
};

/* Connects, sends the upgrade offering `offered` and validates the 101. 0 ok (c filled),
 * -1 with a filled. */
int Kube_exec_connect(const struct kube_config *cfg, const struct kube_exec_opts *o, const char *offered,
                      struct exec_conn *c, struct exec_attempt *a);
/* Closes the connection and frees c's buffers. */
void Kube_exec_conn_close(struct exec_conn *c);
/* Sends all of buf (waiting for writability up to deadline, monotonic ms; 0 = none). 0/-1. */
int Kube_exec_send_all(struct exec_conn *c, const void *buf, size_t len, int64_t deadline);
/* Runs the session over an upgraded connection and fills r (exit code, outcome, message). */
void Kube_exec_session(struct exec_conn *c, const struct kube_exec_opts *o, struct kube_exec_result *r);

#endif
