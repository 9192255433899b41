/* proxy_tunnel.h - private interface of proxy_tunnel.c: the exec connection's CONNECT tunnel. */
#ifndef KUBE_PROXY_TUNNEL_H
#define KUBE_PROXY_TUNNEL_H

#include <stdint.h>

#include "kube/config.h"

/* Connects to the http:// proxy proxy_url (credentials in its userinfo are sent as
 * Proxy-Authorization and never named in messages) and opens a CONNECT tunnel to host:port
 * before deadline: the socket, or -1 with a one-line *errmsg; *retryable as Kube_tcp_connect. */
int Kube_proxy_tunnel(const struct kube_config *cfg, const char *proxy_url, const char *host, long port, int64_t deadline,
                      char **errmsg, int *retryable);

#endif
