/* config.h - where and how to reach the Kubernetes API: kubeconfig files
 * (KUBECONFIG merging, contexts) and in-cluster service-account config. */
#ifndef KUBE_CONFIG_H
#define KUBE_CONFIG_H

#include <stddef.h>

struct kube_token_state; /* private: token cache for tokenFile rotation */

struct kube_config {
    char *server;          /* "https://host:port[/prefix]", no trailing slash */
    char *ca_file;         /* PEM CA bundle path (absolute), or NULL */
    char *ca_data;         /* PEM CA bundle bytes (decoded), or NULL */
    size_t ca_data_len;
    char *cert_file;       /* client certificate (PEM) path, or NULL */
    char *cert_data;       /* client certificate PEM bytes, or NULL */
    size_t cert_data_len;
    char *key_file;        /* client key (PEM) path, or NULL */
    char *key_data;        /* client key PEM bytes, or NULL */
    size_t key_data_len;
    char *token;           /* static bearer token, or NULL (never log it) */
    char *token_file;      /* bearer token file, re-read when its mtime changes, or NULL */
    int insecure;          /* insecure-skip-tls-verify */
    char *tls_server_name; /* name to verify the server certificate against, or NULL */
    char *namespace;       /* default namespace ("default" if none configured) */
    char *context;         /* context name used, or NULL (in-cluster) */
    char *origin;          /* for messages: "kubeconfig /root/.kube/config, context kind" or "in-cluster" */
    int in_cluster;        /* 1 when built from the service-account directory */
    struct kube_token_state *tok; /* private */
};

/* Loads the config: kubeconfig_path if non-NULL, else $KUBECONFIG (colon list, merged, first
 * to set a key wins), else in-cluster (KUBERNETES_SERVICE_HOST/PORT, SA dir = $KUBE_SA_DIR or
 * /var/run/secrets/kubernetes.io/serviceaccount), else ~/.kube/config. context overrides
 * current-context. 0 ok; -1 with a one-line *errmsg naming file and field. */
int kube_config_load(const char *kubeconfig_path, const char *context,
                     struct kube_config **out, char **errmsg);
/* Parses one kubeconfig held in memory; origin names it in errors, dir resolves relative paths
 * (NULL = cwd), context as above. 0 ok, -1 with *errmsg. Used by the fuzzer. */
int kube_config_parse(const char *data, size_t len, const char *origin, const char *dir,
                      const char *context, struct kube_config **out, char **errmsg);
/* Builds an in-cluster config from sa_dir (NULL = $KUBE_SA_DIR or the standard path). */
int kube_config_in_cluster(const char *sa_dir, struct kube_config **out, char **errmsg);
/* Builds a config for a plain server URL with no credentials (tests, http:// servers). */
struct kube_config *kube_config_new_server(const char *server);
/* Returns a newly allocated copy of the current bearer token (re-reading token_file when its
 * mtime changed), NULL when none is configured or (with *errmsg) when the file can't be read. */
char *kube_config_token(const struct kube_config *cfg, char **errmsg);
/* Frees cfg and everything it owns (NULL is fine). */
void kube_config_free(struct kube_config *cfg);

#endif
