/* crds.c - MPIJob and PodGroup descriptors, and the discovery of the MPIJob version the
 * cluster serves (docs/controller.md, "API versions"). */
#include "crds.h"
#include "kube/json.h"
#include "kube/util.h"

#include <stdlib.h>
#include <string.h>

#define MPIJOB_GROUP_PATH "/apis/kubeflow.org"

const struct kube_resource MPIJOB_RES_V2BETA1 = { "kubeflow.org", "v2beta1", "mpijobs", "MPIJob", 1 };
const struct kube_resource MPIJOB_RES_V1ALPHA2 = { "kubeflow.org", "v1alpha2", "mpijobs", "MPIJob", 1 };
const struct kube_resource PODGROUP_RES_VOLCANO = { "scheduling.volcano.sh", "v1beta1", "podgroups", "PodGroup", 1 };
const struct kube_resource PODGROUP_RES_SCHED_PLUGINS = { "scheduling.x-k8s.io", "v1alpha1", "podgroups", "PodGroup", 1 };

/* Preference order when the cluster serves several versions. */
static const struct kube_resource *const mpijob_versions[] = { &MPIJOB_RES_V2BETA1, &MPIJOB_RES_V1ALPHA2 };

const struct kube_resource *crds_mpijob_resource(const char *api_version)
{
    if (api_version && strcmp(api_version, "kubeflow.org/v1alpha2") == 0)
        return &MPIJOB_RES_V1ALPHA2;
    return &MPIJOB_RES_V2BETA1;
}

const struct kube_resource *crds_podgroup_resource(const char *api_version)
{
    if (api_version && strncmp(api_version, "scheduling.x-k8s.io/", 20) == 0)
        return &PODGROUP_RES_SCHED_PLUGINS;
    return &PODGROUP_RES_VOLCANO;
}

const struct kube_resource *crds_podgroup_resource_for_scheduler(const char *gang)
{
    return gang && strcmp(gang, "volcano") != 0 ? &PODGROUP_RES_SCHED_PLUGINS : &PODGROUP_RES_VOLCANO;
}

/* GET path: the document, NULL with *absent = 1 on 404, NULL with *errmsg otherwise. */
static json_t *discovery_get(struct kube_client *c, const char *path, int *absent, char **errmsg)
{
    struct kube_error e = KUBE_ERROR_INIT;
    json_t *doc = kube_request(c, "GET", path, NULL, NULL, NULL, &e);
    *absent = !doc && e.reason == KUBE_NOT_FOUND;
    if (!doc && !*absent)
        kube_set_err(errmsg, "API discovery: GET %s: %s", path, e.message ? e.message : "error");
    kube_error_clear(&e);
    return doc;
}

int crds_mpijob_discover(struct kube_client *c, const struct kube_resource **out, char **errmsg)
{
    int absent = 0;
    json_t *group = discovery_get(c, MPIJOB_GROUP_PATH, &absent, errmsg);
    if (!group)
        return absent ? 0 : -1;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < sizeof mpijob_versions / sizeof *mpijob_versions; i++) {
        const struct kube_resource *r = mpijob_versions[i];
        if (!kube_json_find(kube_json_at(group, "versions"), "version", r->version))
            continue;
        char *path = kube_strdup_printf(MPIJOB_GROUP_PATH "/%s", r->version);
        if (!path) {
            rc = kube_set_err(errmsg, "API discovery: out of memory");
            break;
        }
        json_t *list = discovery_get(c, path, &absent, errmsg);
        free(path);
        if (!list && !absent)
            rc = -1;
        else if (list && kube_json_find(kube_json_at(list, "resources"), "name", r->resource)) {
            *out = r;
            rc = 1;
        }
        json_decref(list);
    }
    json_decref(group);
    return rc;
}
