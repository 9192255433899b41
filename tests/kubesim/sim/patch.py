"""JSON merge patch (RFC 7386), JSON patch (RFC 6902) and the part of strategic merge
patch kubectl apply/scale/label/annotate/edit use."""
import json

from .errors import ApiError, bad_request
from .jsoncopy import deepcopy

MERGE = "application/merge-patch+json"
JSON = "application/json-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"
APPLY = "application/apply-patch+yaml"

# Lists merged by key in strategic merge patch (field name -> merge key).
_MERGE_KEYS = {
    "containers": "name", "initContainers": "name", "ephemeralContainers": "name",
    "volumes": "name", "env": "name", "imagePullSecrets": "name", "volumeMounts": "mountPath",
    "volumeDevices": "devicePath", "conditions": "type", "ownerReferences": "uid",
    "hostAliases": "ip", "resourceClaims": "name", "items": "key",
}
_PRIMITIVE_MERGE = {"finalizers"}


def merge_patch(target, patch):
    if not isinstance(patch, dict):
        return deepcopy(patch)
    if not isinstance(target, dict):
        target = {}
    out = dict(target)
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = merge_patch(out.get(k), v)
    return out


def _ptr(path):
    if path == "":
        return []
    if not path.startswith("/"):
        raise bad_request("invalid JSON pointer %r" % path)
    return [p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")]


def _walk(doc, parts):
    cur = doc
    for p in parts:
        if isinstance(cur, list):
            try:
                cur = cur[int(p)]
            except (ValueError, IndexError):
                raise ApiError(422, "Invalid", "the server rejected our request due to an error "
                               "in our request")
        elif isinstance(cur, dict):
            if p not in cur:
                raise ApiError(422, "Invalid", "the server rejected our request due to an error "
                               "in our request")
            cur = cur[p]
        else:
            raise bad_request("path %r does not exist" % "/".join(parts))
    return cur


def json_patch(doc, ops):
    if not isinstance(ops, list):
        raise bad_request("json patch must be a list of operations")
    doc = deepcopy(doc)
    for op in ops:
        kind = op.get("op")
        parts = _ptr(op.get("path", ""))
        if kind == "test":
            if _walk(doc, parts) != op.get("value"):
                raise ApiError(422, "Invalid", "the server rejected our request due to an error "
                               "in our request: test operation failed")
            continue
        if kind in ("move", "copy"):
            val = deepcopy(_walk(doc, _ptr(op.get("from", ""))))
            if kind == "move":
                doc = _remove(doc, _ptr(op["from"]))
            doc = _add(doc, parts, val)
            continue
        if kind == "add":
            doc = _add(doc, parts, deepcopy(op.get("value")))
        elif kind == "remove":
            doc = _remove(doc, parts)
        elif kind == "replace":
            _walk(doc, parts)
            doc = _remove(doc, parts)
            doc = _add(doc, parts, deepcopy(op.get("value")))
        else:
            raise bad_request("Unexpected kind: %s" % kind)
    return doc


def _add(doc, parts, val):
    if not parts:
        return val
    parent = _walk(doc, parts[:-1])
    last = parts[-1]
    if isinstance(parent, list):
        if last == "-":
            parent.append(val)
        else:
            i = int(last)
            if i > len(parent):
                raise bad_request("index out of range")
            parent.insert(i, val)
    elif isinstance(parent, dict):
        parent[last] = val
    else:
        raise bad_request("cannot add to a scalar")
    return doc


def _remove(doc, parts):
    parent = _walk(doc, parts[:-1])
    last = parts[-1]
    if isinstance(parent, list):
        del parent[int(last)]
    elif isinstance(parent, dict):
        if last not in parent:
            raise ApiError(422, "Invalid", "the server rejected our request due to an error in "
                           "our request")
        del parent[last]
    return doc


def _merge_key(field, items):
    if field == "ports":
        sample = [i for i in items if isinstance(i, dict)]
        if sample and "containerPort" in sample[0]:
            return "containerPort"
        return "port"
    return _MERGE_KEYS.get(field)


def strategic_merge(target, patch):
    """Strategic merge patch of dicts (enough for kubectl's built-in types)."""
    if not isinstance(patch, dict):
        return deepcopy(patch)
    if not isinstance(target, dict):
        target = {}
    if patch.get("$patch") == "replace":
        p = {k: v for k, v in patch.items() if k != "$patch"}
        return deepcopy(p)
    if patch.get("$patch") == "delete":
        return None
    out = dict(target)
    retain = patch.get("$retainKeys")
    for k, v in patch.items():
        if k.startswith("$setElementOrder/") or k in ("$retainKeys", "$patch"):
            continue
        if k.startswith("$deleteFromPrimitiveList/"):
            f = k.split("/", 1)[1]
            out[f] = [x for x in (out.get(f) or []) if x not in v]
            continue
        if v is None:
            out.pop(k, None)
        elif isinstance(v, dict):
            r = strategic_merge(out.get(k), v)
            if r is None:
                out.pop(k, None)
            else:
                out[k] = r
        elif isinstance(v, list):
            out[k] = _merge_list(k, out.get(k), v)
        else:
            out[k] = v
    if retain is not None:
        out = {k: v for k, v in out.items() if k in retain or k not in target or k in patch}
    return out


def _merge_list(field, cur, patch):
    if field in _PRIMITIVE_MERGE and isinstance(cur, list):
        out = list(cur)
        for x in patch:
            if x not in out:
                out.append(x)
        return out
    key = _merge_key(field, patch + (cur or []))
    if not key or not isinstance(cur, list) or \
            not all(isinstance(x, dict) for x in patch + cur):
        return [x for x in deepcopy(patch) if not (isinstance(x, dict) and x.get("$patch"))]
    out = [deepcopy(x) for x in cur]
    if any(isinstance(x, dict) and x.get("$patch") == "replace" for x in patch):
        return [x for x in deepcopy(patch) if x.get("$patch") != "replace"]
    for item in patch:
        kv = item.get(key)
        idx = next((i for i, x in enumerate(out) if x.get(key) == kv), None)
        if item.get("$patch") == "delete":
            if idx is not None:
                out.pop(idx)
            continue
        if idx is None:
            out.append(strategic_merge({}, item))
        else:
            out[idx] = strategic_merge(out[idx], item)
    return out


def parse_body(patch_type, body):
    if isinstance(body, (bytes, str)):
        text = body.decode() if isinstance(body, bytes) else body
        if patch_type == APPLY:
            try:
                import yaml
                return yaml.safe_load(text)
            except ImportError:
                return json.loads(text)
            except Exception as e:
                raise bad_request("error decoding YAML: %s" % e)
        try:
            return json.loads(text)
        except ValueError as e:
            raise bad_request("error decoding patch: %s" % e)
    return body


def apply_patch(store, info, obj, patch_type, body):
    patch_type = (patch_type or "").split(";")[0].strip()
    p = parse_body(patch_type, body)
    if patch_type == MERGE or patch_type == APPLY:
        if not isinstance(p, dict):
            raise bad_request("merge patch must be an object")
        return merge_patch(obj, p)
    if patch_type == JSON:
        return json_patch(obj, p)
    if patch_type == STRATEGIC:
        if info.crd is not None:
            raise ApiError(415, "UnsupportedMediaType",
                           'the body of the request was in an unknown format - accepted media '
                           'types include: application/json-patch+json, application/merge-patch'
                           '+json, application/apply-patch+yaml')
        if not isinstance(p, dict):
            raise bad_request("strategic merge patch must be an object")
        return strategic_merge(obj, p)
    raise ApiError(415, "UnsupportedMediaType",
                   'the body of the request was in an unknown format - accepted media types '
                   'include: application/json-patch+json, application/merge-patch+json, '
                   'application/apply-patch+yaml, application/strategic-merge-patch+json')
