"""RBAC authorizer: evaluates ClusterRoleBindings and RoleBindings for every request, and
the bootstrap cluster roles (cluster-admin, admin, edit, view, system:discovery, ...)."""


class Attrs:
    """Request attributes as the authorizer sees them."""

    def __init__(self, verb, group="", resource="", subresource="", name="", namespace="",
                 path=None):
        self.verb = verb
        self.group = group
        self.resource = resource
        self.subresource = subresource
        self.name = name
        self.namespace = namespace
        self.path = path    # non-resource request when set

    @property
    def full_resource(self):
        return self.resource + ("/" + self.subresource if self.subresource else "")


def _subject_matches(subj, user, binding_ns):
    kind = subj.get("kind")
    if kind == "User":
        return subj.get("name") == user.name
    if kind == "Group":
        return subj.get("name") in user.groups
    if kind == "ServiceAccount":
        ns = subj.get("namespace") or binding_ns
        return user.name == "system:serviceaccount:%s:%s" % (ns, subj.get("name"))
    return False


def _rule_allows(rule, a):
    verbs = rule.get("verbs") or []
    if "*" not in verbs and a.verb not in verbs:
        return False
    if a.path is not None:
        for u in rule.get("nonResourceURLs") or []:
            if u == "*" or u == a.path or (u.endswith("*") and a.path.startswith(u[:-1])):
                return True
        return False
    groups = rule.get("apiGroups")
    if groups is None or ("*" not in groups and a.group not in groups):
        return False
    res = rule.get("resources") or []
    full = a.full_resource
    ok = "*" in res or full in res
    if not ok and a.subresource:
        ok = ("*/" + a.subresource) in res
    if not ok:
        return False
    names = rule.get("resourceNames") or []
    if names and a.name not in names:
        return False
    return True


def _role_rules(store, ref, ns):
    kind = ref.get("kind")
    if kind == "ClusterRole":
        r = store.try_get("clusterroles.rbac.authorization.k8s.io", None, ref.get("name"))
    elif kind == "Role":
        r = store.try_get("roles.rbac.authorization.k8s.io", ns, ref.get("name"))
    else:
        r = None
    if r is None:
        return []
    rules = list(r.get("rules") or [])
    agg = r.get("aggregationRule")
    if agg and kind == "ClusterRole":
        from .selectors import label_selector_from_object, match_requirements
        for sel in agg.get("clusterRoleSelectors") or []:
            reqs = label_selector_from_object(sel)
            for cr in store.list("clusterroles.rbac.authorization.k8s.io", copy=False):
                if cr["metadata"]["name"] != r["metadata"]["name"] and \
                        match_requirements(reqs, cr["metadata"].get("labels")):
                    rules.extend(cr.get("rules") or [])
    return rules


def rules_for(store, user, ns):
    """All rules that apply to user in namespace ns ('' = cluster scope only)."""
    rules = []
    for b in store.list("clusterrolebindings.rbac.authorization.k8s.io", copy=False):
        if any(_subject_matches(s, user, "") for s in b.get("subjects") or []):
            rules.extend(_role_rules(store, b.get("roleRef") or {}, ""))
    if ns:
        for b in store.list("rolebindings.rbac.authorization.k8s.io", ns, copy=False):
            if any(_subject_matches(s, user, ns) for s in b.get("subjects") or []):
                rules.extend(_role_rules(store, b.get("roleRef") or {}, ns))
    return rules


def authorize(store, user, a):
    """True if user may do a (system:masters may do everything)."""
    if "system:masters" in user.groups:
        return True
    for rule in rules_for(store, user, a.namespace if a.path is None else ""):
        if _rule_allows(rule, a):
            return True
    return False


_RO = ["get", "list", "watch"]
_RW = ["create", "delete", "deletecollection", "patch", "update"]
_DISCOVERY = ["/api", "/api/*", "/apis", "/apis/*", "/openapi", "/openapi/*", "/version",
              "/version/", "/healthz", "/livez", "/readyz"]


def bootstrap_roles():
    """(clusterroles, clusterrolebindings) created at startup, as kube-apiserver does."""
    ns_res = ["pods", "pods/log", "pods/status", "configmaps", "endpoints",
              "persistentvolumeclaims", "replicationcontrollers", "services",
              "serviceaccounts", "events"]
    def cr(name, rules, labels=None):
        md = {"name": name, "labels": {"kubernetes.io/bootstrapping": "rbac-defaults"}}
        if labels:
            md["labels"].update(labels)
        md["annotations"] = {"rbac.authorization.kubernetes.io/autoupdate": "true"}
        return {"metadata": md, "rules": rules}
    view = [{"apiGroups": [""], "resources": ns_res + ["namespaces"], "verbs": _RO},
            {"apiGroups": ["batch"], "resources": ["jobs", "jobs/status", "cronjobs"],
             "verbs": _RO},
            {"apiGroups": ["apps"], "resources": ["*"], "verbs": _RO}]
    edit = view + [{"apiGroups": [""], "resources": ns_res + ["secrets", "pods/exec",
                                                              "pods/attach", "pods/portforward"],
                    "verbs": _RW},
                   {"apiGroups": [""], "resources": ["secrets"], "verbs": _RO},
                   {"apiGroups": [""], "resources": ["pods/exec", "pods/attach"],
                    "verbs": ["get", "create"]},
                   {"apiGroups": ["batch"], "resources": ["jobs", "cronjobs"], "verbs": _RW}]
    admin = edit + [{"apiGroups": ["rbac.authorization.k8s.io"],
                     "resources": ["roles", "rolebindings"], "verbs": _RO + _RW},
                    {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"],
                     "verbs": _RO + _RW}]
    roles = [
        cr("cluster-admin", [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]},
                             {"nonResourceURLs": ["*"], "verbs": ["*"]}]),
        cr("admin", admin), cr("edit", edit), cr("view", view),
        cr("system:discovery", [{"nonResourceURLs": _DISCOVERY, "verbs": ["get"]}]),
        cr("system:public-info-viewer", [{"nonResourceURLs": ["/healthz", "/livez", "/readyz",
                                                              "/version", "/version/"],
                                          "verbs": ["get"]}]),
        cr("system:basic-user", [
            {"apiGroups": ["authorization.k8s.io"],
             "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
             "verbs": ["create"]},
            {"apiGroups": ["authentication.k8s.io"], "resources": ["selfsubjectreviews"],
             "verbs": ["create"]}]),
    ]
    def crb(name, role, groups):
        return {"metadata": {"name": name,
                             "labels": {"kubernetes.io/bootstrapping": "rbac-defaults"},
                             "annotations": {"rbac.authorization.kubernetes.io/autoupdate":
                                             "true"}},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                            "name": role},
                "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group",
                              "name": g} for g in groups]}
    bindings = [crb("cluster-admin", "cluster-admin", ["system:masters"]),
                crb("system:discovery", "system:discovery", ["system:authenticated"]),
                crb("system:basic-user", "system:basic-user", ["system:authenticated"]),
                crb("system:public-info-viewer", "system:public-info-viewer",
                    ["system:authenticated", "system:unauthenticated"])]
    return roles, bindings
