"""Label and field selectors in Kubernetes string syntax, and LabelSelector objects."""
import re

from .errors import bad_request

_TOKEN = re.compile(r"\s*(!=|==|=|!|,|\(|\)|[^\s!=,()]+)")


def _split_top(s):
    """Split on commas outside parentheses."""
    parts, depth, cur = [], 0, ""
    for ch in s:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur)
    return [p.strip() for p in parts if p.strip()]


def parse_label_selector(s):
    """Returns a list of requirements (key, op, values); op in =, !=, in, notin, exists, !exists."""
    reqs = []
    if not s:
        return reqs
    for part in _split_top(s):
        m = re.match(r"^([^\s!=]+)\s+(in|notin)\s+\((.*)\)$", part)
        if m:
            vals = [v.strip() for v in m.group(3).split(",") if v.strip()]
            reqs.append((m.group(1), m.group(2), vals))
            continue
        m = re.match(r"^([^\s!=]+)\s*(==|=|!=)\s*([^\s]*)$", part)
        if m:
            op = "!=" if m.group(2) == "!=" else "="
            reqs.append((m.group(1), op, [m.group(3)]))
            continue
        m = re.match(r"^!\s*([^\s!=]+)$", part)
        if m:
            reqs.append((m.group(1), "!exists", []))
            continue
        m = re.match(r"^([^\s!=()]+)$", part)
        if m:
            reqs.append((m.group(1), "exists", []))
            continue
        raise bad_request("unable to parse requirement: found '%s', expected: identifier" % part)
    return reqs


def match_requirements(reqs, labels):
    labels = labels or {}
    for key, op, vals in reqs:
        has = key in labels
        v = labels.get(key)
        if op == "=" and (not has or v != vals[0]):
            return False
        if op == "!=" and has and v == vals[0]:
            return False
        if op == "in" and (not has or v not in vals):
            return False
        if op == "notin" and has and v in vals:
            return False
        if op == "exists" and not has:
            return False
        if op == "!exists" and has:
            return False
    return True


def label_selector_from_object(sel):
    """metav1.LabelSelector dict -> requirements. None selector -> matches nothing (returns None)."""
    if sel is None:
        return None
    reqs = []
    for k, v in (sel.get("matchLabels") or {}).items():
        reqs.append((k, "=", [v]))
    for e in sel.get("matchExpressions") or []:
        op = {"In": "in", "NotIn": "notin", "Exists": "exists",
              "DoesNotExist": "!exists"}.get(e.get("operator"))
        if op is None:
            raise bad_request("invalid label selector operator %r" % e.get("operator"))
        reqs.append((e.get("key"), op, list(e.get("values") or [])))
    return reqs


def match_labels(selector, labels):
    """selector: string, dict of matchLabels, or parsed requirements."""
    if selector is None:
        return True
    if isinstance(selector, str):
        selector = parse_label_selector(selector)
    elif isinstance(selector, dict):
        selector = [(k, "=", [v]) for k, v in selector.items()]
    return match_requirements(selector, labels)


def parse_field_selector(s):
    reqs = []
    if not s:
        return reqs
    for part in _split_top(s):
        m = re.match(r"^([^\s!=]+)\s*(==|=|!=)\s*(.*)$", part)
        if not m:
            raise bad_request('invalid selector: \'%s\'; can\'t understand \'%s\'' % (s, part))
        reqs.append((m.group(1), "!=" if m.group(2) == "!=" else "=", m.group(3).strip()))
    return reqs


# field labels whose value is not the object's field at the same path, or has a default
_ALIAS = {"status.successful": "status.succeeded", "source": "source.component"}
_DEFAULT = {"status.successful": "0", "spec.hostNetwork": "false",
            "spec.unschedulable": "false", "status.replicas": "0"}


def field_value(obj, path):
    default = _DEFAULT.get(path, "")
    path = _ALIAS.get(path, path)
    cur = obj
    for p in path.split("."):
        if not isinstance(cur, dict):
            return default
        cur = cur.get(p)
        if cur is None:
            return default
    if isinstance(cur, bool):
        return "true" if cur else "false"
    return str(cur)


def match_fields(selector, obj):
    if selector is None:
        return True
    if isinstance(selector, str):
        selector = parse_field_selector(selector)
    for path, op, val in selector:
        got = field_value(obj, path)
        if op == "=" and got != val:
            return False
        if op == "!=" and got == val:
            return False
    return True
