"""CustomResourceDefinitions: registering the resources they define (all served
versions, status/scale subresources, shortNames, printer columns), structural-schema
pruning and defaulting, status conditions, and cleanup of custom resources when a CRD
is deleted."""
import re

from . import errors
from .registry import ResourceInfo
from .jsoncopy import deepcopy
from .store import now

CLEANUP_FINALIZER = "customresourcecleanup.apiextensions.k8s.io"
_VER = re.compile(r"^v(\d+)(?:(alpha|beta)(\d+))?$")


def version_priority(v):
    """Kubernetes version ordering key: GA > beta > alpha, higher numbers first."""
    m = _VER.match(v)
    if not m:
        return (3, 0, 0, v)
    kind = {None: 0, "beta": 1, "alpha": 2}[m.group(2)]
    return (kind, -int(m.group(1)), -int(m.group(3) or 0), v)


def served_versions(crd):
    vs = [v for v in crd.get("spec", {}).get("versions") or [] if v.get("served")]
    return sorted(vs, key=lambda v: version_priority(v["name"]))


def version_spec(info, version):
    for v in info.crd.get("spec", {}).get("versions") or []:
        if v.get("name") == version:
            return v
    return {}


class CRDController:
    """Keeps the registry in sync with CRDs and implements CR-specific semantics."""

    def __init__(self, store):
        self.store = store
        store.hooks_create.setdefault("customresourcedefinitions.apiextensions.k8s.io",
                                      []).append(self._crd_create)
        store.hooks_update.setdefault("customresourcedefinitions.apiextensions.k8s.io",
                                      []).append(self._crd_update)
        store.subscribe("customresourcedefinitions.apiextensions.k8s.io", self._on_crd)

    # ---- CRD objects -------------------------------------------------
    def _validate(self, crd):
        spec = crd.get("spec") or {}
        names = spec.get("names") or {}
        name = crd["metadata"].get("name", "")
        causes = []
        if not spec.get("group"):
            causes.append(("spec.group", "Required value"))
        if not names.get("plural"):
            causes.append(("spec.names.plural", "Required value"))
        if not names.get("kind"):
            causes.append(("spec.names.kind", "Required value"))
        if spec.get("scope") not in ("Namespaced", "Cluster"):
            causes.append(("spec.scope", 'Unsupported value: "%s": supported values: "Cluster", '
                           '"Namespaced"' % spec.get("scope", "")))
        if not causes and name != "%s.%s" % (names["plural"], spec["group"]):
            causes.append(("metadata.name", 'Invalid value: "%s": must be spec.names.plural+"."'
                           '+spec.group' % name))
        vs = spec.get("versions") or []
        if not vs:
            causes.append(("spec.versions", "Invalid value: null: must have exactly one version "
                           "marked as storage version"))
        elif sum(1 for v in vs if v.get("storage")) != 1:
            causes.append(("spec.versions", "Invalid value: %s: must have exactly one version "
                           "marked as storage version" % [v.get("name") for v in vs]))
        for i, v in enumerate(vs):
            if not (v.get("schema") or {}).get("openAPIV3Schema"):
                causes.append(("spec.versions[%d].schema.openAPIV3Schema" % i, "Required value: "
                               "schemas are required"))
        if causes:
            raise errors.invalid("CustomResourceDefinition", name, causes)

    def _status(self, crd):
        spec = crd["spec"]
        names = dict(spec["names"])
        names.setdefault("singular", names["kind"].lower())
        names.setdefault("listKind", names["kind"] + "List")
        spec["names"] = names
        spec.setdefault("conversion", {"strategy": "None"})
        for v in spec.get("versions") or []:
            v.setdefault("served", True)
        t = now()
        st = crd.get("status") or {}
        old = {c.get("type"): c for c in st.get("conditions") or []}
        conds = []
        for typ, reason, msg in (("NamesAccepted", "NoConflicts", "no conflicts found"),
                                 ("Established", "InitialNamesAccepted",
                                  "the initial names have been accepted")):
            c = old.get(typ) or {"type": typ, "status": "True", "lastTransitionTime": t,
                                 "reason": reason, "message": msg}
            conds.append(c)
        stored = list(st.get("storedVersions") or [])
        sv = [v["name"] for v in spec["versions"] if v.get("storage")][0]
        if sv not in stored:
            stored.append(sv)
        crd["status"] = {"conditions": conds, "acceptedNames": names, "storedVersions": stored}

    def _crd_create(self, store, info, crd):
        self._validate(crd)
        fins = crd["metadata"].setdefault("finalizers", [])
        if CLEANUP_FINALIZER not in fins:
            fins.append(CLEANUP_FINALIZER)
        self._status(crd)

    def _crd_update(self, store, info, old, new):
        self._validate(new)
        if new["spec"].get("group") != old["spec"].get("group") or \
                new["spec"].get("scope") != old["spec"].get("scope"):
            raise errors.invalid("CustomResourceDefinition", new["metadata"]["name"],
                                 [("spec.scope", "Invalid value: field is immutable")])
        new["status"] = deepcopy(old.get("status") or {})
        self._status(new)

    def _on_crd(self, etype, crd):
        name = crd["metadata"]["name"]
        if etype == "DELETED":
            self.store.registry.remove(name)
            return
        if crd["metadata"].get("deletionTimestamp"):
            self._cleanup(crd)
            return
        self.register(crd)

    def register(self, crd):
        spec = crd["spec"]
        names = spec["names"]
        vs = served_versions(crd)
        if not vs:
            self.store.registry.remove(crd["metadata"]["name"])
            return
        subs = set()
        for v in vs:
            sr = v.get("subresources") or spec.get("subresources") or {}
            if "status" in sr:
                subs.add("status")
            if "scale" in sr:
                subs.add("scale")
        info = ResourceInfo(spec["group"], vs[0]["name"], names["kind"], names["plural"],
                            namespaced=spec.get("scope") == "Namespaced",
                            short_names=names.get("shortNames"), singular=names.get("singular"),
                            subresources=subs, categories=names.get("categories"),
                            versions=[v["name"] for v in vs], crd=crd)
        info.list_kind = names.get("listKind") or names["kind"] + "List"
        self.store.registry.add(info)

    def _cleanup(self, crd):
        key = crd["metadata"]["name"]
        if self.store.registry.get(key) is not None:
            for obj in self.store.list(key):
                md = obj["metadata"]
                if md.get("finalizers"):
                    self.store.mutate(key, md.get("namespace"), md["name"],
                                      lambda o: o["metadata"].pop("finalizers", None))
                self.store.remove(key, md.get("namespace"), md["name"])

        def drop(o):
            o["metadata"]["finalizers"] = [f for f in o["metadata"].get("finalizers") or []
                                           if f != CLEANUP_FINALIZER]
        import asyncio
        asyncio.get_event_loop().call_soon(
            lambda: self.store.try_get("customresourcedefinitions.apiextensions.k8s.io",
                                       None, key) and
            self.store.mutate("customresourcedefinitions.apiextensions.k8s.io", None, key, drop))


# ---- custom resources: pruning and defaulting -----------------------------
def _schema(info, version):
    return ((version_spec(info, version).get("schema") or {}).get("openAPIV3Schema")) or {}


def prune(value, schema, root=False, path="", unknown=None):
    """Drops fields the structural schema does not declare (unless preserve-unknown);
    appends each dropped field's path (spec.a.b[0].c) to unknown when given."""
    if not isinstance(schema, dict):
        return value
    if isinstance(value, dict):
        if schema.get("x-kubernetes-preserve-unknown-fields") and not schema.get("properties") \
                and not schema.get("additionalProperties"):
            return value
        props = schema.get("properties")
        addl = schema.get("additionalProperties")
        if schema.get("x-kubernetes-embedded-resource"):
            root = True
        out = {}
        for k, v in value.items():
            sub = "%s.%s" % (path, k) if path else k
            if root and k in ("apiVersion", "kind", "metadata"):
                out[k] = v
            elif props is not None and k in props:
                out[k] = prune(v, props[k], path=sub, unknown=unknown)
            elif isinstance(addl, dict):
                out[k] = prune(v, addl, path=sub, unknown=unknown)
            elif addl is True or schema.get("x-kubernetes-preserve-unknown-fields"):
                out[k] = v
            elif unknown is not None:
                unknown.append(sub)
        return out
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        return [prune(v, schema["items"], path="%s[%d]" % (path, i), unknown=unknown)
                for i, v in enumerate(value)]
    return value


def default(value, schema):
    if not isinstance(schema, dict):
        return value
    if isinstance(value, dict):
        for k, sub in (schema.get("properties") or {}).items():
            if k not in value and isinstance(sub, dict) and "default" in sub:
                value[k] = deepcopy(sub["default"])
            if k in value:
                value[k] = default(value[k], sub)
        addl = schema.get("additionalProperties")
        if isinstance(addl, dict):
            for k in list(value):
                value[k] = default(value[k], addl)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        return [default(v, schema["items"]) for v in value]
    return value


_TYPES = {"string": str, "object": dict, "array": list, "boolean": bool}


def validate(value, schema, path, errs):
    """Type, enum, minimum/maximum, required checks (subset of OpenAPI v3)."""
    if not isinstance(schema, dict) or value is None:
        return
    t = schema.get("type")
    if schema.get("x-kubernetes-int-or-string"):
        t = None
    if t in _TYPES and not isinstance(value, _TYPES[t]):
        errs.append((path, 'Invalid value: "%s": %s in body must be of type %s: "%s"'
                     % (_tname(value), path, t, _tname(value))))
        return
    if t == "integer" and (not isinstance(value, int) or isinstance(value, bool)):
        errs.append((path, 'Invalid value: "%s": %s in body must be of type integer: "%s"'
                     % (_tname(value), path, _tname(value))))
        return
    if t == "number" and (not isinstance(value, (int, float)) or isinstance(value, bool)):
        errs.append((path, "Invalid value: %s in body must be of type number" % path))
        return
    if "enum" in schema and value not in schema["enum"]:
        errs.append((path, 'Unsupported value: %s: supported values: %s'
                     % (_q(value), ", ".join(_q(e) for e in schema["enum"]))))
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            errs.append((path, "Invalid value: %s: %s in body should be greater than or equal "
                         "to %s" % (value, path, schema["minimum"])))
        if "maximum" in schema and value > schema["maximum"]:
            errs.append((path, "Invalid value: %s: %s in body should be less than or equal "
                         "to %s" % (value, path, schema["maximum"])))
    if isinstance(value, dict):
        for r in schema.get("required") or []:
            if r not in value:
                errs.append(("%s.%s" % (path, r), "Required value"))
        props = schema.get("properties") or {}
        for k, sub in props.items():
            if k in value:
                validate(value[k], sub, "%s.%s" % (path, k), errs)
        addl = schema.get("additionalProperties")
        if isinstance(addl, dict):
            for k, v in value.items():
                if k not in props:
                    validate(v, addl, "%s.%s" % (path, k), errs)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, v in enumerate(value):
            validate(v, schema["items"], "%s[%d]" % (path, i), errs)


def _q(v):
    return '"%s"' % v if isinstance(v, str) else str(v)


def _tname(v):
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "integer"
    if isinstance(v, float):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    return "object"


FIELD_VALIDATION = ("Ignore", "Warn", "Strict")


def prepare(info, version, obj, old=None, validation="Ignore", warnings=None):
    """Prune, default and validate a custom resource for the given request version.
    validation is the request's fieldValidation: Strict refuses unknown fields as
    kube-apiserver does (400 `strict decoding error: unknown field "spec.x"`), Warn
    appends one warning per unknown field to warnings, Ignore drops them silently."""
    schema = _schema(info, version)
    if not schema:
        return obj
    md = obj.get("metadata")
    unknown = []
    obj = prune(obj, schema, root=True, unknown=unknown)
    unknown.sort()
    if unknown and validation == "Strict":
        raise errors.bad_request('%s in version "%s" cannot be handled as a %s: strict decoding '
                                 'error: %s' % (info.kind, version, info.kind, ", ".join(
                                     'unknown field "%s"' % u for u in unknown)))
    if unknown and validation == "Warn" and warnings is not None:
        warnings.extend('unknown field "%s"' % u for u in unknown)
    obj = default(obj, schema)
    if md is not None:
        obj["metadata"] = md
    errs = []
    body = {k: v for k, v in obj.items() if k not in ("metadata", "apiVersion", "kind")}
    sch = dict(schema)
    props = {k: v for k, v in (schema.get("properties") or {}).items()
             if k not in ("metadata", "apiVersion", "kind")}
    sch["properties"] = props
    sch["required"] = [r for r in schema.get("required") or [] if r not in ("metadata",)]
    validate(body, sch, "", errs)
    if errs:
        errs = [(p.lstrip("."), m.replace(" .", " ")) for p, m in errs]
        raise errors.invalid(info.kind, obj.get("metadata", {}).get("name", ""), errs)
    return obj


def printer_columns(info, version):
    vs = version_spec(info, version)
    cols = vs.get("additionalPrinterColumns")
    if cols is None:
        cols = info.crd.get("spec", {}).get("additionalPrinterColumns")
    return cols
