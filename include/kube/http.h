/* http.h - applying a kube_config to a libcurl easy handle (TLS trust, client
 * certificate, bearer token, HTTP/1.1) and turning curl failures into clear
 * one-line messages. Used by the client and by mpi-rsh's CONNECT_ONLY WebSocket. */
#ifndef KUBE_HTTP_H
#define KUBE_HTTP_H

#include <curl/curl.h>
#include "kube/config.h"

/* Sets on h: TLS verification against cfg's CA only (CAINFO file or CAINFO_BLOB; CAPATH NULL,
 * never the system store), insecure, client cert/key (file or *_BLOB), tls-server-name, forced
 * HTTP/1.1, and appends "Authorization: Bearer ..." to *headers (caller sets CURLOPT_HTTPHEADER
 * and frees the list). Does not set the URL. 0 ok, -1 with *errmsg (e.g. token file unreadable). */
int kube_curl_apply_config(CURL *h, const struct kube_config *cfg, struct curl_slist **headers,
                           char **errmsg);
/* Returns a newly allocated one-line message for a failed transfer: what failed (DNS, connect,
 * TLS verify against which CA, client cert, timeout) and the URL. errbuf is CURLOPT_ERRORBUFFER or NULL. */
char *kube_curl_describe_error(CURLcode rc, const char *errbuf, const char *url,
                               const struct kube_config *cfg);
/* Returns the URL for path (+ "?query" when query is non-empty) on cfg's server, new string or NULL.
 * With tls_server_name set, the URL names that host and kube_curl_apply_config adds a
 * CURLOPT_CONNECT_TO mapping to the real server, so SNI and verification use it. */
char *kube_http_url(const struct kube_config *cfg, const char *path, const char *query);
/* Returns 1 for curl failures that retrying cannot fix (TLS verification, unusable CA/cert/key
 * files, malformed URL, unsupported protocol), 0 otherwise. */
int kube_curl_error_permanent(CURLcode rc);
/* Calls curl_global_init once (thread-safe); 0 ok, -1 on failure. */
int kube_http_global_init(void);

#endif
