"""Discovery documents: /version, /api, /apis, /apis/G, per group-version resource lists
(with subresources and short names)."""
import hashlib
import json

from .crd import version_priority

VERSION = {"major": "1", "minor": "32", "gitVersion": "v1.32.0-kubesim",
           "gitCommit": "0000000000000000000000000000000000000000", "gitTreeState": "clean",
           "buildDate": "2025-01-01T00:00:00Z", "goVersion": "go1.23.0", "compiler": "gc",
           "platform": "linux/amd64"}

_SUBS = {
    "status": (None, ["get", "patch", "update"]),
    "exec": ("PodExecOptions", ["create", "get"]),
    "log": ("Pod", ["get"]),
    "binding": ("Binding", ["create"]),
    "token": ("TokenRequest", ["create"]),
    "scale": ("Scale", ["get", "patch", "update"]),
}


def _hash(s):
    return base64_hash(json.dumps(s, sort_keys=True))


def base64_hash(s):
    import base64
    return base64.b64encode(hashlib.sha256(s.encode()).digest()[:8]).decode()


def api_versions(address):
    return {"kind": "APIVersions", "versions": ["v1"],
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": address}]}


def _group_doc(name, versions):
    versions = sorted(versions, key=version_priority)
    vs = [{"groupVersion": "%s/%s" % (name, v), "version": v} for v in versions]
    return {"name": name, "versions": vs, "preferredVersion": vs[0]}


def api_groups(registry):
    groups = registry.groups()
    order = ["apiregistration.k8s.io", "apps", "events.k8s.io", "authentication.k8s.io",
             "authorization.k8s.io", "autoscaling", "batch", "certificates.k8s.io",
             "networking.k8s.io", "policy", "rbac.authorization.k8s.io", "storage.k8s.io",
             "admissionregistration.k8s.io", "apiextensions.k8s.io", "scheduling.k8s.io",
             "coordination.k8s.io", "node.k8s.io", "discovery.k8s.io"]
    names = sorted(groups, key=lambda g: (order.index(g) if g in order else len(order), g))
    return {"kind": "APIGroupList", "apiVersion": "v1",
            "groups": [_group_doc(g, groups[g]) for g in names]}


def api_group(registry, name):
    groups = registry.groups()
    if name not in groups:
        return None
    d = _group_doc(name, groups[name])
    d.update({"kind": "APIGroup", "apiVersion": "v1"})
    return d


def resource_list(registry, group, version):
    infos = registry.in_group_version(group, version)
    if not infos:
        return None
    gv = version if not group else "%s/%s" % (group, version)
    res = []
    for i in sorted(infos, key=lambda x: x.plural):
        d = {"name": i.plural, "singularName": i.singular, "namespaced": i.namespaced,
             "kind": i.kind, "verbs": list(i.verbs)}
        if i.short_names:
            d["shortNames"] = list(i.short_names)
        if i.categories:
            d["categories"] = list(i.categories)
        d["storageVersionHash"] = base64_hash(i.key + "/" + i.version)
        res.append(d)
        for s in sorted(i.subresources):
            kind, verbs = _SUBS.get(s, (None, ["get"]))
            sd = {"name": "%s/%s" % (i.plural, s), "singularName": "",
                  "namespaced": i.namespaced, "kind": kind or i.kind, "verbs": verbs}
            if s == "token":
                sd.update({"group": "authentication.k8s.io", "version": "v1"})
            if s == "scale":
                sd.update({"group": "autoscaling", "version": "v1"})
            res.append(sd)
    return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv,
            "resources": res}


# ---- minimal OpenAPI v3 (enough for kubectl's field-validation probe) --------
def openapi_root(registry):
    paths = {"api/v1": {"serverRelativeURL": "/openapi/v3/api/v1?hash=" +
                        _gv_hash(registry, "", "v1")}}
    for g, vs in registry.groups().items():
        for v in vs:
            paths["apis/%s/%s" % (g, v)] = {
                "serverRelativeURL": "/openapi/v3/apis/%s/%s?hash=%s" % (
                    g, v, _gv_hash(registry, g, v))}
    return {"paths": paths}


def _gv_hash(registry, g, v):
    infos = registry.in_group_version(g, v)
    return base64_hash(json.dumps(sorted([i.key, i.kind, json.dumps(
        i.crd.get("spec") if i.crd else None, sort_keys=True)] for i in infos))).replace(
        "+", "").replace("/", "").replace("=", "")


def crd_schema(info, v, gvk, schemas):
    """A custom resource's structural schema, published as kube-apiserver does (named
    by the reversed group, version and kind) so that `kubectl explain` can render it."""
    if info.crd is None:
        return
    from .crd import version_spec
    sch = (version_spec(info, v).get("schema") or {}).get("openAPIV3Schema")
    if not sch:
        return
    name = ".".join(list(reversed(gvk["group"].split("."))) + [v, gvk["kind"]])
    schemas[name] = dict(sch, **{"x-kubernetes-group-version-kind": [gvk]})


def openapi_gv(registry, g, v):
    infos = registry.in_group_version(g, v)
    if not infos:
        return None
    base = "/api/v1" if not g else "/apis/%s/%s" % (g, v)
    paths = {}
    schemas = {}
    for i in infos:
        gvk = {"group": g, "version": v, "kind": i.kind}
        p = base + ("/namespaces/{namespace}" if i.namespaced else "") + "/%s/{name}" % i.plural
        op = {"x-kubernetes-group-version-kind": gvk, "x-kubernetes-action": "patch",
              "parameters": [{"name": "fieldValidation", "in": "query",
                              "schema": {"type": "string", "uniqueItems": True}},
                             {"name": "fieldManager", "in": "query",
                              "schema": {"type": "string", "uniqueItems": True}},
                             {"name": "dryRun", "in": "query",
                              "schema": {"type": "string", "uniqueItems": True}}]}
        paths[p] = {"patch": op,
                    "put": dict(op, **{"x-kubernetes-action": "put"}),
                    "get": {"x-kubernetes-group-version-kind": gvk,
                            "x-kubernetes-action": "get"}}
        coll = base + ("/namespaces/{namespace}" if i.namespaced else "") + "/%s" % i.plural
        paths[coll] = {"post": dict(op, **{"x-kubernetes-action": "post"})}
        crd_schema(i, v, gvk, schemas)
    return {"openapi": "3.0.0", "info": {"title": "Kubernetes", "version": "v1.32.0"},
            "paths": paths, "components": {"schemas": schemas}}
