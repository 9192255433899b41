#!/usr/bin/env python3
"""bench/peer_normalise.py DIR: the side-by-side diff of bench/peer_behaviour.sh.

DIR holds, for each namespace NS in (up, ours): NS-objects.json (kubectl get ... -o json of
the job's namespace at the end), NS-events.json, and samples.jsonl (one line per 0.5 s
sample: {"t": epoch_ms, "items": [the MPIJobs of both namespaces]}). Names, uids,
timestamps, IPs and random suffixes are normalised, then each part is diffed (unified
diff, upstream first). Secret values are shown as their key, length and first line.
"""
import base64, difflib, json, re, sys

D = sys.argv[1]
NSS = ("up", "ours")
UID = re.compile(r'[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}')
TS = re.compile(r'\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z')
IP = re.compile(r'\b10\.(244|96|245)\.\d+\.\d+\b')
DROP_META = {"uid", "resourceVersion", "creationTimestamp", "managedFields", "generation",
             "selfLink", "generateName"}


def norm_str(s, ns):
    s = UID.sub("<uid>", s)
    s = TS.sub("<time>", s)
    s = IP.sub("<ip>", s)
    s = re.sub(r'\b%s\b' % re.escape(ns), "<ns>", s)
    s = re.sub(r'(-launcher)-[a-z0-9]{5}\b', r'\1-<rand>', s)
    s = re.sub(r'\b[0-9a-f]{9,10}\b', '<hash>', s)   # pod-template-hash, controller-revision
    s = re.sub(r'\b\d+(\.\d+)?(ms|s|µs)\b', '<dur>', s)
    return s


def norm(o, ns):
    if isinstance(o, dict):
        return {k: norm(v, ns) for k, v in o.items() if k not in DROP_META}
    if isinstance(o, list):
        return [norm(v, ns) for v in o]
    if isinstance(o, str):
        return norm_str(o, ns)
    return o


def secret_view(data):
    out = {}
    for k, v in sorted((data or {}).items()):
        b = base64.b64decode(v)
        first = b.split(b"\n", 1)[0][:60].decode("latin-1")
        if k.endswith("pub") or k == "authorized_keys" or k == "ssh-publickey":
            first = " ".join(first.split()[:1])  # the key type only
        out[k] = "%d bytes, starts %r" % (len(b), first)
    return out


def pod_view(p):
    s = p["spec"]
    keep = {k: s.get(k) for k in ("containers", "initContainers", "volumes", "serviceAccountName",
                                  "hostname", "subdomain", "securityContext", "restartPolicy",
                                  "nodeSelector", "enableServiceLinks", "automountServiceAccountToken")
            if s.get(k) is not None}
    for c in keep.get("containers", []) + keep.get("initContainers", []):
        for k in ("terminationMessagePath", "terminationMessagePolicy"):
            c.pop(k, None)
        if "volumeMounts" in c:  # the projected token's mount name is random
            c["volumeMounts"] = [m for m in c["volumeMounts"] if not m["name"].startswith("kube-api-access-")]
    if "volumes" in keep:
        keep["volumes"] = [v for v in keep["volumes"] if not v["name"].startswith("kube-api-access-")]
    return {"metadata": p["metadata"], "spec": keep, "status.phase": p["status"].get("phase")}


def view(o):
    k = o["kind"]
    m = o["metadata"]
    if k == "Secret":
        o = {"metadata": m, "type": o.get("type"), "immutable": o.get("immutable"), "data": secret_view(o.get("data"))}
    elif k == "Pod":
        o = pod_view(o)
    elif k == "Job":
        o = {"metadata": m, "spec": {x: o["spec"].get(x) for x in ("backoffLimit", "completions", "parallelism",
                                                                  "suspend", "ttlSecondsAfterFinished", "podFailurePolicy")},
             "template": pod_view({"metadata": o["spec"]["template"].get("metadata", {}),
                                   "spec": o["spec"]["template"]["spec"], "status": {}})}
    elif k == "Service":
        o = {"metadata": m, "spec": {x: o["spec"].get(x) for x in ("clusterIP", "selector", "ports", "publishNotReadyAddresses", "type")}}
    elif k == "MPIJob":
        o = {"metadata": m, "spec": o.get("spec")}
    else:
        o = {kk: vv for kk, vv in o.items() if kk not in ("apiVersion",)}
    return o


def key(o):
    return (o["kind"], o["metadata"]["name"])


def text(objs):
    lines = []
    for o in objs:
        lines.append("### %s %s" % key(o))
        lines += json.dumps(view(o), indent=1, sort_keys=True).splitlines()
    return lines


def udiff(title, a, b):
    d = list(difflib.unified_diff(a, b, "upstream (ns up)", "ours (ns ours)", lineterm="", n=2))
    print("=" * 8, title, "=" * 8)
    print("\n".join(d) if d else "(same)")
    print()


objs = {}
for ns in NSS:
    items = json.load(open("%s/%s-objects.json" % (D, ns)))["items"]
    items = [norm(o, ns) for o in items]
    # the default ServiceAccount, its token and the kube-root-ca.crt ConfigMap are the namespace's
    items = [o for o in items if not (o["metadata"]["name"] in ("default", "kube-root-ca.crt"))]
    objs[ns] = sorted(items, key=key)

print("# Objects (kind name) in each namespace")
udiff("object list", ["%s %s" % key(o) for o in objs["up"]], ["%s %s" % key(o) for o in objs["ours"]])
kinds = sorted({o["kind"] for ns in NSS for o in objs[ns]})
for kd in kinds:
    udiff("kind " + kd, text([o for o in objs["up"] if o["kind"] == kd]),
          text([o for o in objs["ours"] if o["kind"] == kd]))

# Status over time: the distinct states (consecutive duplicates dropped), each with when it
# was first seen (seconds after the MPIJob's creation, 0.5 s sampling)
states = {ns: [] for ns in NSS}
t0 = {}
for line in open("%s/samples.jsonl" % D):
    s = json.loads(line)
    for j in s["items"]:
        ns = j["metadata"]["namespace"]
        if ns not in states:
            continue
        t0.setdefault(ns, s["t"])
        st = norm(j.get("status", {}), ns)
        for c in st.get("conditions", []):
            for k in ("lastTransitionTime", "lastUpdateTime"):
                c.pop(k, None)
        for k in ("startTime", "completionTime"):
            if k in st:
                st[k] = "<set>"
        txt = json.dumps(st, sort_keys=True)
        if not states[ns] or states[ns][-1][1] != txt:
            states[ns].append(((s["t"] - t0[ns]) / 1000.0, txt))
print("# Status over time (distinct states; time after the first sample that saw the job)")
for ns in NSS:
    print("-- %s:" % ns)
    for t, txt in states[ns]:
        print("  %6.1f s  %s" % (t, txt))
udiff("status sequence", [json.dumps(json.loads(x), indent=1, sort_keys=True) for _, x in states["up"]],
      [json.dumps(json.loads(x), indent=1, sort_keys=True) for _, x in states["ours"]])

print("# Events (involved kind, name, type, reason, message; in time order)")
ev = {}
for ns in NSS:
    items = json.load(open("%s/%s-events.json" % (D, ns)))["items"]
    items.sort(key=lambda e: (e.get("firstTimestamp") or e.get("eventTime") or "", e["metadata"]["name"]))
    ev[ns] = ["%s %s %s %s: %s" % (e["involvedObject"]["kind"], norm_str(e["involvedObject"].get("name", ""), ns),
                                   e.get("type"), e.get("reason"), norm_str(e.get("message", ""), ns))
              for e in items if e["involvedObject"]["kind"] in ("MPIJob",)]
    ev[ns + "-all"] = ["%s %s %s" % (e["involvedObject"]["kind"], e.get("type"), e.get("reason")) for e in items]
udiff("MPIJob events", ev["up"], ev["ours"])
udiff("all events (kind type reason, sorted, counted)",
      ["%s x%d" % (k, ev["up-all"].count(k)) for k in sorted(set(ev["up-all"]))],
      ["%s x%d" % (k, ev["ours-all"].count(k)) for k in sorted(set(ev["ours-all"]))])
