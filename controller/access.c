/* access.c - the start-up RBAC probe (SelfSubjectAccessReviews: may the operator
 * give launchers a Role, and patch ConfigMaps and Jobs?) and the list+PUT that
 * replaces a merge patch where only update is granted. See access.h. */
#include "access.h"
#include "kube/json.h"
#include "kube/util.h"
#include "kube/log.h"
#include "kube/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct kube_resource RES_SSAR = { "authorization.k8s.io", "v1", "selfsubjectaccessreviews",
                                               "SelfSubjectAccessReview", 0 };

/* 1 allowed (or not known), 0 refused. */
static int can(struct kube_client *c, const char *ns, const char *verb, const char *group, const char *resource)
{
    json_t *review = json_pack("{s:s, s:s, s:{s:{s:s, s:s, s:s, s:s}}}", "apiVersion", "authorization.k8s.io/v1", "kind",
                               "SelfSubjectAccessReview", "spec", "resourceAttributes", "namespace", ns ? ns : "", "verb",
                               verb, "group", group, "resource", resource);
    struct kube_error err = KUBE_ERROR_INIT;
    json_t *res = review ? kube_create(c, &RES_SSAR, NULL, review, &err) : NULL;
    int ok = 1;
    if (res)
        ok = kube_json_at_bool(kube_json_at(res, "status"), 0, "allowed");
    else
        KLOG_WARN("cannot ask whether the operator may %s %s (taken as allowed): %s", verb, resource,
                  err.message ? err.message
                  : review    ? kube_reason_name(err.reason)
                              : "out of memory");
    json_decref(res);
    json_decref(review);
    kube_error_clear(&err);
    return ok;
}

char *access_describe(const struct access_rights *a)
{
    if (a->launcher_rbac && a->patch_configmaps && a->patch_jobs)
        return strdup("RBAC: full mode: launchers get a Role for mpi-agent's API access; ConfigMaps and Jobs "
                      "are merge-patched");
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    if (!f)
        return NULL;
    fputs("RBAC: the operator's role grants no", f);
    const char *sep = " ";
    if (!a->launcher_rbac) {
        fprintf(f, "%screate on serviceaccounts, roles or rolebindings", sep);
        sep = "; no ";
    }
    if (!a->patch_configmaps || !a->patch_jobs) {
        fprintf(f, "%spatch on %s%s%s", sep, a->patch_configmaps ? "" : "configmaps",
                !a->patch_configmaps && !a->patch_jobs ? " and " : "", a->patch_jobs ? "" : "jobs");
    }
    fputs(": limited mode:", f);
    if (!a->launcher_rbac)
        fputs(" launchers run without API access (mpi-agent's no-API mode) and are created once every "
              "worker is Ready;",
              f);
    if (!a->patch_configmaps || !a->patch_jobs)
        fputs(" updates (list + PUT at the resourceVersion) instead of merge patches;", f);
    fputs(" exec-transport jobs need the full grants (deploy/)", f);
    if (fclose(f) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

int access_probe(struct kube_client *c, const char *ns, struct access_rights *a)
{
    a->launcher_rbac = can(c, ns, "create", "", "serviceaccounts") &
                       can(c, ns, "create", "rbac.authorization.k8s.io", "roles") &
                       can(c, ns, "create", "rbac.authorization.k8s.io", "rolebindings");
    a->patch_configmaps = can(c, ns, "patch", "", "configmaps");
    a->patch_jobs = can(c, ns, "patch", "batch", "jobs");
    a->launcher_log = a->launcher_rbac && a->patch_configmaps && can(c, ns, "get", "", "configmaps") &&
                      can(c, ns, "create", "", "configmaps");
    a->launcher_events = a->launcher_rbac && can(c, ns, "list", "", "events");
    if (a->launcher_rbac && !a->launcher_events)
        KLOG_INFO("RBAC: no list on events: launcher Roles get none (a preempted worker's preemptor is not named)");
    if (a->launcher_rbac && !a->launcher_log)
        KLOG_INFO("RBAC: no get or create on configmaps: launcher Roles get no access to <job>-log (the "
                  "launcher's output is not kept after its pods)");
    char *line = access_describe(a);
    KLOG_INFO("%s", line ? line : "RBAC: (out of memory describing the mode)");
    free(line);
    return !a->launcher_rbac + !a->patch_configmaps + !a->patch_jobs;
}

void access_merge_patch(json_t *target, const json_t *patch)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)patch, k, v) {
        json_t *cur = json_object_get(target, k);
        if (json_is_null(v))
            json_object_del(target, k);
        else if (json_is_object(v) && json_is_object(cur))
            access_merge_patch(cur, v);
        else if (json_is_object(v)) {
            json_t *o = json_object();
            if (o) {
                access_merge_patch(o, v);
                json_object_set_new(target, k, o);
            }
        } else
            json_object_set_new(target, k, json_deep_copy(v));
    }
}

/* The live object named name, read through a list (NULL with err; NotFound when absent). */
static json_t *read_by_list(struct kube_client *c, const struct kube_resource *r, const char *ns, const char *name,
                            struct kube_error *err)
{
    char *fs = kube_strdup_printf("metadata.name=%s", name);
    if (!fs) {
        kube_error_set(err, 0, KUBE_UNKNOWN, "out of memory");
        return NULL;
    }
    struct kube_list_opts lo = { .field_selector = fs };
    json_t *list = kube_list(c, r, ns, &lo, err);
    free(fs);
    json_t *item = json_incref(json_array_get(kube_json_at(list, "items"), 0));
    if (list && !item)
        kube_error_set(err, 404, KUBE_NOT_FOUND, "%s %s/%s not found", r->resource, ns ? ns : "", name);
    json_decref(list);
    return item;
}

json_t *access_update_merge(struct kube_client *c, const struct kube_resource *r, const char *ns, const char *name,
                            const json_t *patch, struct kube_error *err)
{
    json_t *obj = read_by_list(c, r, ns, name, err);
    if (!obj)
        return NULL;
    access_merge_patch(obj, patch);
    /* a List's items carry no apiVersion and kind */
    char *av = *r->group ? kube_strdup_printf("%s/%s", r->group, r->version) : strdup(r->version);
    json_object_set_new(obj, "apiVersion", av ? json_string(av) : json_null());
    free(av);
    json_object_set_new(obj, "kind", json_string(r->kind));
    json_t *res = kube_update(c, r, ns, name, obj, err);
    json_decref(obj);
    return res;
}
