/* token.c - a request's credential: the bearer token (static, or read from tokenFile and re-read
 * when the file changes: projected service-account tokens are rotated by kubelet) or the exec
 * plugin's (credplugin.c), and the Authorization and Impersonate-* header lines. */
#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "config_int.h"
#include "credplugin.h"
#include "kube/util.h"

struct kube_token_state {
    pthread_mutex_t mu;
    char *token;
    struct timespec mtime;
    dev_t dev;
    ino_t ino;
    off_t size;
};

struct kube_token_state *Kube_token_state_new(void)
{
    struct kube_token_state *t = calloc(1, sizeof *t);
    if (t && pthread_mutex_init(&t->mu, NULL)) {
        free(t);
        return NULL;
    }
    return t;
}

void Kube_token_state_free(struct kube_token_state *t)
{
    if (!t)
        return;
    if (t->token) {
        explicit_bzero(t->token, strlen(t->token));
        free(t->token);
    }
    pthread_mutex_destroy(&t->mu);
    free(t);
}

/* Re-reads the token file into t (caller holds t->mu). 0 ok, -1 with *errmsg. */
static int reload(struct kube_token_state *t, const char *path, const struct stat *st, char **errmsg)
{
    char *data = NULL;
    size_t len = 0;
    if (kube_read_file(path, 1 << 20, &data, &len, errmsg))
        return -1;
    size_t start = 0;
    while (start < len && strchr(" \t\r\n", data[start]))
        start++;
    while (len > start && strchr(" \t\r\n", data[len - 1]))
        len--;
    if (len == start) {
        free(data);
        return kube_set_err(errmsg, "token file %s is empty", path);
    }
    memmove(data, data + start, len - start);
    data[len - start] = '\0';
    if (t->token) {
        explicit_bzero(t->token, strlen(t->token));
        free(t->token);
    }
    t->token = data;
    t->mtime = st->st_mtim;
    t->dev = st->st_dev;
    t->ino = st->st_ino;
    t->size = st->st_size;
    return 0;
}

char *kube_config_token(const struct kube_config *cfg, char **errmsg)
{
    if (!cfg->token_file)
        return cfg->token ? strdup(cfg->token) : NULL;
    struct kube_token_state *t = cfg->tok;
    struct stat st;
    if (stat(cfg->token_file, &st) != 0) {
        kube_set_err(errmsg, "token file %s: %m", cfg->token_file);
        return NULL;
    }
    char *out = NULL;
    pthread_mutex_lock(&t->mu);
    int changed = !t->token || st.st_mtim.tv_sec != t->mtime.tv_sec || st.st_mtim.tv_nsec != t->mtime.tv_nsec ||
                  st.st_ino != t->ino || st.st_dev != t->dev || st.st_size != t->size;
    if (!changed || reload(t, cfg->token_file, &st, errmsg) == 0)
        out = strdup(t->token);
    pthread_mutex_unlock(&t->mu);
    return out;
}

int kube_config_credential(const struct kube_config *cfg, struct kube_credential *out, char **errmsg)
{
    memset(out, 0, sizeof *out);
    if (cfg->token || cfg->token_file) { /* a token in the kubeconfig wins over exec, as in client-go */
        out->token = kube_config_token(cfg, errmsg);
        return out->token ? 0 : -1;
    }
    if (cfg->exec)
        return Kube_exec_plugin_credential(cfg->exec, cfg, out, errmsg);
    return 0;
}

int kube_config_credential_rejected(const struct kube_config *cfg, const struct kube_credential *used)
{
    if (cfg->token || cfg->token_file || !cfg->exec)
        return 0;
    return Kube_exec_plugin_rejected(cfg->exec, used);
}

/* Appends "Name: value\r\n" to *buf; -1 on allocation failure. Values holding CR or LF are
 * refused (they would split the header). */
static int add_header(char **buf, const char *name, const char *value)
{
    if (strpbrk(value, "\r\n"))
        return -1;
    char *n = kube_strdup_printf("%s%s: %s\r\n", *buf, name, value);
    if (!n)
        return -1;
    explicit_bzero(*buf, strlen(*buf));
    free(*buf);
    *buf = n;
    return 0;
}

/* Impersonate-Extra-<key>: the key percent-encoded as client-go does for header names. */
static char *extra_name(const char *key, size_t len)
{
    char *out = malloc(len * 3 + sizeof "Impersonate-Extra-"), *o = out;
    if (!out)
        return NULL;
    o += sprintf(o, "Impersonate-Extra-");
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)key[i];
        if (isalnum(ch) || strchr("-_.~!#$&'*+^`|", ch))
            *o++ = (char)ch;
        else
            o += sprintf(o, "%%%02X", ch);
    }
    *o = '\0';
    return out;
}

char *kube_config_auth_headers(const struct kube_config *cfg, const struct kube_credential *cred)
{
    char *h = strdup(""), *bearer = NULL;
    int bad = !h;
    if (!bad && cred && cred->token) {
        bearer = kube_strdup_printf("Bearer %s", cred->token);
        bad = !bearer || add_header(&h, "Authorization", bearer);
    }
    if (bearer) {
        explicit_bzero(bearer, strlen(bearer));
        free(bearer);
    }
    if (!bad && cfg->as_user)
        bad = add_header(&h, "Impersonate-User", cfg->as_user);
    if (!bad && cfg->as_uid)
        bad = add_header(&h, "Impersonate-Uid", cfg->as_uid);
    for (size_t i = 0; !bad && cfg->as_groups && cfg->as_groups[i]; i++)
        bad = add_header(&h, "Impersonate-Group", cfg->as_groups[i]);
    for (size_t i = 0; !bad && cfg->as_extra && cfg->as_extra[i]; i++) {
        const char *kv = cfg->as_extra[i], *eq = strchr(kv, '=');
        char *name = eq ? extra_name(kv, (size_t)(eq - kv)) : NULL;
        bad = !name || add_header(&h, name, eq + 1);
        free(name);
    }
    if (bad && h) {
        explicit_bzero(h, strlen(h));
        free(h);
        h = NULL;
    }
    return h;
}
