/* resource.h - resource descriptors (group, version, plural) and API path building:
 * /api/v1/namespaces/ns/pods/name/status, /apis/batch/v1/jobs, ... */
#ifndef KUBE_RESOURCE_H
#define KUBE_RESOURCE_H

struct kube_resource {
    const char *group;    /* "" for the core group */
    const char *version;  /* "v1", "v1beta1" */
    const char *resource; /* plural, lower case: "pods" */
    const char *kind;     /* "Pod" (for building objects) */
    int namespaced;       /* 1 if the resource lives in namespaces */
};

extern const struct kube_resource KUBE_RES_PODS;            /* v1 pods */
extern const struct kube_resource KUBE_RES_SERVICES;        /* v1 services */
extern const struct kube_resource KUBE_RES_CONFIGMAPS;      /* v1 configmaps */
extern const struct kube_resource KUBE_RES_SECRETS;         /* v1 secrets */
extern const struct kube_resource KUBE_RES_SERVICEACCOUNTS; /* v1 serviceaccounts */
extern const struct kube_resource KUBE_RES_EVENTS;          /* v1 events */
extern const struct kube_resource KUBE_RES_NAMESPACES;      /* v1 namespaces (cluster-scoped) */
extern const struct kube_resource KUBE_RES_JOBS;            /* batch/v1 jobs */
extern const struct kube_resource KUBE_RES_ROLES;           /* rbac.authorization.k8s.io/v1 roles */
extern const struct kube_resource KUBE_RES_ROLEBINDINGS;    /* rbac.authorization.k8s.io/v1 rolebindings */
extern const struct kube_resource KUBE_RES_LEASES;          /* coordination.k8s.io/v1 leases */
/* Custom resources (MPIJob, PodGroup) are the programs' own: controller/crds.h. */

/* Returns the escaped path for r: collection when name is NULL, namespaced when ns is non-NULL
 * and r->namespaced (ns NULL on a namespaced resource = all namespaces), with an optional
 * subresource ("status", "exec", "log"). New string, or NULL on allocation failure/bad input. */
char *kube_resource_path(const struct kube_resource *r, const char *ns, const char *name, const char *subresource);
/* Returns "group/version" or "version" for the core group (apiVersion field); new string. */
char *kube_resource_api_version(const struct kube_resource *r);

#endif
