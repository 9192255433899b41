"""Resource registry: every served resource (built-in and CRD-defined) with its
group/version/kind, scope, verbs, short names and subresources."""

ALL_VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]


class ResourceInfo:
    """One resource (plural) in one API group, possibly served at several versions."""

    def __init__(self, group, version, kind, plural, namespaced=True, short_names=None,
                 singular=None, verbs=None, subresources=(), categories=None,
                 versions=None, crd=None, list_only=False):
        self.group = group
        self.version = version                  # storage / preferred version
        self.versions = versions or [version]   # served versions
        self.kind = kind
        self.list_kind = kind + "List"
        self.plural = plural
        self.singular = singular or kind.lower()
        self.namespaced = namespaced
        self.short_names = short_names or []
        self.verbs = verbs if verbs is not None else list(ALL_VERBS)
        self.subresources = set(subresources)
        self.categories = categories
        self.crd = crd
        self.key = plural if not group else plural + "." + group

    @property
    def has_status(self):
        return "status" in self.subresources

    def api_version(self, version=None):
        v = version or self.version
        return v if not self.group else self.group + "/" + v


def _core(kind, plural, **kw):
    return ResourceInfo("", "v1", kind, plural, **kw)


BUILTINS = [
    _core("Namespace", "namespaces", namespaced=False, short_names=["ns"],
          verbs=["create", "delete", "get", "list", "patch", "update", "watch"],
          subresources=["status"]),
    _core("Pod", "pods", short_names=["po"], subresources=["status", "exec", "log", "binding"],
          categories=["all"]),
    _core("ConfigMap", "configmaps", short_names=["cm"]),
    _core("Secret", "secrets"),
    _core("Service", "services", short_names=["svc"], subresources=["status"],
          categories=["all"],
          verbs=["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]),
    _core("ServiceAccount", "serviceaccounts", short_names=["sa"], subresources=["token"]),
    _core("Event", "events", short_names=["ev"]),
    _core("Endpoints", "endpoints", short_names=["ep"], singular="endpoints"),
    _core("Node", "nodes", namespaced=False, short_names=["no"], subresources=["status"]),
    ResourceInfo("events.k8s.io", "v1", "Event", "events", short_names=["ev"]),
    ResourceInfo("batch", "v1", "Job", "jobs", subresources=["status"], categories=["all"]),
    ResourceInfo("apps", "v1", "Deployment", "deployments", short_names=["deploy"],
                 subresources=["status", "scale"], categories=["all"]),
    ResourceInfo("apps", "v1", "ReplicaSet", "replicasets", short_names=["rs"],
                 subresources=["status", "scale"], categories=["all"]),
    ResourceInfo("coordination.k8s.io", "v1", "Lease", "leases"),
    ResourceInfo("rbac.authorization.k8s.io", "v1", "Role", "roles"),
    ResourceInfo("rbac.authorization.k8s.io", "v1", "RoleBinding", "rolebindings"),
    ResourceInfo("rbac.authorization.k8s.io", "v1", "ClusterRole", "clusterroles", namespaced=False),
    ResourceInfo("rbac.authorization.k8s.io", "v1", "ClusterRoleBinding", "clusterrolebindings",
                 namespaced=False),
    ResourceInfo("apiextensions.k8s.io", "v1", "CustomResourceDefinition",
                 "customresourcedefinitions", namespaced=False, short_names=["crd", "crds"],
                 subresources=["status"]),
    ResourceInfo("authorization.k8s.io", "v1", "SelfSubjectAccessReview",
                 "selfsubjectaccessreviews", namespaced=False, verbs=["create"]),
    ResourceInfo("authorization.k8s.io", "v1", "SubjectAccessReview",
                 "subjectaccessreviews", namespaced=False, verbs=["create"]),
    ResourceInfo("authorization.k8s.io", "v1", "SelfSubjectRulesReview",
                 "selfsubjectrulesreviews", namespaced=False, verbs=["create"]),
    ResourceInfo("authentication.k8s.io", "v1", "SelfSubjectReview",
                 "selfsubjectreviews", namespaced=False, verbs=["create"]),
    ResourceInfo("authentication.k8s.io", "v1", "TokenReview",
                 "tokenreviews", namespaced=False, verbs=["create"]),
]

# Resources without storage (create-only reviews).
VIRTUAL = {"selfsubjectaccessreviews.authorization.k8s.io",
           "subjectaccessreviews.authorization.k8s.io",
           "selfsubjectrulesreviews.authorization.k8s.io",
           "selfsubjectreviews.authentication.k8s.io",
           "tokenreviews.authentication.k8s.io"}


class Registry:
    """Lookup of ResourceInfo by store key and by (group, version, plural)."""

    def __init__(self):
        self.by_key = {}
        for r in BUILTINS:
            self.add(r)

    def add(self, info):
        self.by_key[info.key] = info

    def remove(self, key):
        self.by_key.pop(key, None)

    def get(self, key):
        return self.by_key.get(key)

    def lookup(self, group, version, plural):
        key = plural if not group else plural + "." + group
        info = self.by_key.get(key)
        if info is None or version not in info.versions:
            return None
        return info

    def groups(self):
        """{group: [versions...]} for non-core groups, preferred version first."""
        out = {}
        for info in self.by_key.values():
            if not info.group:
                continue
            vs = out.setdefault(info.group, [])
            for v in info.versions:
                if v not in vs:
                    vs.append(v)
        return out

    def in_group_version(self, group, version):
        return [i for i in self.by_key.values() if i.group == group and version in i.versions]

    def by_kind(self, api_version, kind):
        group, _, version = api_version.rpartition("/")
        for i in self.by_key.values():
            if i.group == group and i.kind == kind and version in i.versions:
                return i
        return None
