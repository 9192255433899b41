/* curl_setup.h - (library-internal) a libcurl easy handle set up for one request to the
 * API server from a kube_config and a credential, and curl failures as one-line messages. */
#ifndef KUBE_CURL_SETUP_H
#define KUBE_CURL_SETUP_H

#include <curl/curl.h>

#include "kube/config.h"

/* curl_global_init once (thread-safe), and the share (TLS sessions, DNS) every client's
 * handles use. 0 ok, -1 on failure. */
int Kube_curl_global_init(void);
/* Sets on h (after curl_easy_reset): HTTP/1.1, TCP keepalive, TLS 1.2+ with cfg's trust
 * (CA file or data only, never the system store when one is configured; insecure), the
 * client certificate (cfg's file or data, or cred's from an exec plugin), tls-server-name
 * (the URL names it and CURLOPT_CONNECT_TO maps it to the server), the proxy
 * (kube_config_proxy, or none: the environment is never read by libcurl itself), and
 * appends the Authorization and Impersonate-* lines to l->headers. The lists in l must
 * outlive the transfer (Kube_curl_lists_free after it). 0, or -1 with *errmsg. */
struct kube_curl_lists {
    struct curl_slist *headers, *connect_to;
};
int Kube_curl_apply_config(CURL *h, const struct kube_config *cfg, const struct kube_credential *cred,
                           struct kube_curl_lists *l, char **errmsg);
/* Frees the lists (wiping the header lines: they hold the token). */
void Kube_curl_lists_free(struct kube_curl_lists *l);
/* The URL curl is given for path?query: cfg->server, or with tls-server-name that name. */
char *Kube_curl_url(const struct kube_config *cfg, const char *path, const char *query);
/* The URL messages name for path?query: cfg->server + path (+ "?query" when query is
 * non-empty), as configured even with tls-server-name (which only sets the name TLS
 * verifies). A new string or NULL. */
char *Kube_http_url(const struct kube_config *cfg, const char *path, const char *query);
/* A new one-line message for a failed transfer: what failed (DNS, connect, proxy, TLS verify
 * against which CA, client cert, timeout) and the URL. errbuf is CURLOPT_ERRORBUFFER or NULL. */
char *Kube_curl_describe_error(CURLcode rc, const char *errbuf, const char *url, const struct kube_config *cfg);
/* 1 for failures retrying cannot fix (TLS verification, unusable CA/cert/key, bad URL). */
int Kube_curl_error_permanent(CURLcode rc);
/* 1 when the request certainly never reached the server (resolve/connect failures). */
int Kube_curl_error_unsent(CURLcode rc);

#endif
