/* tcp_conn.h - private interface of tcp_conn.c: the exec connection's TCP connect and the
 * deadline-bounded wait on a descriptor. */
#ifndef KUBE_TCP_CONN_H
#define KUBE_TCP_CONN_H

#include <stdint.h>

#include "kube/config.h"

/* Waits until fd has events or deadline (monotonic ms; 0 = no bound) passes, riding out
 * EINTR: 1 ready, 0 timed out, -1 poll error. */
int Kube_wait_fd(int fd, short events, int64_t deadline);
/* Resolves host (IPv6 in brackets) and connects to the first address that answers on port
 * before deadline: a non-blocking socket, or -1 with a one-line *errmsg naming the kind
 * ("API server", "proxy") and url; *retryable set for unresolvable names, refusals, timeouts. */
int Kube_tcp_connect(const struct kube_config *cfg, const char *kind, const char *url, const char *host, long port,
                     int64_t deadline, char **errmsg, int *retryable);

#endif
