/* token.c - per-config private state: the bearer token: static, or read from tokenFile and re-read when
 * the file changes (projected service-account tokens are rotated by kubelet). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "config_int.h"
#include "kube/util.h"

struct kube_token_state {
    pthread_mutex_t mu;
    char *token;
    struct timespec mtime;
    dev_t dev;
    ino_t ino;
    off_t size;
};

struct kube_token_state *kube_token_state_new(void)
{
    struct kube_token_state *t = calloc(1, sizeof *t);
    if (t && pthread_mutex_init(&t->mu, NULL)) {
        free(t);
        return NULL;
    }
    return t;
}

void kube_token_state_free(struct kube_token_state *t)
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
        kube_set_err(errmsg, "token file %s is empty", path);
        return -1;
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
