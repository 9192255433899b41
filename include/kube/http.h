/* http.h - the API server URLs the client names in its messages. Requests go through
 * libcurl (OpenSSL backend) in lib/client.c and lib/curl_setup.c; see docs/library.md
 * "TLS and HTTP". */
#ifndef KUBE_HTTP_H
#define KUBE_HTTP_H

#include "kube/config.h"

/* Returns cfg->server + path (+ "?query" when query is non-empty), a new string or NULL.
 * The URL names the server as configured (not tls-server-name, which only sets the name
 * TLS verifies). */
char *kube_http_url(const struct kube_config *cfg, const char *path, const char *query);

#endif
