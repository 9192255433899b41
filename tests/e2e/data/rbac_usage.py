#!/usr/bin/env python3
"""rbac_usage.py DEPLOY.yaml ACCESS-LOG... : maps the operator's API requests (kubesim
access-log lines "METHOD PATH CODE T ms USER") to RBAC (verb, group, resource[/sub]) and
prints, per rule of the manifest's ClusterRole and leader-election Role, the verbs the
operator actually used and the granted verbs it never used in these runs (candidates for
removal, unless the rule's comment explains a non-request reason such as the escalation
check), plus any request answered 403 (a missing permission)."""
import collections
import re
import sys
import urllib.parse

import yaml

docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
rules = []
for d in docs:
    if d.get("kind") in ("ClusterRole", "Role") and d["metadata"]["name"].startswith("mpi-operator"):
        for r in d.get("rules") or []:
            rules.append((d["kind"], r))
used = collections.Counter()
denied = collections.Counter()
line_re = re.compile(r" (GET|POST|PUT|PATCH|DELETE) (\S+) (-?\d+) [\d.]+ms (\S+)$")
for f in sys.argv[2:]:
    for line in open(f, errors="replace"):
        m = line_re.search(line.rstrip("\n"))
        if not m:
            continue
        meth, path, code = m.group(1), m.group(2), int(m.group(3))
        u = urllib.parse.urlsplit(path)
        q = urllib.parse.parse_qs(u.query)
        parts = [p for p in u.path.split("/") if p]
        if not parts or parts[0] not in ("api", "apis"):
            continue
        if parts[0] == "api":
            group, rest = "", parts[2:]
        else:
            group, rest = parts[1], parts[3:]
        if rest[:1] == ["namespaces"] and len(rest) >= 3:
            rest = rest[2:]
        elif rest[:1] == ["namespaces"]:
            pass
        res = rest[0] if rest else ""
        named = len(rest) >= 2
        sub = rest[2] if len(rest) >= 3 else None
        resource = res + ("/" + sub if sub else "")
        verb = {"POST": "create", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}.get(meth)
        if verb is None:
            verb = "watch" if q.get("watch", ["0"])[0] in ("1", "true") else ("get" if named else "list")
        key = (verb, group, resource)
        (denied if code == 403 else used)[key] += 1
print("| rule (kind: groups / resources) | granted verbs | used (requests) | granted, never used here |")
print("|---|---|---|---|")
for kind, r in rules:
    groups = r.get("apiGroups") or [""]
    ress = r.get("resources") or []
    verbs = r.get("verbs") or []
    u = collections.Counter()
    for (v, g, res), n in used.items():
        if g in groups and res in ress and v in verbs:
            u[v] += n
    never = [v for v in verbs if v not in u]
    print("| %s: %s / %s | %s | %s | %s |" % (
        kind, ",".join(g or '""' for g in groups), ",".join(ress), ",".join(verbs),
        ", ".join("%s %d" % (v, n) for v, n in sorted(u.items())) or "-", ", ".join(never) or "-"))
outside = [(k, n) for k, n in used.items()
           if not any(k[1] in (r.get("apiGroups") or [""]) and k[2] in (r.get("resources") or [])
                      and k[0] in (r.get("verbs") or []) for _, r in rules)]
print()
print("Requests outside every rule (allowed by something else?): %s" %
      (", ".join("%s %s/%s x%d" % (k[0], k[1] or "core", k[2], n) for k, n in outside) or "none"))
print("Requests answered 403 (missing permission): %s" %
      (", ".join("%s %s/%s x%d" % (k[0], k[1] or "core", k[2], n) for k, n in denied.items()) or "none"))
