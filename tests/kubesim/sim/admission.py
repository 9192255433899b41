"""Write-time checks kube-apiserver makes beyond the request's RBAC check, worded as it words
them: RBAC escalation prevention (a Role/ClusterRole may only grant what the requester holds,
unless it has `escalate`; a RoleBinding/ClusterRoleBinding may only reference a role whose
permissions the requester holds, unless it has `bind` on that role: pkg/registry/rbac) and the
OwnerReferencesPermissionEnforcement admission plugin (blockOwnerDeletion needs `update` on the
owner's finalizers subresource; changing ownerReferences on an existing object needs `delete`
on it: plugin/pkg/admission/gc). Both on by default; `--set rbac_escalation_check=false` and
`--set owner_references_enforcement=false` turn them off."""
import json

from . import errors
from .errors import ApiError
from .rbac import Attrs, _role_rules, authorize, rules_for

RBAC_GROUP = "rbac.authorization.k8s.io"
ROLES = "roles." + RBAC_GROUP
CLUSTER_ROLES = "clusterroles." + RBAC_GROUP
BINDINGS = ("rolebindings." + RBAC_GROUP, "clusterrolebindings." + RBAC_GROUP)
# metadata a GC-only update may change (rbacregistry.IsOnlyMutatingGCFields), and what the
# server sets itself
_GC_FIELDS = ("ownerReferences", "finalizers")
_SERVER_FIELDS = ("resourceVersion", "managedFields", "generation", "uid", "creationTimestamp",
                  "selfLink")


def _enabled(extra, key):
    return str(extra.get(key, "true")).lower() not in ("false", "0", "no", "off")


def _forbidden(res, name, why):
    """apierrors.NewForbidden: 'RES "NAME" is forbidden: WHY'."""
    what = '%s "%s"' % (res, name) if name else res
    return ApiError(403, "Forbidden", "%s is forbidden: %s" % (what, why),
                    errors._details(res, name))


def _go_list(xs):
    """Go's %q of a []string: ["a" "b"]."""
    return "[" + " ".join(json.dumps(x) for x in xs) + "]"


# ---- RBAC escalation ---------------------------------------------------------------------
def _breakdown(rule):
    """One rule -> atomic rules (one group, resource, verb, name), as validation.BreakdownRule."""
    out = []
    names = rule.get("resourceNames") or []
    for g in rule.get("apiGroups") or []:
        for r in rule.get("resources") or []:
            for v in rule.get("verbs") or []:
                if names:
                    out.extend({"apiGroups": [g], "resources": [r], "verbs": [v],
                                "resourceNames": [n]} for n in names)
                else:
                    out.append({"apiGroups": [g], "resources": [r], "verbs": [v]})
    for u in rule.get("nonResourceURLs") or []:
        for v in rule.get("verbs") or []:
            out.append({"nonResourceURLs": [u], "verbs": [v]})
    return out


def _has_all(have, want):
    return "*" in have or all(w in have for w in want)


def _resources_cover(have, want):
    if _has_all(have, want):
        return True
    for w in want:
        if w in have:
            continue
        if "/" not in w or ("*/" + w.split("/", 1)[1]) not in have:
            return False
    return True


def _urls_cover(have, want):
    for w in want:
        if not any(h == "*" or h == w or (h.endswith("*") and w.startswith(h[:-1]))
                   for h in have):
            return False
    return True


def _rule_covers(owner, req):
    """validation.ruleCovers: owner grants everything req does."""
    if not _has_all(owner.get("verbs") or [], req.get("verbs") or []):
        return False
    if req.get("nonResourceURLs"):
        return _urls_cover(owner.get("nonResourceURLs") or [], req["nonResourceURLs"])
    if not _has_all(owner.get("apiGroups") or [], req.get("apiGroups") or []):
        return False
    if not _resources_cover(owner.get("resources") or [], req.get("resources") or []):
        return False
    onames = owner.get("resourceNames") or []
    return not onames or _has_all(onames, req.get("resourceNames") or [None])


def _compact(missing):
    """validation.CompactRules: simple rules (one group, one resource, at most one name)
    merge their verbs; the descriptions come back sorted, as a sets.String's List()."""
    merged, order, other = {}, [], []
    for m in missing:
        names = m.get("resourceNames") or []
        if m.get("nonResourceURLs") or len(names) > 1:
            other.append(m)
            continue
        k = (m["apiGroups"][0], m["resources"][0], tuple(names))
        if k in merged:
            merged[k]["verbs"].extend(v for v in m["verbs"] if v not in merged[k]["verbs"])
        else:
            merged[k] = {**m, "verbs": list(m["verbs"])}
            order.append(k)
    return sorted({_compact_string(r) for r in [merged[k] for k in order] + other})


def _compact_string(r):
    """rbacv1helpers.CompactString."""
    parts = []
    for key, label in (("apiGroups", "APIGroups"), ("resources", "Resources"),
                       ("nonResourceURLs", "NonResourceURLs"),
                       ("resourceNames", "ResourceNames"), ("verbs", "Verbs")):
        if r.get(key):
            parts.append("%s:%s" % (label, _go_list(r[key])))
    return "{" + ", ".join(parts) + "}"


def _confirm_no_escalation(store, user, ns, rules, res, name):
    """validation.ConfirmNoEscalation: 403 listing the rules user does not hold in ns."""
    held = rules_for(store, user, ns)
    missing = [a for rule in rules for a in _breakdown(rule)
               if not any(_rule_covers(h, a) for h in held)]
    if missing:
        raise _forbidden(res, name, "user %s (groups=%s) is attempting to grant RBAC permissions "
                         "not currently held:\n%s" % (json.dumps(user.name), _go_list(user.groups),
                                                      "\n".join(_compact(missing))))


def _only_gc_fields(obj, old):
    """rbacregistry.IsOnlyMutatingGCFields: nothing but ownerReferences/finalizers changed."""
    def strip(o):
        o = dict(o)
        o.pop("apiVersion", None)
        o.pop("kind", None)
        md = dict(o.get("metadata") or {})
        for k in _GC_FIELDS + _SERVER_FIELDS:
            md.pop(k, None)
        o["metadata"] = md
        return o
    return old is not None and strip(obj) == strip(old)


def _role_ref_rules(store, ref, ns):
    """The referenced role's rules (404 when it does not exist), as GetRoleReferenceRules."""
    kind, rname = ref.get("kind"), ref.get("name", "")
    if kind == "ClusterRole":
        role = store.try_get(CLUSTER_ROLES, None, rname)
        if role is None:
            raise errors.not_found(CLUSTER_ROLES, rname)
        return _role_rules(store, ref, ns)
    role = store.try_get(ROLES, ns, rname)
    if role is None:
        raise errors.not_found(ROLES, rname)
    return list(role.get("rules") or [])


def _check_role(store, user, info, ns, obj):
    name = (obj.get("metadata") or {}).get("name", "")
    if authorize(store, user, Attrs("escalate", RBAC_GROUP, info.plural, "", name, ns)):
        return
    _confirm_no_escalation(store, user, ns, obj.get("rules") or [], info.key, name)
    if info.key == CLUSTER_ROLES and obj.get("aggregationRule"):
        full = [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]},
                {"nonResourceURLs": ["*"], "verbs": ["*"]}]
        try:
            _confirm_no_escalation(store, user, ns, full, info.key, name)
        except ApiError:
            raise _forbidden(info.key, name, "must have cluster-admin privileges to use the "
                             "aggregationRule")


def _check_binding(store, user, info, ns, obj):
    name = (obj.get("metadata") or {}).get("name", "")
    ref = obj.get("roleRef") or {}
    plural = "clusterroles" if ref.get("kind") == "ClusterRole" else "roles"
    if authorize(store, user, Attrs("bind", RBAC_GROUP, plural, "", ref.get("name", ""), ns)):
        return
    _confirm_no_escalation(store, user, ns, _role_ref_rules(store, ref, ns), info.key, name)


def rbac_escalation(store, extra, user, info, ns, obj, old):
    """Refuses a Role/ClusterRole/RoleBinding/ClusterRoleBinding create or update (old set)
    that would grant permissions user does not hold; system:masters may (EscalationAllowed)."""
    if info.key not in (ROLES, CLUSTER_ROLES) + BINDINGS or \
            not _enabled(extra, "rbac_escalation_check"):
        return
    if "system:masters" in user.groups or _only_gc_fields(obj, old):
        return
    ns = ns if info.namespaced else ""
    if info.key in (ROLES, CLUSTER_ROLES):
        _check_role(store, user, info, ns, obj)
    else:
        _check_binding(store, user, info, ns, obj)


# ---- OwnerReferencesPermissionEnforcement -------------------------------------------------
def _refs(o):
    return ((o or {}).get("metadata") or {}).get("ownerReferences") or []


def _new_blocking_refs(obj, old):
    """Refs with blockOwnerDeletion true that old did not already block (by uid)."""
    before = {r.get("uid") for r in _refs(old) if r.get("blockOwnerDeletion")}
    return [r for r in _refs(obj) if r.get("blockOwnerDeletion") and r.get("uid") not in before]


def owner_references(store, extra, registry, user, info, ns, sub, obj, old):
    """gcPermissionsEnforcement.Validate for a create (old None) or update of info/ns."""
    if sub or not _enabled(extra, "owner_references_enforcement"):
        return   # subresource writes (pods/status, ...) do not change ownerReferences here
    if _refs(obj) == _refs(old):
        return
    name = (obj.get("metadata") or {}).get("name", "")
    res = info.key
    if old is not None and not authorize(store, user, Attrs("delete", info.group, info.plural,
                                                            "", name, ns)):
        raise _forbidden(res, name, "cannot set an ownerRef on a resource you can't delete: , <nil>")
    for ref in _new_blocking_refs(obj, old):
        owner = registry.by_kind(ref.get("apiVersion", ""), ref.get("kind", ""))
        if owner is None:
            group, _, version = (ref.get("apiVersion") or "").rpartition("/")
            raise _forbidden(res, name, 'cannot set blockOwnerDeletion in this case because cannot '
                             'find RESTMapping for APIVersion %s Kind %s: no matches for kind "%s" '
                             'in version "%s"' % (ref.get("apiVersion"), ref.get("kind"),
                                                  ref.get("kind"),
                                                  (group + "/" if group else "") + version))
        a = Attrs("update", owner.group, owner.plural, "finalizers", ref.get("name", ""),
                  ns if owner.namespaced else "")
        if not authorize(store, user, a):
            raise _forbidden(res, name, "cannot set blockOwnerDeletion if an ownerReference refers "
                             "to a resource you can't set finalizers on: , <nil>")


def admit(api, request, r, obj, old):
    """Runs both checks for a create (old None) or update through the API handler api."""
    user = request["user"]
    extra = api.server.config.extra
    rbac_escalation(api.store, extra, user, r.info, r.namespace, obj, old)
    owner_references(api.store, extra, api.registry, user, r.info, r.namespace, r.sub, obj, old)
