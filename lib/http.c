/* http.c - applying a kube_config to a curl easy handle, URLs, curl errors. */
#include "kube/http.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_int.h"
#include "tls_conn.h"
#include "kube/util.h"

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static CURLcode g_init_rc = CURLE_OK;

static void global_init(void) { g_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT); }

int kube_http_global_init(void)
{
    pthread_once(&g_once, global_init);
    return g_init_rc == CURLE_OK ? 0 : -1;
}

/* Splits "scheme://host[:port][/prefix]" into host (brackets kept for IPv6), port, rest. */
static int split_server(const char *server, char **scheme, char **host, long *port, const char **rest)
{
    const char *p = strstr(server, "://");
    if (!p)
        return -1;
    *scheme = strndup(server, (size_t)(p - server));
    p += 3;
    const char *hend;
    if (*p == '[') {
        hend = strchr(p, ']');
        if (!hend)
            goto bad;
        hend++;
    } else {
        hend = p + strcspn(p, ":/");
    }
    *host = strndup(p, (size_t)(hend - p));
    *port = !strcmp(*scheme ? *scheme : "", "http") ? 80 : 443;
    if (*hend == ':') {
        char *end;
        *port = strtol(hend + 1, &end, 10);
        hend = end;
    }
    *rest = hend;
    if (!*scheme || !*host || !**host || *port <= 0 || *port > 65535 || (**rest && **rest != '/'))
        goto bad;
    return 0;
bad:
    free(*scheme);
    free(*host);
    *scheme = *host = NULL;
    return -1;
}

char *kube_http_url(const struct kube_config *cfg, const char *path, const char *query)
{
    const char *q = query && *query ? "?" : "";
    if (!cfg->tls_server_name)
        return kube_strdup_printf("%s%s%s%s", cfg->server, path, q, query && *query ? query : "");
    char *scheme, *host;
    long port;
    const char *rest;
    if (split_server(cfg->server, &scheme, &host, &port, &rest))
        return NULL;
    char *url = kube_strdup_printf("%s://%s:%ld%s%s%s%s", scheme, cfg->tls_server_name, port, rest, path, q,
                                   query && *query ? query : "");
    free(scheme);
    free(host);
    return url;
}

static void *connect_to_make(const char *entry) { return curl_slist_append(NULL, entry); }
static void connect_to_free(void *l) { curl_slist_free_all(l); }

/* With tls-server-name, connect to the real host while the URL names tls-server-name. The
 * CONNECT_TO list must outlive the transfer, so it is kept in cfg's private state. */
static int apply_connect_to(CURL *h, const struct kube_config *cfg, char **errmsg)
{
    char *scheme, *host;
    long port;
    const char *rest;
    if (split_server(cfg->server, &scheme, &host, &port, &rest)) {
        kube_set_err(errmsg, "%s: server URL \"%s\" is not scheme://host[:port][/path]", cfg->origin, cfg->server);
        return -1;
    }
    char *map = kube_strdup_printf("%s:%ld:%s:%ld", cfg->tls_server_name, port, host, port);
    free(scheme);
    free(host);
    struct curl_slist *l = map ? kube_config_attach(cfg, connect_to_make, connect_to_free, map) : NULL;
    free(map);
    if (!l) {
        kube_set_err(errmsg, "out of memory");
        return -1;
    }
    CURLcode rc = curl_easy_setopt(h, CURLOPT_CONNECT_TO, l);
    if (rc != CURLE_OK) {
        kube_set_err(errmsg, "curl: CURLOPT_CONNECT_TO: %s", curl_easy_strerror(rc));
        return -1;
    }
    return 0;
}

#define SET(opt, val)                                                                               \
    do {                                                                                            \
        CURLcode rc_ = curl_easy_setopt(h, opt, val);                                               \
        if (rc_ != CURLE_OK) {                                                                      \
            kube_set_err(errmsg, "curl: setting " #opt ": %s", curl_easy_strerror(rc_));            \
            return -1;                                                                              \
        }                                                                                           \
    } while (0)

/* TLS trust and client identity. */
static int apply_tls(CURL *h, const struct kube_config *cfg, char **errmsg)
{
    if (cfg->insecure) {
        SET(CURLOPT_SSL_VERIFYPEER, 0L);
        SET(CURLOPT_SSL_VERIFYHOST, 0L);
    } else if (cfg->ca_file || cfg->ca_data) {
        /* only the configured CA: loading the system trust store costs ~25 ms per handle */
        SET(CURLOPT_CAPATH, (char *)NULL);
        if (cfg->ca_file) {
            SET(CURLOPT_CAINFO, cfg->ca_file);
        } else {
            struct curl_blob blob = {cfg->ca_data, cfg->ca_data_len, CURL_BLOB_COPY};
            SET(CURLOPT_CAINFO, (char *)NULL);
            SET(CURLOPT_CAINFO_BLOB, &blob);
        }
    } /* else: no CA configured at all -> curl's default trust store, as kubectl does */
    if (cfg->cert_file) {
        SET(CURLOPT_SSLCERTTYPE, "PEM");
        SET(CURLOPT_SSLCERT, cfg->cert_file);
    } else if (cfg->cert_data) {
        struct curl_blob blob = {cfg->cert_data, cfg->cert_data_len, CURL_BLOB_COPY};
        SET(CURLOPT_SSLCERTTYPE, "PEM");
        SET(CURLOPT_SSLCERT_BLOB, &blob);
    }
    if (cfg->key_file) {
        SET(CURLOPT_SSLKEYTYPE, "PEM");
        SET(CURLOPT_SSLKEY, cfg->key_file);
    } else if (cfg->key_data) {
        struct curl_blob blob = {cfg->key_data, cfg->key_data_len, CURL_BLOB_COPY};
        SET(CURLOPT_SSLKEYTYPE, "PEM");
        SET(CURLOPT_SSLKEY_BLOB, &blob);
    }
    return 0;
}

int kube_curl_apply_config(CURL *h, const struct kube_config *cfg, struct curl_slist **headers, char **errmsg)
{
    if (!h || !cfg || !cfg->server) {
        kube_set_err(errmsg, "kube_curl_apply_config: no handle or no server configured");
        return -1;
    }
    SET(CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
    SET(CURLOPT_NOSIGNAL, 1L);
    SET(CURLOPT_TCP_KEEPALIVE, 1L);
    SET(CURLOPT_TCP_KEEPIDLE, 30L);
    SET(CURLOPT_TCP_KEEPINTVL, 10L);
    SET(CURLOPT_TCP_NODELAY, 1L);
    if (!strncmp(cfg->server, "https://", 8) && apply_tls(h, cfg, errmsg))
        return -1;
    if (cfg->tls_server_name && apply_connect_to(h, cfg, errmsg))
        return -1;
    char *terr = NULL;
    char *tok = kube_config_token(cfg, &terr);
    if (!tok && terr) {
        kube_set_err(errmsg, "%s: %s", cfg->origin ? cfg->origin : "config", terr);
        free(terr);
        return -1;
    }
    if (tok) {
        char *hdr = kube_strdup_printf("Authorization: Bearer %s", tok);
        explicit_bzero(tok, strlen(tok));
        free(tok);
        struct curl_slist *nl = hdr ? curl_slist_append(*headers, hdr) : NULL;
        if (hdr) {
            explicit_bzero(hdr, strlen(hdr));
            free(hdr);
        }
        if (!nl) {
            kube_set_err(errmsg, "out of memory");
            return -1;
        }
        *headers = nl;
    }
    return 0;
}

char *kube_curl_describe_error(CURLcode rc, const char *errbuf, const char *url, const struct kube_config *cfg)
{
    char ca[512];
    const char *detail = errbuf && *errbuf ? errbuf : curl_easy_strerror(rc);
    const char *origin = cfg && cfg->origin ? cfg->origin : "config";
    switch (rc) {
    case CURLE_COULDNT_RESOLVE_HOST:
        return kube_strdup_printf("cannot resolve the API server host of %s (%s): %s", url, origin, detail);
    case CURLE_COULDNT_CONNECT:
        return kube_strdup_printf("cannot connect to the API server %s (%s): %s", url, origin, detail);
    case CURLE_OPERATION_TIMEDOUT:
        return kube_strdup_printf("request to %s timed out: %s", url, detail);
    case CURLE_PEER_FAILED_VERIFICATION:
        return kube_strdup_printf("TLS: the server certificate of %s is not trusted by %s (%s): %s", url,
                                  kube_tls_ca_desc(cfg, ca, sizeof ca), origin, detail);
    case CURLE_SSL_CACERT_BADFILE:
        return kube_strdup_printf("TLS: cannot load %s (%s): %s", kube_tls_ca_desc(cfg, ca, sizeof ca), origin, detail);
    case CURLE_SSL_CERTPROBLEM:
        return kube_strdup_printf("TLS: cannot use the client certificate/key (%s): %s", origin, detail);
    case CURLE_SSL_CONNECT_ERROR:
        return kube_strdup_printf("TLS handshake with %s failed (%s): %s", url, origin, detail);
    case CURLE_GOT_NOTHING:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_PARTIAL_FILE:
        return kube_strdup_printf("connection to %s broken: %s", url, detail);
    default:
        return kube_strdup_printf("request to %s failed: %s", url, detail);
    }
}

int kube_curl_error_permanent(CURLcode rc)
{
    switch (rc) {
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_ENGINE_NOTFOUND:
    case CURLE_SSL_ENGINE_SETFAILED:
    case CURLE_SSL_CRL_BADFILE:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
    case CURLE_URL_MALFORMAT:
    case CURLE_UNSUPPORTED_PROTOCOL:
    case CURLE_NOT_BUILT_IN:
        return 1;
    default:
        return 0;
    }
}
