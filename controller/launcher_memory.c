/* launcher_memory.c - remembered launcher termination records (see launcher_memory.h). */
#include "launcher_memory.h"
#include "kind.h"
#include "kube/json.h"
#include "kube/util.h"
#include "mpijob.h"
#include "prune.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct launcher_memory {
    pthread_mutex_t mu;
    json_t *pods; /* "ns/job" -> pruned launcher pod */
};

struct launcher_memory *launcher_memory_new(void)
{
    struct launcher_memory *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->pods = json_object();
    if (!m->pods) {
        free(m);
        return NULL;
    }
    pthread_mutex_init(&m->mu, NULL);
    return m;
}

/* 1 when one of statuses has terminated (state or lastState) with a non-zero exit code, or with
 * any exit code when any_exit. */
static int has_termination(const json_t *statuses, int any_exit)
{
    size_t i;
    json_t *s;
    json_array_foreach(statuses, i, s) {
        json_t *t = kube_json_at(s, "state", "terminated");
        json_t *l = kube_json_at(s, "lastState", "terminated");
        if ((t && (any_exit || kube_json_at_int(t, 0, "exitCode") != 0)) ||
            (l && (any_exit || kube_json_at_int(l, 0, "exitCode") != 0)))
            return 1;
    }
    return 0;
}

int launcher_memory_observe(struct launcher_memory *m, const char *key, const json_t *pod)
{
    const char *role = kube_json_at_str(pod, "metadata", "labels", LBL_T_ROLE);
    if (!m || !key || !role || strcmp(role, "launcher") != 0 || !kube_obj_name(pod))
        return 0;
    if (!has_termination(kube_json_at(pod, "status", "initContainerStatuses"), 0) &&
        !has_termination(kube_json_at(pod, "status", "containerStatuses"), 1))
        return 0;
    json_t *copy = json_deep_copy(pod);
    if (!copy)
        return 1;
    prune_pod(copy);
    const char *ct = kube_json_at_str(copy, "metadata", "creationTimestamp");
    pthread_mutex_lock(&m->mu);
    json_t *old = json_object_get(m->pods, key);
    const char *oct = kube_json_at_str(old, "metadata", "creationTimestamp");
    int same = old && strcmp(kube_obj_name(old) ?: "", kube_obj_name(copy)) == 0;
    /* RFC 3339 UTC timestamps of one format compare as strings */
    if (!old || same || !oct || (ct && strcmp(ct, oct) >= 0))
        json_object_set(m->pods, key, copy);
    pthread_mutex_unlock(&m->mu);
    json_decref(copy);
    return 1;
}

json_t *launcher_memory_get(struct launcher_memory *m, const char *key)
{
    if (!m)
        return NULL;
    pthread_mutex_lock(&m->mu);
    json_t *p = json_deep_copy(json_object_get(m->pods, key));
    pthread_mutex_unlock(&m->mu);
    return p;
}

void launcher_memory_forget(struct launcher_memory *m, const char *key)
{
    if (!m)
        return;
    pthread_mutex_lock(&m->mu);
    json_object_del(m->pods, key);
    pthread_mutex_unlock(&m->mu);
}

void launcher_memory_free(struct launcher_memory *m)
{
    if (!m)
        return;
    json_decref(m->pods);
    pthread_mutex_destroy(&m->mu);
    free(m);
}
