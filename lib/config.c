/* config.c - kubeconfig loading (KUBECONFIG merging, contexts, relative paths)
 * and in-cluster service-account config. Errors name the file and the field. */
#include "kube/config.h"

#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config_int.h"
#include "config_check.h"
#include "credplugin.h"
#include "kube/util.h"
#include "yamljson.h"

#define MAX_KUBECONFIG (16u << 20)
#define DEFAULT_SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"

/* Marks each merged entry with where it came from (for error messages). */
#define ORIGIN_KEY "@origin"

struct kube_config *Kube_config_alloc(void)
{
    struct kube_config *cfg = calloc(1, sizeof *cfg);
    if (!cfg)
        return NULL;
    cfg->tok = Kube_token_state_new();
    if (!cfg->tok) {
        free(cfg);
        return NULL;
    }
    return cfg;
}

void kube_config_free(struct kube_config *cfg)
{
    if (!cfg)
        return;
    free(cfg->server);
    free(cfg->ca_file);
    free(cfg->ca_data);
    free(cfg->cert_file);
    free(cfg->cert_data);
    free(cfg->key_file);
    free(cfg->key_data);
    if (cfg->token)
        explicit_bzero(cfg->token, strlen(cfg->token));
    free(cfg->token);
    free(cfg->token_file);
    free(cfg->tls_server_name);
    free(cfg->namespace);
    free(cfg->context);
    free(cfg->origin);
    free(cfg->proxy_url);
    free(cfg->exec_cluster_config);
    free(cfg->as_user);
    free(cfg->as_uid);
    kube_strv_free(cfg->as_groups);
    kube_strv_free(cfg->as_extra);
    Kube_exec_plugin_free(cfg->exec);
    Kube_token_state_free(cfg->tok);
    free(cfg);
}

struct kube_config *kube_config_new_server(const char *server)
{
    struct kube_config *cfg = Kube_config_alloc();
    if (!cfg)
        return NULL;
    cfg->server = strdup(server);
    cfg->namespace = strdup("default");
    cfg->origin = kube_strdup_printf("server %s", server);
    if (!cfg->server || !cfg->namespace || !cfg->origin) {
        kube_config_free(cfg);
        return NULL;
    }
    size_t n = strlen(cfg->server);
    while (n > 0 && cfg->server[n - 1] == '/')
        cfg->server[--n] = '\0';
    return cfg;
}

/* ---- one parsed file -> normalized JSON ---- */

/* Resolves path relative to dir (unless absolute or dir NULL); new string. */
static char *resolve_path(const char *dir, const char *path)
{
    if (path[0] == '/' || !dir || !*dir)
        return strdup(path);
    if (path[0] == '~' && path[1] == '/' && getenv("HOME"))
        return kube_strdup_printf("%s/%s", getenv("HOME"), path + 2);
    return kube_strdup_printf("%s/%s", dir, path);
}

/* In list key (clusters/users), for entries' inner object, makes path fields absolute. */
static int resolve_list_paths(json_t *root, const char *list, const char *inner, const char *const *fields, const char *dir)
{
    json_t *arr = json_object_get(root, list);
    size_t i;
    json_t *ent;
    json_array_foreach(arr, i, ent) {
        json_t *in = json_object_get(ent, inner);
        if (!json_is_object(in))
            continue;
        for (const char *const *f = fields; *f; f++) {
            const char *p = json_string_value(json_object_get(in, *f));
            if (!p || !*p)
                continue;
            char *abs = resolve_path(dir, p);
            if (!abs || json_object_set_new(in, *f, json_string(abs))) {
                free(abs);
                return -1;
            }
            free(abs);
        }
    }
    return 0;
}

/* Checks top-level types and tags each named entry with its origin "file: list[i]". */
static int check_and_tag(json_t *root, const char *origin, char **errmsg)
{
    static const char *const lists[] = { "clusters", "users", "contexts", NULL };
    static const char *const inner[] = { "cluster", "user", "context", NULL };
    if (!json_is_object(root))
        return kube_set_err(errmsg, "%s: not a kubeconfig (top level is not a mapping)", origin);
    json_t *cc = json_object_get(root, "current-context");
    if (cc && !json_is_null(cc) && !json_is_string(cc))
        return kube_set_err(errmsg, "%s: current-context: expected a string", origin);
    for (int l = 0; lists[l]; l++) {
        json_t *arr = json_object_get(root, lists[l]);
        if (!arr || json_is_null(arr))
            continue;
        if (!json_is_array(arr))
            return kube_set_err(errmsg, "%s: %s: expected a list", origin, lists[l]);
        size_t i;
        json_t *ent;
        json_array_foreach(arr, i, ent) {
            json_t *name = json_object_get(ent, "name");
            json_t *in = json_object_get(ent, inner[l]);
            if (!json_is_object(ent) || !json_is_string(name))
                return kube_set_err(errmsg, "%s: %s[%zu].name: expected a string", origin, lists[l], i);
            if (in && !json_is_null(in) && !json_is_object(in))
                return kube_set_err(errmsg, "%s: %s[%zu].%s: expected a mapping", origin, lists[l], i, inner[l]);
            char *tag = kube_strdup_printf("%s: %s[%zu].%s", origin, lists[l], i, inner[l]);
            if (!tag || json_object_set_new(ent, ORIGIN_KEY, json_string(tag))) {
                free(tag);
                return kube_set_err(errmsg, "out of memory");
            }
            free(tag);
        }
    }
    return 0;
}

/* Parses one file's bytes into a checked, tagged, path-resolved JSON tree. */
static json_t *parse_one(const char *data, size_t len, const char *origin, const char *dir, char **errmsg)
{
    static const char *const cluster_paths[] = { "certificate-authority", NULL };
    static const char *const user_paths[] = { "client-certificate", "client-key", "tokenFile", NULL };
    char *yerr = NULL;
    json_t *root = Kube_yaml_to_json(data, len, &yerr);
    if (!root) {
        kube_set_err(errmsg, "%s: invalid YAML: %s", origin, yerr ? yerr : "?");
        free(yerr);
        return NULL;
    }
    if (json_is_null(root)) {
        json_decref(root);
        root = json_object();
    }
    if (check_and_tag(root, origin, errmsg) || resolve_list_paths(root, "clusters", "cluster", cluster_paths, dir) ||
        resolve_list_paths(root, "users", "user", user_paths, dir)) {
        if (errmsg && !*errmsg)
            kube_set_err(errmsg, "%s: out of memory", origin);
        json_decref(root);
        return NULL;
    }
    return root;
}

/* Merges src into dst as kubectl does: the first file to define a name (or current-context) wins. */
static int merge_into(json_t *dst, json_t *src)
{
    static const char *const lists[] = { "clusters", "users", "contexts", NULL };
    const char *cc = json_string_value(json_object_get(src, "current-context"));
    const char *dcc = json_string_value(json_object_get(dst, "current-context"));
    if (cc && *cc && !(dcc && *dcc) && json_object_set_new(dst, "current-context", json_string(cc)))
        return -1;
    for (int l = 0; lists[l]; l++) {
        json_t *sarr = json_object_get(src, lists[l]);
        json_t *darr = json_object_get(dst, lists[l]);
        if (!json_is_array(sarr))
            continue;
        if (!json_is_array(darr)) {
            darr = json_array();
            if (!darr || json_object_set_new(dst, lists[l], darr))
                return -1;
        }
        size_t i, j;
        json_t *ent, *d;
        json_array_foreach(sarr, i, ent) {
            const char *name = json_string_value(json_object_get(ent, "name"));
            int dup = 0;
            json_array_foreach(darr, j, d)
                dup |= !strcmp(name, json_string_value(json_object_get(d, "name")));
            if (!dup && json_array_append(darr, ent))
                return -1;
        }
    }
    return 0;
}

/* ---- selecting the context and building the kube_config ---- */

static json_t *find_named(const json_t *root, const char *list, const char *name)
{
    size_t i;
    json_t *ent;
    json_array_foreach(json_object_get(root, list), i, ent) {
        const char *n = json_string_value(json_object_get(ent, "name"));
        if (n && !strcmp(n, name))
            return ent;
    }
    return NULL;
}

/* Reads optional string field key of in into *out (new copy or NULL). -1 if the type is wrong. */
static int opt_str(const json_t *in, const char *key, const char *tag, char **out, char **errmsg)
{
    json_t *v = json_object_get(in, key);
    *out = NULL;
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_string(v))
        return kube_set_err(errmsg, "%s.%s: expected a string", tag, key);
    if (!*json_string_value(v))
        return 0;
    *out = strdup(json_string_value(v));
    if (!*out)
        return kube_set_err(errmsg, "%s.%s: out of memory", tag, key);
    return 0;
}

static int parse_bool(const char *s, int *out)
{
    static const char *const t[] = { "true", "yes", "on", "y", NULL }, *const f[] = { "false", "no", "off", "n", NULL };
    for (int i = 0; t[i]; i++) {
        if (!strcasecmp(s, t[i])) {
            *out = 1;
            return 0;
        }
        if (!strcasecmp(s, f[i])) {
            *out = 0;
            return 0;
        }
    }
    return -1;
}

/* Decodes a base64 "-data" field holding PEM into data and len. */
static int data_field(const json_t *in, const char *key, const char *tag, char **data, size_t *len, char **errmsg)
{
    char *b64 = NULL;
    if (opt_str(in, key, tag, &b64, errmsg))
        return -1;
    if (!b64)
        return 0;
    int rc = kube_base64_decode(b64, strlen(b64), data, len);
    free(b64);
    if (rc)
        return kube_set_err(errmsg, "%s.%s: not valid base64", tag, key);
    if (!memmem(*data, *len, "-----BEGIN", 10)) {
        kube_set_err(errmsg, "%s.%s: decoded data is not PEM (no -----BEGIN line)", tag, key);
        free(*data);
        *data = NULL;
        return -1;
    }
    return 0;
}

/* Checks that a file named by field key is readable. */
static int check_file(const char *path, const char *tag, const char *key, char **errmsg)
{
    if (path && access(path, R_OK) != 0)
        return kube_set_err(errmsg, "%s.%s: %s: %s", tag, key, path, strerror(errno));
    return 0;
}

/* proxy-url: http, https or socks5 URL, as client-go accepts. */
static int check_proxy_url(const char *url, const char *tag, char **errmsg)
{
    if (!url || !strncmp(url, "http://", 7) || !strncmp(url, "https://", 8) || !strncmp(url, "socks5://", 9))
        return 0;
    return kube_set_err(errmsg, "%s.proxy-url: \"%s\": expected an http://, https:// or socks5:// URL", tag, url);
}

/* extensions: a list of {name, extension}; the one named client.authentication.k8s.io/exec is
 * handed to exec plugins as spec.cluster.config (provideClusterInfo). */
static int exec_extension(const json_t *in, const char *tag, char **out, char **errmsg)
{
    json_t *l = json_object_get(in, "extensions"), *e;
    size_t i;
    if (!l || json_is_null(l))
        return 0;
    if (!json_is_array(l))
        return kube_set_err(errmsg, "%s.extensions: expected a list of {name, extension}", tag);
    json_array_foreach(l, i, e) {
        const char *name = json_string_value(json_object_get(e, "name"));
        if (!name)
            return kube_set_err(errmsg, "%s.extensions[%zu].name: expected a string", tag, i);
        if (strcmp(name, "client.authentication.k8s.io/exec") || *out)
            continue;
        json_t *x = json_object_get(e, "extension");
        if (x && !(*out = json_dumps(x, JSON_COMPACT | JSON_ENCODE_ANY)))
            return kube_set_err(errmsg, "out of memory");
    }
    return 0;
}

static int fill_cluster(struct kube_config *cfg, const json_t *ent, char **errmsg)
{
    static const char *const keys[] = { "server",
                                        "certificate-authority",
                                        "certificate-authority-data",
                                        "insecure-skip-tls-verify",
                                        "tls-server-name",
                                        "proxy-url",
                                        "disable-compression",
                                        "extensions",
                                        NULL };
    const char *tag = json_string_value(json_object_get(ent, ORIGIN_KEY));
    const json_t *in = json_object_get(ent, "cluster");
    char *insecure = NULL;
    if (Kube_config_known_keys(in, tag, keys, errmsg) || opt_str(in, "server", tag, &cfg->server, errmsg) ||
        opt_str(in, "proxy-url", tag, &cfg->proxy_url, errmsg) || check_proxy_url(cfg->proxy_url, tag, errmsg) ||
        opt_str(in, "certificate-authority", tag, &cfg->ca_file, errmsg) ||
        opt_str(in, "tls-server-name", tag, &cfg->tls_server_name, errmsg) ||
        opt_str(in, "insecure-skip-tls-verify", tag, &insecure, errmsg) ||
        data_field(in, "certificate-authority-data", tag, &cfg->ca_data, &cfg->ca_data_len, errmsg))
        goto fail;
    if (insecure && parse_bool(insecure, &cfg->insecure)) {
        kube_set_err(errmsg, "%s.insecure-skip-tls-verify: expected true or false, got \"%s\"", tag, insecure);
        goto fail;
    }
    if (!cfg->server) {
        kube_set_err(errmsg, "%s.server: missing (expected https://host:port)", tag);
        goto fail;
    }
    if (!strstr(cfg->server, "://")) {
        char *s = kube_strdup_printf("https://%s", cfg->server);
        free(cfg->server);
        cfg->server = s;
    } else if (strncmp(cfg->server, "https://", 8) && strncmp(cfg->server, "http://", 7)) {
        kube_set_err(errmsg, "%s.server: \"%s\": expected an http:// or https:// URL", tag, cfg->server);
        goto fail;
    }
    if (!cfg->server)
        goto fail;
    for (size_t n = strlen(cfg->server); n > 0 && cfg->server[n - 1] == '/'; n--)
        cfg->server[n - 1] = '\0';
    if (check_file(cfg->ca_file, tag, "certificate-authority", errmsg))
        goto fail;
    if (exec_extension(in, tag, &cfg->exec_cluster_config, errmsg))
        goto fail;
    if (cfg->insecure && (cfg->ca_file || cfg->ca_data)) { /* client-go refuses this pair too */
        kube_set_err(errmsg,
                     "%s: specifying a root certificates file with the insecure flag is not allowed "
                     "(insecure-skip-tls-verify with %s)",
                     tag, cfg->ca_file ? "certificate-authority" : "certificate-authority-data");
        goto fail;
    }
    free(insecure);
    return 0;
fail:
    if (errmsg && !*errmsg)
        kube_set_err(errmsg, "%s: out of memory", tag);
    free(insecure);
    return -1;
}

/* auth-provider and basic auth: refused, naming what replaces them. */
static int reject_unsupported(const json_t *in, const char *tag, char **errmsg)
{
    json_t *ap = json_object_get(in, "auth-provider");
    if (ap && !json_is_null(ap)) {
        const char *name = json_string_value(json_object_get(ap, "name"));
        const char *plugin = !name                    ? "the provider's exec plugin"
                             : !strcmp(name, "gcp")   ? "gke-gcloud-auth-plugin"
                             : !strcmp(name, "azure") ? "kubelogin (Azure)"
                             : !strcmp(name, "oidc")  ? "kubelogin (kubectl oidc-login)"
                                                      : "the provider's exec plugin";
        return kube_set_err(errmsg,
                            "%s.auth-provider: the %s auth provider was removed from client-go (and kubectl); "
                            "use an exec credential plugin instead (users[].user.exec, e.g. %s)",
                            tag, name ? name : "configured", plugin);
    }
    static const char *const keys[] = { "username", "password", NULL };
    for (int i = 0; keys[i]; i++) {
        json_t *v = json_object_get(in, keys[i]);
        if (v && !json_is_null(v))
            return kube_set_err(errmsg,
                                "%s.%s: unsupported: basic authentication is not supported (use token, "
                                "tokenFile, client-certificate/client-key or exec)",
                                tag, keys[i]);
    }
    return 0;
}

/* A list of strings (as-groups) into a NULL-terminated vector. */
static int opt_strv(const json_t *in, const char *key, const char *tag, char ***out, char **errmsg)
{
    json_t *a = json_object_get(in, key), *v;
    size_t i;
    *out = NULL;
    if (!a || json_is_null(a))
        return 0;
    if (!json_is_array(a))
        return kube_set_err(errmsg, "%s.%s: expected a list of strings", tag, key);
    if (!(*out = calloc(json_array_size(a) + 1, sizeof **out)))
        return kube_set_err(errmsg, "out of memory");
    json_array_foreach(a, i, v) {
        if (!json_is_string(v))
            return kube_set_err(errmsg, "%s.%s[%zu]: expected a string", tag, key, i);
        if (!((*out)[i] = strdup(json_string_value(v))))
            return kube_set_err(errmsg, "out of memory");
    }
    return 0;
}

/* as-user-extra: a mapping of key -> list of strings, into "key=value" entries. */
static int opt_extra(const json_t *in, const char *tag, char ***out, char **errmsg)
{
    json_t *m = json_object_get(in, "as-user-extra"), *vals, *v;
    const char *k;
    size_t n = 0, i, at = 0;
    *out = NULL;
    if (!m || json_is_null(m))
        return 0;
    if (!json_is_object(m))
        return kube_set_err(errmsg, "%s.as-user-extra: expected a mapping of key to a list of strings", tag);
    json_object_foreach(m, k, vals)
        n += json_is_array(vals) ? json_array_size(vals) : 1;
    if (!(*out = calloc(n + 1, sizeof **out)))
        return kube_set_err(errmsg, "out of memory");
    json_object_foreach(m, k, vals) {
        if (!json_is_array(vals) || !*k || strchr(k, '='))
            return kube_set_err(errmsg, "%s.as-user-extra.%s: expected a list of strings", tag, k);
        json_array_foreach(vals, i, v) {
            if (!json_is_string(v))
                return kube_set_err(errmsg, "%s.as-user-extra.%s[%zu]: expected a string", tag, k, i);
            if (!((*out)[at++] = kube_strdup_printf("%s=%s", k, json_string_value(v))))
                return kube_set_err(errmsg, "out of memory");
        }
    }
    return 0;
}

static int fill_user(struct kube_config *cfg, const json_t *ent, char **errmsg)
{
    static const char *const keys[] = { "token",
                                        "tokenFile",
                                        "client-certificate",
                                        "client-certificate-data",
                                        "client-key",
                                        "client-key-data",
                                        "as",
                                        "as-uid",
                                        "as-groups",
                                        "as-user-extra",
                                        "exec",
                                        "auth-provider",
                                        "username",
                                        "password",
                                        "extensions",
                                        NULL };
    const char *tag = json_string_value(json_object_get(ent, ORIGIN_KEY));
    const json_t *in = json_object_get(ent, "user");
    json_t *ex = json_object_get(in, "exec");
    char *extag = NULL;
    if (Kube_config_known_keys(in, tag, keys, errmsg) || reject_unsupported(in, tag, errmsg) ||
        opt_str(in, "token", tag, &cfg->token, errmsg) || opt_str(in, "tokenFile", tag, &cfg->token_file, errmsg) ||
        opt_str(in, "client-certificate", tag, &cfg->cert_file, errmsg) ||
        opt_str(in, "client-key", tag, &cfg->key_file, errmsg) ||
        data_field(in, "client-certificate-data", tag, &cfg->cert_data, &cfg->cert_data_len, errmsg) ||
        data_field(in, "client-key-data", tag, &cfg->key_data, &cfg->key_data_len, errmsg) ||
        opt_str(in, "as", tag, &cfg->as_user, errmsg) || opt_str(in, "as-uid", tag, &cfg->as_uid, errmsg) ||
        opt_strv(in, "as-groups", tag, &cfg->as_groups, errmsg) || opt_extra(in, tag, &cfg->as_extra, errmsg) ||
        check_file(cfg->token_file, tag, "tokenFile", errmsg) ||
        check_file(cfg->cert_file, tag, "client-certificate", errmsg) ||
        check_file(cfg->key_file, tag, "client-key", errmsg))
        return -1;
    if (ex && !json_is_null(ex)) {
        extag = kube_strdup_printf("%s.exec", tag);
        int rc = extag ? Kube_exec_plugin_parse(ex, extag, &cfg->exec, errmsg) : -1;
        free(extag);
        if (rc)
            return -1;
    }
    int has_cert = cfg->cert_file || cfg->cert_data, has_key = cfg->key_file || cfg->key_data;
    if (has_cert != has_key)
        return kube_set_err(errmsg, "%s: %s is set but %s is missing", tag, has_cert ? "client-certificate" : "client-key",
                            has_cert ? "client-key" : "client-certificate");
    if (!cfg->as_user && (cfg->as_groups || cfg->as_extra || cfg->as_uid)) { /* client-go's rule */
        return kube_set_err(errmsg, "%s: as-groups, as-uid and as-user-extra need \"as\" (the user to impersonate)", tag);
    }
    return 0;
}

/* Builds cfg from a merged tree; origin names the file(s). */
static int build_config(const json_t *root, const char *origin, const char *context, struct kube_config **out, char **errmsg)
{
    const char *name = context && *context ? context : json_string_value(json_object_get(root, "current-context"));
    if (!name || !*name)
        return kube_set_err(errmsg, "%s: current-context is not set (and no --context given)", origin);
    const json_t *ctx = find_named(root, "contexts", name);
    if (!ctx)
        return kube_set_err(errmsg, "%s: context \"%s\" not found%s", origin, name,
                            context && *context ? "" : " (named by current-context)");
    const char *ctag = json_string_value(json_object_get(ctx, ORIGIN_KEY));
    const json_t *cin = json_object_get(ctx, "context");
    struct kube_config *cfg = Kube_config_alloc();
    char *cluster = NULL, *user = NULL;
    if (!cfg)
        return kube_set_err(errmsg, "out of memory");
    static const char *const ckeys[] = { "cluster", "user", "namespace", "extensions", NULL };
    if (Kube_config_known_keys(cin, ctag, ckeys, errmsg) || opt_str(cin, "cluster", ctag, &cluster, errmsg) ||
        opt_str(cin, "user", ctag, &user, errmsg) || opt_str(cin, "namespace", ctag, &cfg->namespace, errmsg))
        goto fail;
    const json_t *cl = cluster ? find_named(root, "clusters", cluster) : NULL;
    const json_t *us = user ? find_named(root, "users", user) : NULL;
    if (!cl) {
        if (cluster)
            kube_set_err(errmsg, "%s.cluster: cluster \"%s\" not found in %s", ctag, cluster, origin);
        else
            kube_set_err(errmsg, "%s.cluster: missing", ctag);
        goto fail;
    }
    if (fill_cluster(cfg, cl, errmsg))
        goto fail;
    if (user && !us) {
        kube_set_err(errmsg, "%s.user: user \"%s\" not found in %s", ctag, user, origin);
        goto fail;
    }
    if (us && fill_user(cfg, us, errmsg))
        goto fail;
    if (!cfg->namespace)
        cfg->namespace = strdup("default");
    cfg->context = strdup(name);
    cfg->origin = kube_strdup_printf("%s, context %s", origin, name);
    if (!cfg->namespace || !cfg->context || !cfg->origin) {
        kube_set_err(errmsg, "out of memory");
        goto fail;
    }
    free(cluster);
    free(user);
    *out = cfg;
    return 0;
fail:
    free(cluster);
    free(user);
    kube_config_free(cfg);
    return -1;
}

int kube_config_parse(const char *data, size_t len, const char *origin, const char *dir, const char *context,
                      struct kube_config **out, char **errmsg)
{
    *out = NULL;
    json_t *root = parse_one(data, len, origin ? origin : "kubeconfig", dir, errmsg);
    if (!root)
        return Kube_config_one_line(-1, errmsg);
    int rc = build_config(root, origin ? origin : "kubeconfig", context, out, errmsg);
    json_decref(root);
    return Kube_config_one_line(rc, errmsg);
}

/* ---- files, KUBECONFIG, in-cluster ---- */

/* Reads and parses one kubeconfig file. *missing is set (and NULL returned, no error) when
 * the file does not exist and missing is non-NULL. */
static json_t *load_file(const char *path, int *missing, char **errmsg)
{
    char *data = NULL, *rerr = NULL;
    size_t len = 0;
    if (missing)
        *missing = 0;
    if (kube_read_file(path, MAX_KUBECONFIG, &data, &len, &rerr)) {
        if (missing && errno == ENOENT) {
            *missing = 1;
            free(rerr);
            return NULL;
        }
        kube_set_err(errmsg, "kubeconfig %s", rerr ? rerr : path);
        free(rerr);
        return NULL;
    }
    char *dir = strdup(path);
    char *slash = dir ? strrchr(dir, '/') : NULL;
    if (slash)
        *(slash == dir ? slash + 1 : slash) = '\0';
    json_t *root = parse_one(data, len, path, slash ? dir : ".", errmsg);
    free(dir);
    free(data);
    return root;
}

/* Loads and merges the colon-separated KUBECONFIG list (missing files are skipped, as kubectl does). */
static int load_list(const char *list, const char *context, struct kube_config **out, char **errmsg)
{
    char *copy = strdup(list), *save = NULL;
    json_t *merged = json_object();
    char *origin = NULL;
    int rc = -1, nfiles = 0;
    if (!copy || !merged) {
        kube_set_err(errmsg, "out of memory");
        goto done;
    }
    for (char *p = strtok_r(copy, ":", &save); p; p = strtok_r(NULL, ":", &save)) {
        int missing = 0;
        json_t *one = load_file(p, &missing, errmsg);
        if (!one && missing)
            continue;
        if (!one)
            goto done;
        int mrc = merge_into(merged, one);
        json_decref(one);
        char *no = kube_strdup_printf("%s%s%s", origin ? origin : "", origin ? ":" : "", p);
        free(origin);
        origin = no;
        if (mrc || !origin) {
            kube_set_err(errmsg, "out of memory");
            goto done;
        }
        nfiles++;
    }
    if (!nfiles) {
        kube_set_err(errmsg, "KUBECONFIG=%s: none of these files exists", list);
        goto done;
    }
    char *o = kube_strdup_printf("kubeconfig %s", origin);
    rc = o ? build_config(merged, o, context, out, errmsg) : -1;
    free(o);
done:
    free(origin);
    free(copy);
    json_decref(merged);
    return rc;
}

static int load_path(const char *path, const char *context, struct kube_config **out, char **errmsg)
{
    json_t *root = load_file(path, NULL, errmsg);
    if (!root)
        return -1;
    char *o = kube_strdup_printf("kubeconfig %s", path);
    int rc = o ? build_config(root, o, context, out, errmsg) : -1;
    if (!o)
        kube_set_err(errmsg, "out of memory");
    free(o);
    json_decref(root);
    return rc;
}

/* Reads a small service-account file, trimmed; NULL (with *errmsg) on failure. */
static char *read_trimmed(const char *dir, const char *name, char **errmsg)
{
    char *path = kube_strdup_printf("%s/%s", dir, name), *data = NULL;
    size_t len = 0;
    if (!path || kube_read_file(path, 1 << 20, &data, &len, errmsg)) {
        free(path);
        return NULL;
    }
    free(path);
    while (len > 0 && strchr(" \t\r\n", data[len - 1]))
        data[--len] = '\0';
    return data;
}

int kube_config_in_cluster(const char *sa_dir, struct kube_config **out, char **errmsg)
{
    const char *host = getenv("KUBERNETES_SERVICE_HOST"), *port = getenv("KUBERNETES_SERVICE_PORT");
    *out = NULL;
    if (!sa_dir)
        sa_dir = getenv("KUBE_SA_DIR") && *getenv("KUBE_SA_DIR") ? getenv("KUBE_SA_DIR") : DEFAULT_SA_DIR;
    if (!host || !*host || !port || !*port)
        return kube_set_err(errmsg, "in-cluster config: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be set");
    struct kube_config *cfg = Kube_config_alloc();
    char *ns_err = NULL;
    if (!cfg)
        return kube_set_err(errmsg, "out of memory");
    int v6 = strchr(host, ':') != NULL;
    cfg->server = kube_strdup_printf("https://%s%s%s:%s", v6 ? "[" : "", host, v6 ? "]" : "", port);
    cfg->token_file = kube_strdup_printf("%s/token", sa_dir);
    cfg->ca_file = kube_strdup_printf("%s/ca.crt", sa_dir);
    cfg->namespace = read_trimmed(sa_dir, "namespace", &ns_err);
    free(ns_err);
    if (!cfg->namespace || !*cfg->namespace) {
        free(cfg->namespace);
        cfg->namespace = strdup("default");
    }
    cfg->origin = kube_strdup_printf("in-cluster config (%s)", sa_dir);
    cfg->in_cluster = 1;
    if (!cfg->server || !cfg->token_file || !cfg->ca_file || !cfg->namespace || !cfg->origin) {
        kube_set_err(errmsg, "out of memory");
        goto fail;
    }
    if (access(cfg->ca_file, R_OK) != 0) {
        kube_set_err(errmsg, "in-cluster config: %s: %s", cfg->ca_file, strerror(errno));
        goto fail;
    }
    char *tok = kube_config_token(cfg, errmsg);
    if (!tok)
        goto fail;
    explicit_bzero(tok, strlen(tok));
    free(tok);
    *out = cfg;
    return 0;
fail:
    kube_config_free(cfg);
    return -1;
}

static char *home_kubeconfig(void)
{
    const char *home = getenv("HOME");
    if (!home || !*home) {
        struct passwd *pw = getpwuid(getuid());
        home = pw ? pw->pw_dir : "/";
    }
    return kube_strdup_printf("%s/.kube/config", home);
}

static int load_any(const char *kubeconfig_path, const char *context, struct kube_config **out, char **errmsg)
{
    *out = NULL;
    if (kubeconfig_path && *kubeconfig_path)
        return load_path(kubeconfig_path, context, out, errmsg);
    const char *env = getenv("KUBECONFIG");
    if (env && *env)
        return load_list(env, context, out, errmsg);
    const char *host = getenv("KUBERNETES_SERVICE_HOST");
    if (host && *host && !(context && *context))
        return kube_config_in_cluster(NULL, out, errmsg);
    char *home = home_kubeconfig();
    if (!home)
        return kube_set_err(errmsg, "out of memory");
    if (access(home, F_OK) != 0) {
        kube_set_err(errmsg,
                     "no Kubernetes configuration: %s does not exist, KUBECONFIG is not set, "
                     "and this is not a pod (KUBERNETES_SERVICE_HOST unset)",
                     home);
        free(home);
        return -1;
    }
    int rc = load_path(home, context, out, errmsg);
    free(home);
    return rc;
}

int kube_config_load(const char *kubeconfig_path, const char *context, struct kube_config **out, char **errmsg)
{
    return Kube_config_one_line(load_any(kubeconfig_path, context, out, errmsg), errmsg);
}
