/* prune.c - what the caches keep of each object: only the fields the
 * reconcile reads, so 1,000 jobs fit in a few MB. Owned objects keep of their
 * metadata only name, namespace, resourceVersion, deletionTimestamp and the
 * controller ownerReference's kind and uid (objects_owned_by); pods also their
 * creationTimestamp and the two labels the reconcile reads (role, replica index). Labels, annotations, uids,
 * finalizers and managedFields (~470 of a typical object's ~600 bytes) go.
 * Nothing is written back from a pruned copy: updates are built from the
 * desired object (reconcile.c ensure()). */
#include "kind.h"
#include "kube/json.h"
#include "kube/util.h"
#include "mpijob.h"
#include "prune.h"

#include <string.h>

static void prune_metadata(json_t *obj)
{
    json_t *md = kube_json_at(obj, "metadata");
    json_object_del(md, "managedFields");
    json_object_del(md, "selfLink");
    json_t *ann = kube_json_at(md, "annotations");
    json_object_del(ann, "kubectl.kubernetes.io/last-applied-configuration");
    if (json_is_object(ann) && json_object_size(ann) == 0)
        json_object_del(md, "annotations");
}

/* Replaces obj's metadata with the fields the reconcile reads: name, namespace,
 * resourceVersion, deletionTimestamp, creationTimestamp (when created is set: pods), the
 * controller reference ({kind, uid, controller}) and the labels in keep (NULL-terminated). */
static void slim_metadata(json_t *obj, const char *const *keep, int created)
{
    json_t *md = kube_json_at(obj, "metadata");
    if (!json_is_object(md))
        return;
    json_t *slim = json_object();
    static const char *const fields[] = { "name", "namespace", "resourceVersion", "deletionTimestamp", "creationTimestamp",
                                          NULL };
    for (int i = 0; fields[i] && (created || strcmp(fields[i], "creationTimestamp") != 0); i++)
        if (json_object_get(md, fields[i]))
            json_object_set(slim, fields[i], json_object_get(md, fields[i]));
    size_t i;
    json_t *r;
    json_array_foreach(kube_json_at(md, "ownerReferences"), i, r) {
        if (!kube_json_at_bool(r, 0, "controller"))
            continue;
        json_object_set_new(slim, "ownerReferences",
                            json_pack("[{s:O*, s:O*, s:b}]", "kind", kube_json_at(r, "kind"), "uid", kube_json_at(r, "uid"),
                                      "controller", 1));
        break;
    }
    json_t *labels = kube_json_at(md, "labels"), *kept = json_object();
    for (int j = 0; keep && keep[j]; j++)
        if (json_object_get(labels, keep[j]))
            json_object_set(kept, keep[j], json_object_get(labels, keep[j]));
    if (json_object_size(kept))
        json_object_set(slim, "labels", kept);
    json_decref(kept);
    json_object_set_new(obj, "metadata", slim);
}

void prune_generic(json_t *obj) { prune_metadata(obj); }

/* Slims the metadata and drops every top-level key but "metadata" and those in keep. */
static void keep_top_level(json_t *obj, const char *const *keep)
{
    slim_metadata(obj, NULL, 0);
    const char *k;
    void *tmp;
    json_t *v;
    json_object_foreach_safe(obj, tmp, k, v) {
        int kept = strcmp(k, "metadata") == 0;
        for (const char *const *p = keep; !kept && *p; p++)
            kept = strcmp(k, *p) == 0;
        if (!kept)
            json_object_del(obj, k);
    }
}

void prune_meta_only(json_t *obj)
{
    static const char *const none[] = { NULL };
    keep_top_level(obj, none);
}

void prune_compared(json_t *obj)
{
    static const char *const compared[] = { "rules", "data", NULL }; /* the compared fields of kind.c */
    keep_top_level(obj, compared);
}

/* Keeps name/state.terminated/lastState.terminated/restartCount of each container status, and
 * state.waiting with the image while a container cannot start (controller/blocked.c). */
static json_t *slim_statuses(json_t *arr)
{
    json_t *out = json_array();
    size_t i;
    json_t *s;
    json_array_foreach(arr, i, s) {
        json_t *o = json_pack("{s:O*}", "name", kube_json_at(s, "name"));
        json_t *t = kube_json_at(s, "state", "terminated"), *w = kube_json_at(s, "state", "waiting");
        const char *wr = kube_json_at_str(w, "reason");
        if (t)
            json_object_set_new(o, "state", json_pack("{s:O}", "terminated", t));
        else if (wr && strcmp(wr, "ContainerCreating") != 0 && strcmp(wr, "PodInitializing") != 0) {
            json_object_set_new(o, "state", json_pack("{s:O}", "waiting", w));
            if (kube_json_at(s, "image"))
                json_object_set(o, "image", kube_json_at(s, "image"));
        }
        json_t *lt = kube_json_at(s, "lastState", "terminated");
        if (lt)
            json_object_set_new(o, "lastState", json_pack("{s:O}", "terminated", lt));
        if (kube_json_at_int(s, 0, "restartCount") > 0) /* launcher_restart.c */
            json_object_set(o, "restartCount", kube_json_at(s, "restartCount"));
        json_array_append_new(out, o);
    }
    return out;
}

/* Sets key to arr in obj when arr is not empty; consumes arr. */
static void set_nonempty(json_t *obj, const char *key, json_t *arr)
{
    if (json_array_size(arr))
        json_object_set_new(obj, key, arr);
    else
        json_decref(arr);
}

void prune_pod(json_t *obj)
{
    static const char *const labels[] = { LBL_T_ROLE, LBL_T_INDEX, NULL };
    slim_metadata(obj, labels, 1);
    json_object_del(obj, "apiVersion");
    json_object_del(obj, "kind");
    json_object_del(obj, "spec");
    json_t *st = kube_json_at(obj, "status");
    if (!json_is_object(st))
        return;
    const char *keep[] = { "phase", "reason", "message", "startTime", NULL };
    json_t *slim = json_object();
    for (int i = 0; keep[i]; i++)
        if (json_object_get(st, keep[i]))
            json_object_set(slim, keep[i], json_object_get(st, keep[i]));
    json_t *conds = json_array(), *c;
    size_t i;
    json_array_foreach(kube_json_at(st, "conditions"), i, c) {
        json_t *o = json_pack("{s:O*, s:O*, s:O*}", "type", kube_json_at(c, "type"), "status", kube_json_at(c, "status"),
                              "lastTransitionTime", kube_json_at(c, "lastTransitionTime"));
        const char *cs = kube_json_at_str(c, "status");
        const char *ct = kube_json_at_str(c, "type");
        int disrupted = ct && cs && strcmp(ct, "DisruptionTarget") == 0 && strcmp(cs, "True") == 0;
        if (cs && (strcmp(cs, "False") == 0 || disrupted) &&
            kube_json_at(c, "reason")) { /* why not scheduled; who took it */
            json_object_set(o, "reason", kube_json_at(c, "reason"));
            if (kube_json_at(c, "message"))
                json_object_set(o, "message", kube_json_at(c, "message"));
        }
        json_array_append_new(conds, o);
    }
    set_nonempty(slim, "conditions", conds);
    set_nonempty(slim, "containerStatuses", slim_statuses(kube_json_at(st, "containerStatuses")));
    set_nonempty(slim, "initContainerStatuses", slim_statuses(kube_json_at(st, "initContainerStatuses")));
    json_object_set_new(obj, "status", slim);
}

void prune_job(json_t *obj)
{
    slim_metadata(obj, NULL, 0);
    json_object_del(obj, "apiVersion");
    json_object_del(obj, "kind");
    json_t *spec = kube_json_at(obj, "spec");
    if (!json_is_object(spec))
        return;
    json_t *slim = json_pack("{s:O*}", "suspend", kube_json_at(spec, "suspend"));
    /* the resume patch removes the node selector keys the MPIJob no longer has */
    json_t *ns = kube_json_at(spec, "template", "spec", "nodeSelector");
    if (slim && json_is_object(ns) && json_object_size(ns) > 0)
        json_object_set_new(slim, "template", json_pack("{s:{s:O}}", "spec", "nodeSelector", ns));
    json_object_set_new(obj, "spec", slim);
}
