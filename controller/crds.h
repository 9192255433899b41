/* crds.h - the custom resources the operator works with: MPIJob (kubeflow.org, v2beta1 or
 * v1alpha2, whichever the cluster serves: API discovery at start) and PodGroup (Volcano's or
 * the scheduler-plugins'). lib/ knows none of them; their descriptors live here. */
#ifndef CONTROLLER_CRDS_H
#define CONTROLLER_CRDS_H

#include "kube/client.h"
#include "kube/resource.h"

extern const struct kube_resource MPIJOB_RES_V2BETA1;         /* kubeflow.org/v2beta1 mpijobs */
extern const struct kube_resource MPIJOB_RES_V1ALPHA2;        /* kubeflow.org/v1alpha2 mpijobs */
extern const struct kube_resource PODGROUP_RES_VOLCANO;       /* scheduling.volcano.sh/v1beta1 podgroups */
extern const struct kube_resource PODGROUP_RES_SCHED_PLUGINS; /* scheduling.x-k8s.io/v1alpha1 podgroups */

/* The MPIJob descriptor of an object's apiVersion ("kubeflow.org/v1alpha2" -> v1alpha2);
 * v2beta1 for anything else (NULL included). Never NULL. */
const struct kube_resource *crds_mpijob_resource(const char *api_version);
/* The PodGroup descriptor of an object's apiVersion: scheduler-plugins' for
 * "scheduling.x-k8s.io/...", Volcano's otherwise. Never NULL. */
const struct kube_resource *crds_podgroup_resource(const char *api_version);
/* The PodGroup descriptor for --gang-scheduling=NAME: Volcano's for "volcano", the
 * scheduler-plugins' for any other name. Never NULL. */
const struct kube_resource *crds_podgroup_resource_for_scheduler(const char *gang);

/* API discovery: which MPIJob version the cluster serves, v2beta1 preferred when both are
 * (GET /apis/kubeflow.org, then the version's resource list must name "mpijobs").
 * 1 with *out set; 0 when no version serves mpijobs (the CRD is not installed yet);
 * -1 with *errmsg (new string) when the API server could not be asked. */
int crds_mpijob_discover(struct kube_client *c, const struct kube_resource **out, char **errmsg);

#endif
