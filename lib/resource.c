/* resource.c - resource descriptors and API path building. */
#include "kube/resource.h"
#include "kube/url.h"
#include "kube/util.h"

#include <stdlib.h>
#include <string.h>

const struct kube_resource KUBE_RES_PODS = { "", "v1", "pods", "Pod", 1 };
const struct kube_resource KUBE_RES_SERVICES = { "", "v1", "services", "Service", 1 };
const struct kube_resource KUBE_RES_CONFIGMAPS = { "", "v1", "configmaps", "ConfigMap", 1 };
const struct kube_resource KUBE_RES_SECRETS = { "", "v1", "secrets", "Secret", 1 };
const struct kube_resource KUBE_RES_SERVICEACCOUNTS = { "", "v1", "serviceaccounts", "ServiceAccount", 1 };
const struct kube_resource KUBE_RES_EVENTS = { "", "v1", "events", "Event", 1 };
const struct kube_resource KUBE_RES_NAMESPACES = { "", "v1", "namespaces", "Namespace", 0 };
const struct kube_resource KUBE_RES_JOBS = { "batch", "v1", "jobs", "Job", 1 };
const struct kube_resource KUBE_RES_ROLES = { "rbac.authorization.k8s.io", "v1", "roles", "Role", 1 };
const struct kube_resource KUBE_RES_ROLEBINDINGS = { "rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding", 1 };
const struct kube_resource KUBE_RES_LEASES = { "coordination.k8s.io", "v1", "leases", "Lease", 1 };

/* A path segment must be non-empty and not "." or ".." (the server would normalise them). */
static int bad_segment(const char *s) { return !s || !*s || !strcmp(s, ".") || !strcmp(s, ".."); }

char *kube_resource_path(const struct kube_resource *r, const char *ns, const char *name, const char *subresource)
{
    if (!r || bad_segment(r->version) || bad_segment(r->resource))
        return NULL;
    if ((name && bad_segment(name)) || (ns && bad_segment(ns)) || (subresource && bad_segment(subresource)))
        return NULL;
    if (subresource && !name)
        return NULL;
    char *ens = ns && r->namespaced ? kube_url_escape(ns) : NULL;
    char *ename = name ? kube_url_escape(name) : NULL;
    char *esub = subresource ? kube_url_escape(subresource) : NULL;
    char *out = NULL;
    if ((ns && r->namespaced && !ens) || (name && !ename) || (subresource && !esub))
        goto done;
    int grouped = r->group && *r->group;
    out = kube_strdup_printf("%s%s/%s%s%s/%s%s%s%s%s", grouped ? "/apis/" : "/api", grouped ? r->group : "", r->version,
                             ens ? "/namespaces/" : "", ens ? ens : "", r->resource, ename ? "/" : "", ename ? ename : "",
                             esub ? "/" : "", esub ? esub : "");
done:
    free(ens);
    free(ename);
    free(esub);
    return out;
}

char *kube_resource_api_version(const struct kube_resource *r)
{
    if (!r)
        return NULL;
    if (r->group && *r->group)
        return kube_strdup_printf("%s/%s", r->group, r->version);
    return strdup(r->version);
}
