/* kind.c - the table of resource kinds (see kind.h). */
#include "kind.h"
#include "crds.h"
#include "kube/json.h"
#include "kube/util.h"
#include "mpijob.h"
#include "prune.h"
#include "reconcile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SLOT(f) offsetof(struct observed, f)

static const struct kind KINDS[RK__COUNT] = {
    [RK_CONFIGMAP] = { "configmaps", &KUBE_RES_CONFIGMAPS, KR_OWNED, prune_compared, SLOT(configmap), "-config", NULL,
                       "data" },
    [RK_SERVICEACCOUNT] = { "serviceaccounts", &KUBE_RES_SERVICEACCOUNTS, KR_OWNED, prune_meta_only, SLOT(sa), "-launcher",
                            NULL, NULL },
    [RK_ROLE] = { "roles", &KUBE_RES_ROLES, KR_OWNED, prune_compared, SLOT(role), "-launcher", NULL, "rules" },
    [RK_ROLEBINDING] = { "rolebindings", &KUBE_RES_ROLEBINDINGS, KR_OWNED, prune_meta_only, SLOT(rolebinding), "-launcher",
                         NULL, NULL },
    [RK_SECRET] = { "secrets", &KUBE_RES_SECRETS, KR_OWNED, prune_meta_only, SLOT(secret), "-ssh", NULL, NULL },
    /* the headless Service: <job> as upstream v2beta1, <job>-worker for v1alpha2 */
    [RK_SERVICE] = { "services", &KUBE_RES_SERVICES, KR_OWNED, prune_meta_only, SLOT(service), "", "-worker", NULL },
    [RK_POD] = { "pods", &KUBE_RES_PODS, KR_GROUP, prune_pod, SLOT(pods), NULL, NULL, NULL },
    [RK_JOB] = { "jobs", &KUBE_RES_JOBS, KR_OWNED, prune_job, SLOT(launcher_job), "-launcher", NULL, NULL },
    [RK_PODGROUP] = { "podgroups", &PODGROUP_RES_VOLCANO, KR_OWNED, prune_meta_only, SLOT(podgroup), "", NULL, NULL },
    [RK_MPIJOB] = { "mpijobs", &MPIJOB_RES_V2BETA1, KR_JOB, prune_generic, SLOT(job), NULL, NULL, NULL },
    [RK_EVENT] = { "events", &KUBE_RES_EVENTS, KR_NONE, NULL, 0, NULL, NULL, NULL },
};

const struct kind *kind_of(enum res_kind r) { return (unsigned)r < RK__COUNT ? &KINDS[r] : &KINDS[RK_EVENT]; }

const struct kube_resource *kind_resource(enum res_kind r, const char *api_version)
{
    if (r == RK_PODGROUP)
        return crds_podgroup_resource(api_version);
    if (r == RK_MPIJOB)
        return crds_mpijob_resource(api_version);
    return kind_of(r)->res;
}

char *kind_object_name(enum res_kind r, const char *job, int v1alpha2)
{
    const struct kind *k = kind_of(r);
    if (k->read != KR_OWNED || !job)
        return NULL;
    const char *suffix = v1alpha2 && k->suffix_v1alpha2 ? k->suffix_v1alpha2 : k->suffix;
    char *s = NULL;
    return asprintf(&s, "%s%s", job, suffix) < 0 ? NULL : s;
}

/* "ns/value" (new string), NULL when value is. */
static char *group_key(const json_t *obj, const char *value)
{
    const char *ns = kube_json_at_str(obj, "metadata", "namespace");
    char *s = NULL;
    if (!value || asprintf(&s, "%s/%s", ns ? ns : "", value) < 0)
        return NULL;
    return s;
}

char *kind_owned_group(const json_t *obj)
{
    return group_key(obj, kube_json_at_str(obj, "metadata", "labels", LBL_T_JOB_NAME));
}

char *kind_job_group(const json_t *obj) { return group_key(obj, kube_obj_name(obj)); }

const char *kind_name(enum res_kind r) { return r < RK__COUNT ? kind_of(r)->resource : "?"; }
