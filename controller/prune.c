/* prune.c - what the caches keep of each object: only the fields the
 * reconcile reads (metadata, and for pods/Jobs the status fields that decide
 * the MPIJob's status), so 1,000 jobs fit in a few MB. */
#include "cache.h"
#include "jsonutil.h"

#include <string.h>

static void prune_metadata(json_t *obj)
{
    json_t *md = json_object_get(obj, "metadata");
    json_object_del(md, "managedFields");
    json_object_del(md, "selfLink");
    json_t *ann = json_object_get(md, "annotations");
    json_object_del(ann, "kubectl.kubernetes.io/last-applied-configuration");
    if (json_is_object(ann) && json_object_size(ann) == 0)
        json_object_del(md, "annotations");
}

void prune_generic(json_t *obj)
{
    prune_metadata(obj);
}

void prune_meta_only(json_t *obj)
{
    prune_metadata(obj);
    const char *k;
    void *tmp;
    json_t *v;
    json_object_foreach_safe(obj, tmp, k, v) {
        if (strcmp(k, "metadata") != 0 && strcmp(k, "rules") != 0)
            json_object_del(obj, k);
    }
}

/* Keeps name/state.terminated/lastState.terminated of each container status. */
static json_t *slim_statuses(json_t *arr)
{
    json_t *out = json_array();
    size_t i;
    json_t *s;
    json_array_foreach(arr, i, s) {
        json_t *o = json_pack("{s:O*}", "name", json_object_get(s, "name"));
        json_t *t = ju_at(s, "state", "terminated");
        if (t)
            json_object_set_new(o, "state", json_pack("{s:O}", "terminated", t));
        json_t *lt = ju_at(s, "lastState", "terminated");
        if (lt)
            json_object_set_new(o, "lastState", json_pack("{s:O}", "terminated", lt));
        json_array_append_new(out, o);
    }
    return out;
}

void prune_pod(json_t *obj)
{
    prune_metadata(obj);
    json_object_del(obj, "spec");
    json_t *st = json_object_get(obj, "status");
    if (!json_is_object(st))
        return;
    const char *keep[] = { "phase", "reason", "message", "startTime", NULL };
    json_t *slim = json_object();
    for (int i = 0; keep[i]; i++)
        if (json_object_get(st, keep[i]))
            json_object_set(slim, keep[i], json_object_get(st, keep[i]));
    json_t *conds = json_array(), *c;
    size_t i;
    json_array_foreach(json_object_get(st, "conditions"), i, c) {
        json_array_append_new(conds, json_pack("{s:O*, s:O*, s:O*}", "type", json_object_get(c, "type"),
                                               "status", json_object_get(c, "status"), "lastTransitionTime",
                                               json_object_get(c, "lastTransitionTime")));
    }
    json_object_set_new(slim, "conditions", conds);
    json_object_set_new(slim, "containerStatuses", slim_statuses(json_object_get(st, "containerStatuses")));
    json_object_set_new(slim, "initContainerStatuses", slim_statuses(json_object_get(st, "initContainerStatuses")));
    json_object_set_new(obj, "status", slim);
}

void prune_job(json_t *obj)
{
    prune_metadata(obj);
    json_t *spec = json_object_get(obj, "spec");
    if (json_is_object(spec))
        json_object_set_new(obj, "spec", json_pack("{s:O*}", "suspend", json_object_get(spec, "suspend")));
}
