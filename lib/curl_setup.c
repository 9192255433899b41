/* curl_setup.c - one libcurl easy handle set up for a request to the API server: TLS
 * (OpenSSL backend) trust and client identity, tls-server-name, the proxy chosen as
 * client-go chooses it (proxy.c), the credential and impersonation headers; the process's
 * share of TLS sessions and DNS answers; curl failures turned into one-line messages. */
#include "curl_setup.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tls_conn.h"
#include "url_int.h"
#include "kube/util.h"

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static int g_init_rc = -1;
static CURLSH *g_share;
static pthread_mutex_t g_locks[CURL_LOCK_DATA_LAST];

static void share_lock(CURL *h, curl_lock_data d, curl_lock_access a, void *u)
{
    (void)h, (void)a, (void)u;
    pthread_mutex_lock(&g_locks[d]);
}

static void share_unlock(CURL *h, curl_lock_data d, void *u)
{
    (void)h, (void)u;
    pthread_mutex_unlock(&g_locks[d]);
}

static void global_init(void)
{
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
        return;
    for (int i = 0; i < CURL_LOCK_DATA_LAST; i++)
        pthread_mutex_init(&g_locks[i], NULL);
    g_share = curl_share_init();
    if (!g_share || curl_share_setopt(g_share, CURLSHOPT_LOCKFUNC, share_lock) != CURLSHE_OK ||
        curl_share_setopt(g_share, CURLSHOPT_UNLOCKFUNC, share_unlock) != CURLSHE_OK ||
        curl_share_setopt(g_share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION) != CURLSHE_OK ||
        curl_share_setopt(g_share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS) != CURLSHE_OK)
        return;
    g_init_rc = 0;
}

int Kube_curl_global_init(void)
{
    pthread_once(&g_once, global_init);
    return g_init_rc;
}

char *Kube_curl_url(const struct kube_config *cfg, const char *path, const char *query)
{
    const char *q = query && *query ? "?" : "", *qs = query && *query ? query : "";
    if (!cfg->tls_server_name)
        return kube_strdup_printf("%s%s%s%s", cfg->server, path, q, qs);
    char *scheme, *host, *prefix;
    long port;
    if (Kube_url_split_server(cfg->server, &scheme, &host, &port, &prefix))
        return NULL;
    char *url = kube_strdup_printf("%s://%s:%ld%s%s%s%s", scheme, cfg->tls_server_name, port, prefix, path, q, qs);
    free(scheme);
    free(host);
    free(prefix);
    return url;
}

char *Kube_http_url(const struct kube_config *cfg, const char *path, const char *query)
{
    int q = query && *query;
    return kube_strdup_printf("%s%s%s%s", cfg->server, path, q ? "?" : "", q ? query : "");
}

#define SET(opt, val)                                                                                                       \
    do {                                                                                                                    \
        CURLcode rc_ = curl_easy_setopt(h, opt, val);                                                                       \
        if (rc_ != CURLE_OK)                                                                                                \
            return kube_set_err(errmsg, "curl: setting " #opt ": %s", curl_easy_strerror(rc_));                             \
    } while (0)

/* With tls-server-name, connect to the real host while the URL names tls-server-name. */
static int apply_connect_to(CURL *h, const struct kube_config *cfg, struct kube_curl_lists *l, char **errmsg)
{
    char *scheme, *host, *prefix;
    long port;
    if (Kube_url_split_server(cfg->server, &scheme, &host, &port, &prefix))
        return kube_set_err(errmsg, "%s: server URL \"%s\" is not scheme://host[:port][/path]", cfg->origin, cfg->server);
    char *map = kube_strdup_printf("%s:%ld:%s:%ld", cfg->tls_server_name, port, host, port);
    free(scheme);
    free(host);
    free(prefix);
    struct curl_slist *nl = map ? curl_slist_append(l->connect_to, map) : NULL;
    free(map);
    if (!nl)
        return kube_set_err(errmsg, "out of memory");
    l->connect_to = nl;
    SET(CURLOPT_CONNECT_TO, l->connect_to);
    return 0;
}

static int apply_tls(CURL *h, const struct kube_config *cfg, const struct kube_credential *cred, char **errmsg)
{
    SET(CURLOPT_SSLVERSION, (long)CURL_SSLVERSION_TLSv1_2); /* 1.2 or newer, as client-go */
    if (cfg->insecure) {
        SET(CURLOPT_SSL_VERIFYPEER, 0L);
        SET(CURLOPT_SSL_VERIFYHOST, 0L);
    } else if (cfg->ca_file || cfg->ca_data) {
        /* only the configured CA: loading the system trust store costs ~25 ms per handle */
        SET(CURLOPT_CAPATH, (char *)NULL);
        if (cfg->ca_file) {
            SET(CURLOPT_CAINFO, cfg->ca_file);
        } else {
            struct curl_blob blob = { cfg->ca_data, cfg->ca_data_len, CURL_BLOB_COPY };
            SET(CURLOPT_CAINFO, (char *)NULL);
            SET(CURLOPT_CAINFO_BLOB, &blob);
        }
    } /* else: no CA configured at all -> the system trust store, as kubectl does */
    const char *cert = cred && cred->cert ? cred->cert : cfg->cert_data;
    size_t cert_len = cred && cred->cert ? cred->cert_len : cfg->cert_data_len;
    const char *key = cred && cred->key ? cred->key : cfg->key_data;
    size_t key_len = cred && cred->key ? cred->key_len : cfg->key_data_len;
    SET(CURLOPT_SSLCERTTYPE, "PEM");
    SET(CURLOPT_SSLKEYTYPE, "PEM");
    if (!(cred && cred->cert) && cfg->cert_file) {
        SET(CURLOPT_SSLCERT, cfg->cert_file);
    } else if (cert) {
        struct curl_blob blob = { (void *)cert, cert_len, CURL_BLOB_COPY };
        SET(CURLOPT_SSLCERT_BLOB, &blob);
    }
    if (!(cred && cred->key) && cfg->key_file) {
        SET(CURLOPT_SSLKEY, cfg->key_file);
    } else if (key) {
        struct curl_blob blob = { (void *)key, key_len, CURL_BLOB_COPY };
        SET(CURLOPT_SSLKEY_BLOB, &blob);
    }
    return 0;
}

/* Appends each CRLF-terminated line of block to the list. */
static int append_lines(struct curl_slist **list, const char *block)
{
    for (const char *p = block; *p;) {
        const char *e = strstr(p, "\r\n");
        size_t n = e ? (size_t)(e - p) : strlen(p);
        char *line = strndup(p, n);
        struct curl_slist *nl = line ? curl_slist_append(*list, line) : NULL;
        if (line) {
            explicit_bzero(line, n);
            free(line);
        }
        if (!nl)
            return -1;
        *list = nl;
        p += n + (e ? 2 : 0);
    }
    return 0;
}

int Kube_curl_apply_config(CURL *h, const struct kube_config *cfg, const struct kube_credential *cred,
                           struct kube_curl_lists *l, char **errmsg)
{
    if (!h || !cfg || !cfg->server)
        return kube_set_err(errmsg, "Kube_curl_apply_config: no handle or no server configured");
    SET(CURLOPT_SHARE, g_share);
    SET(CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
    SET(CURLOPT_NOSIGNAL, 1L);
    SET(CURLOPT_TCP_KEEPALIVE, 1L);
    SET(CURLOPT_TCP_KEEPIDLE, 30L);
    SET(CURLOPT_TCP_KEEPINTVL, 10L);
    SET(CURLOPT_TCP_NODELAY, 1L);
    SET(CURLOPT_PROTOCOLS_STR, "http,https");
    if (!strncmp(cfg->server, "https://", 8) && apply_tls(h, cfg, cred, errmsg))
        return -1;
    if (cfg->tls_server_name && apply_connect_to(h, cfg, l, errmsg))
        return -1;
    char *proxy = kube_config_proxy(cfg);
    CURLcode prc = curl_easy_setopt(h, CURLOPT_PROXY, proxy ? proxy : ""); /* "": never the environment's */
    free(proxy);
    if (prc != CURLE_OK)
        return kube_set_err(errmsg, "curl: setting the proxy: %s", curl_easy_strerror(prc));
    char *auth = kube_config_auth_headers(cfg, cred);
    int bad = !auth || append_lines(&l->headers, auth);
    if (auth) {
        explicit_bzero(auth, strlen(auth));
        free(auth);
    }
    if (bad)
        return kube_set_err(errmsg, "%s: an impersonation value holds a line break, or out of memory", cfg->origin);
    return 0;
}

void Kube_curl_lists_free(struct kube_curl_lists *l)
{
    for (struct curl_slist *p = l->headers; p; p = p->next)
        explicit_bzero(p->data, strlen(p->data));
    curl_slist_free_all(l->headers);
    curl_slist_free_all(l->connect_to);
    l->headers = l->connect_to = NULL;
}

char *Kube_curl_describe_error(CURLcode rc, const char *errbuf, const char *url, const struct kube_config *cfg)
{
    char ca[512];
    const char *detail = errbuf && *errbuf ? errbuf : curl_easy_strerror(rc);
    const char *origin = cfg && cfg->origin ? cfg->origin : "config";
    switch (rc) {
    case CURLE_COULDNT_RESOLVE_HOST:
        return kube_strdup_printf("cannot resolve the API server host of %s (%s): %s", url, origin, detail);
    case CURLE_COULDNT_RESOLVE_PROXY:
        return kube_strdup_printf("cannot resolve the proxy for %s (%s): %s", url, origin, detail);
    case CURLE_COULDNT_CONNECT: {
        char *full = cfg ? kube_config_proxy(cfg) : NULL, *proxy = full ? kube_proxy_redact(full) : NULL, *m;
        free(full);
        if (proxy)
            m = kube_strdup_printf("cannot connect to the proxy %s for the API server %s (%s): %s", proxy, url, origin,
                                   detail);
        else
            m = kube_strdup_printf("cannot connect to the API server %s (%s): %s", url, origin, detail);
        free(proxy);
        return m;
    }
    case CURLE_OPERATION_TIMEDOUT: return kube_strdup_printf("request to %s timed out: %s", url, detail);
    case CURLE_PEER_FAILED_VERIFICATION:
        return kube_strdup_printf("TLS: the server certificate of %s is not trusted by %s (%s): %s", url,
                                  Kube_tls_ca_desc(cfg, ca, sizeof ca), origin, detail);
    case CURLE_SSL_CACERT_BADFILE:
        return kube_strdup_printf("TLS: cannot load %s (%s): %s", Kube_tls_ca_desc(cfg, ca, sizeof ca), origin, detail);
    case CURLE_SSL_CERTPROBLEM:
        return kube_strdup_printf("TLS: cannot use the client certificate/key (%s): %s", origin, detail);
    case CURLE_SSL_CONNECT_ERROR: return kube_strdup_printf("TLS handshake with %s failed (%s): %s", url, origin, detail);
    case CURLE_GOT_NOTHING:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_PARTIAL_FILE: return kube_strdup_printf("connection to %s broken: %s", url, detail);
    case CURLE_SEND_FAIL_REWIND:
        return kube_strdup_printf("connection to %s broken after the request was sent (not sent again: it may "
                                  "have reached the server)",
                                  url);
    default: return kube_strdup_printf("request to %s failed: %s", url, detail);
    }
}

int Kube_curl_error_permanent(CURLcode rc)
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
    case CURLE_NOT_BUILT_IN: return 1;
    default: return 0;
    }
}

int Kube_curl_error_unsent(CURLcode rc)
{
    return rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_HOST || rc == CURLE_COULDNT_RESOLVE_PROXY ||
           rc == CURLE_SSL_CONNECT_ERROR; /* the handshake failed: no request byte was sent */
}
