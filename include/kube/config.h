/* config.h - where and how to reach the Kubernetes API: kubeconfig files
 * (KUBECONFIG merging, contexts) and in-cluster service-account config. */
#ifndef KUBE_CONFIG_H
#define KUBE_CONFIG_H

#include <stddef.h>

struct kube_token_state; /* private: token cache for tokenFile rotation */
struct kube_exec_plugin; /* private: users[].user.exec and its cached credential */

struct kube_config {
    char *server;  /* "https://host:port[/prefix]", no trailing slash */
    char *ca_file; /* PEM CA bundle path (absolute), or NULL */
    char *ca_data; /* PEM CA bundle bytes (decoded), or NULL */
    size_t ca_data_len;
    char *cert_file; /* client certificate (PEM) path, or NULL */
    char *cert_data; /* client certificate PEM bytes, or NULL */
    size_t cert_data_len;
    char *key_file; /* client key (PEM) path, or NULL */
    char *key_data; /* client key PEM bytes, or NULL */
    size_t key_data_len;
    char *token;                   /* static bearer token, or NULL (never log it) */
    char *token_file;              /* bearer token file, re-read when its mtime changes, or NULL */
    int insecure;                  /* insecure-skip-tls-verify */
    char *tls_server_name;         /* name to verify the server certificate against, or NULL */
    char *namespace;               /* default namespace ("default" if none configured) */
    char *context;                 /* context name used, or NULL (in-cluster) */
    char *origin;                  /* for messages: "kubeconfig /root/.kube/config, context kind" or "in-cluster" */
    int in_cluster;                /* 1 when built from the service-account directory */
    char *proxy_url;               /* clusters[].cluster.proxy-url (http, https or socks5), or NULL */
    char *as_user;                 /* impersonation (users[].user.as): Impersonate-User, or NULL */
    char *as_uid;                  /* as-uid: Impersonate-Uid, or NULL */
    char **as_groups;              /* as-groups: Impersonate-Group each, NULL-terminated, or NULL */
    char **as_extra;               /* as-user-extra: "key=value" each (Impersonate-Extra-key), or NULL */
    struct kube_exec_plugin *exec; /* private: the exec credential plugin, or NULL */
    char *exec_cluster_config;     /* the cluster's client.authentication.k8s.io/exec extension (JSON) */
    struct kube_token_state *tok;  /* private */
};

/* Loads the config: kubeconfig_path if non-NULL, else $KUBECONFIG (colon list, merged, first
 * to set a key wins), else in-cluster (KUBERNETES_SERVICE_HOST/PORT, SA dir = $KUBE_SA_DIR or
 * /var/run/secrets/kubernetes.io/serviceaccount), else ~/.kube/config. context overrides
 * current-context. 0 ok; -1 with a one-line *errmsg naming file and field. */
int kube_config_load(const char *kubeconfig_path, const char *context, struct kube_config **out, char **errmsg);
/* Parses one kubeconfig held in memory; origin names it in errors, dir resolves relative paths
 * (NULL = cwd), context as above. 0 ok, -1 with *errmsg. Used by the fuzzer. */
int kube_config_parse(const char *data, size_t len, const char *origin, const char *dir, const char *context,
                      struct kube_config **out, char **errmsg);
/* Builds an in-cluster config from sa_dir (NULL = $KUBE_SA_DIR or the standard path). */
int kube_config_in_cluster(const char *sa_dir, struct kube_config **out, char **errmsg);
/* Builds a config for a plain server URL with no credentials (tests, http:// servers). */
struct kube_config *kube_config_new_server(const char *server);
/* Returns a newly allocated copy of the current bearer token (re-reading token_file when its
 * mtime changed), NULL when none is configured or (with *errmsg) when the file can't be read. */
char *kube_config_token(const struct kube_config *cfg, char **errmsg);
/* A credential for one request: a bearer token and/or a client certificate and key (PEM),
 * from the config's token, tokenFile or exec plugin (client-certificate files and data stay
 * in the config itself). */
struct kube_credential {
    char *token;
    char *cert, *key; /* PEM, from an exec plugin only */
    size_t cert_len, key_len;
};
/* Fills *out (all NULL when the config has no token and no plugin), running the exec plugin
 * when its cached credential is missing or expiring. 0, or -1 with a one-line *errmsg. */
int kube_config_credential(const struct kube_config *cfg, struct kube_credential *out, char **errmsg);
/* The server answered 401 to a request made with used: returns 1 when asking again may help
 * (an exec plugin will be run again), 0 otherwise. */
int kube_config_credential_rejected(const struct kube_config *cfg, const struct kube_credential *used);
/* Wipes and frees what *c holds (not c itself). */
void kube_credential_free(struct kube_credential *c);
/* The authentication and impersonation header lines for a request, each ending in CRLF:
 * "Authorization: Bearer ..." when cred has a token, Impersonate-User/-Uid/-Group/-Extra-*
 * from the config. A new string ("" when none), or NULL on allocation failure. */
char *kube_config_auth_headers(const struct kube_config *cfg, const struct kube_credential *cred);
/* The proxy URL to use for a connection to cfg->server, as client-go picks it: proxy-url
 * when set, else $HTTPS_PROXY/$https_proxy (https) or $HTTP_PROXY/$http_proxy (http), unless
 * $NO_PROXY/$no_proxy matches the host (names, .domains, *, IPs, CIDRs, host:port) or the host
 * is localhost or a loopback address. A new string, or NULL for a direct connection. */
char *kube_config_proxy(const struct kube_config *cfg);
/* url with its user:password replaced by "***", for messages (a new string or NULL). */
char *kube_proxy_redact(const char *url);

/* Frees cfg and everything it owns (NULL is fine). */
void kube_config_free(struct kube_config *cfg);

#endif
