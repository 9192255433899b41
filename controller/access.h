/* access.h - what the operator's own RBAC allows, found out at start with
 * SelfSubjectAccessReviews, and the update (PUT) that stands in for a merge
 * patch where patch is not granted (upstream's ClusterRole grants update only). */
#ifndef CONTROLLER_ACCESS_H
#define CONTROLLER_ACCESS_H

#include <jansson.h>
#include "kube/client.h"

struct access_rights {
    int launcher_rbac; /* may create serviceaccounts, roles and rolebindings */
    int patch_configmaps, patch_jobs;
    int launcher_log;    /* may get, create and patch configmaps: the launcher Role may grant them for
                       * <job>-log (RBAC escalation check); without, the Role leaves them out */
    int launcher_events; /* may list events: the launcher Role may grant it (mpi-agent names a
                          * preempted worker's preemptor from the scheduler's Event); else left out */
};

/* Asks the API server (SSARs in ns, NULL = all namespaces) and fills a; a review that cannot
 * be made counts as allowed (as before the probe). Logs one line naming what is missing and
 * the mode used. Returns the number of refused checks. */
int access_probe(struct kube_client *c, const char *ns, struct access_rights *a);

/* The line access_probe logs for a (new string, NULL when out of memory). */
char *access_describe(const struct access_rights *a);

/* Applies merge patch (RFC 7386) to target in place. */
void access_merge_patch(json_t *target, const json_t *patch);

/* Read-modify-write instead of a merge patch: reads the object through a list with
 * fieldSelector metadata.name=name (list, not get: upstream grants no get on these), applies
 * patch, PUTs it at the resourceVersion the patch carries (else the one read): Conflict when
 * it moved. Returns the stored object, or NULL with err (NotFound when absent). */
json_t *access_update_merge(struct kube_client *c, const struct kube_resource *r, const char *ns, const char *name,
                            const json_t *patch, struct kube_error *err);

#endif
