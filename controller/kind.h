/* kind.h - the one table of the resource kinds the controller handles: for
 * each, its API resource, whether an informer caches it and what that cache
 * keeps of it (pruning), the slot of struct observed a sync reads it into, and
 * the name suffix of the one object of that kind an MPIJob owns and the field
 * a sync keeps up to date in it. Adding a kind
 * is a row here (plus its enum res_kind value, its objects_*.c builder and its
 * slot in struct observed). */
#ifndef CONTROLLER_KIND_H
#define CONTROLLER_KIND_H

#include <stddef.h>
#include <jansson.h>
#include "kube/informer.h"
#include "kube/resource.h"
#include "res_kind.h"

/* How a kind's objects reach a sync (struct observed). */
enum kind_read {
    KR_NONE,  /* not cached (Events) */
    KR_JOB,   /* the MPIJob itself: cached by its own name */
    KR_OWNED, /* the one object <job><suffix> the job owns */
    KR_GROUP, /* every object labelled with the job (pods) */
};

struct kind {
    const char *resource;            /* the API resource ("configmaps"), for logs */
    const struct kube_resource *res; /* its API resource (MPIJobs, PodGroups: see kind_resource) */
    enum kind_read read;
    kube_informer_transform_fn prune; /* what its cache keeps (NULL = everything) */
    size_t slot;                      /* offset of its json_t * in struct observed (read != KR_NONE) */
    const char *suffix;               /* KR_OWNED: the object's name is <job><suffix> */
    const char *suffix_v1alpha2;      /* ... for a v1alpha2 MPIJob, when it differs (NULL = the same) */
    const char *compared;             /* KR_OWNED: the field the reconcile compares with the desired
                                       * object and merge-patches when it differs (kept by the pruning);
                                       * NULL = an existing object is left as it is */
};

/* The row of kind r (r < RK__COUNT). */
const struct kind *kind_of(enum res_kind r);
/* The API resource of an object of kind r whose apiVersion is api_version (may be NULL): for
 * MPIJobs and PodGroups the version or API group it names (crds.h), else the table's. */
const struct kube_resource *kind_resource(enum res_kind r, const char *api_version);
/* The name of the object of kind r (KR_OWNED) that job owns (new string), NULL when r owns no
 * single object or out of memory. */
char *kind_object_name(enum res_kind r, const char *job, int v1alpha2);
/* The informer group of an object: "ns/<its job-name label>" (owned objects) or "ns/<its name>"
 * (MPIJobs); new string, or NULL when it has none. */
char *kind_owned_group(const json_t *obj);
char *kind_job_group(const json_t *obj);
/* Name of a resource kind ("configmaps", "pods", ...), for logs. */
const char *kind_name(enum res_kind r);

#endif
