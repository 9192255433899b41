/* status_pruned.c - the top-level status keys the API server dropped from a status update
 * (a CRD whose schema lacks them), so that a sync does not write them again and again. */
#include "status_pruned.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define PRUNED_MAX 32
static pthread_mutex_t pruned_mu = PTHREAD_MUTEX_INITIALIZER;
static char *pruned[PRUNED_MAX];
static size_t n_pruned;

static int pruned_has(const char *k)
{
    for (size_t i = 0; i < n_pruned; i++)
        if (strcmp(pruned[i], k) == 0)
            return 1;
    return 0;
}

void status_pruned_note(const json_t *sent, const json_t *stored)
{
    const char *k;
    json_t *v;
    if (!json_is_object(sent) || !json_is_object(stored))
        return;
    pthread_mutex_lock(&pruned_mu);
    json_object_foreach((json_t *)sent, k, v) {
        if (json_is_null(v) || json_object_get(stored, k) || pruned_has(k) || n_pruned == PRUNED_MAX)
            continue;
        char *d = strdup(k);
        if (d)
            pruned[n_pruned++] = d;
    }
    pthread_mutex_unlock(&pruned_mu);
}

json_t *status_pruned_strip(json_t *status)
{
    pthread_mutex_lock(&pruned_mu);
    json_t *out = NULL;
    for (size_t i = 0; i < n_pruned; i++)
        if (json_object_get(status, pruned[i])) {
            if (!out)
                out = json_copy(status);
            if (out)
                json_object_del(out, pruned[i]);
        }
    pthread_mutex_unlock(&pruned_mu);
    return out ? out : json_incref(status);
}

void status_pruned_reset(void)
{
    pthread_mutex_lock(&pruned_mu);
    for (size_t i = 0; i < n_pruned; i++)
        free(pruned[i]);
    n_pruned = 0;
    pthread_mutex_unlock(&pruned_mu);
}
