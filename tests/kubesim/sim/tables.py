"""meta.k8s.io/v1 Table rendering for `kubectl get` (printer columns of built-in kinds
and of CRDs)."""
import calendar
import json
import time

from . import crd as crdmod
from .jsonpath import evaluate


def human_duration(secs):
    """k8s.io/apimachinery duration.HumanDuration."""
    if secs < -1:
        return "<invalid>"
    if secs < 0:
        return "0s"
    s = int(secs)
    if s < 60 * 2:
        return "%ds" % s
    m = s // 60
    if m < 10:
        return "%dm%ds" % (m, s % 60) if s % 60 else "%dm" % m
    if m < 60 * 3:
        return "%dm" % m
    h = m // 60
    if h < 8:
        return "%dh%dm" % (h, m % 60) if m % 60 else "%dh" % h
    if h < 48:
        return "%dh" % h
    if h < 24 * 8:
        return "%dd%dh" % (h // 24, h % 24) if h % 24 else "%dd" % (h // 24)
    if h < 24 * 365 * 2:
        return "%dd" % (h // 24)
    y = h // (24 * 365)
    if y < 8:
        return "%dy%dd" % (y, (h // 24) % 365)
    return "%dy" % y


def age(ts):
    if not ts:
        return "<unknown>"
    try:
        t = calendar.timegm(time.strptime(ts[:19], "%Y-%m-%dT%H:%M:%S"))
    except ValueError:
        return "<unknown>"
    return human_duration(time.time() - t)


def _col(name, typ="string", fmt="", desc="", priority=0):
    return {"name": name, "type": typ, "format": fmt, "description": desc, "priority": priority}


NAME = _col("Name", fmt="name", desc="Name must be unique within a namespace.")
AGE = _col("Age", desc="CreationTimestamp is a timestamp representing the server time when "
           "this object was created.")


def _pod_status(p):
    st = p.get("status") or {}
    reason = st.get("reason") or st.get("phase") or "Pending"
    init = False
    for i, cs in enumerate(st.get("initContainerStatuses") or []):
        s = cs.get("state") or {}
        if s.get("terminated") and s["terminated"].get("exitCode") == 0:
            continue
        if s.get("terminated"):
            t = s["terminated"]
            reason = "Init:" + (t.get("reason") or "Signal:%s" % t.get("signal")
                                if t.get("reason") or t.get("signal") else
                                "ExitCode:%s" % t.get("exitCode"))
        elif s.get("waiting") and s["waiting"].get("reason") not in (None, "PodInitializing"):
            reason = "Init:" + s["waiting"]["reason"]
        else:
            reason = "Init:%d/%d" % (i, len(p.get("spec", {}).get("initContainers") or []))
        init = True
        break
    if not init:
        running = False
        for cs in reversed(st.get("containerStatuses") or []):
            s = cs.get("state") or {}
            if s.get("waiting") and s["waiting"].get("reason"):
                reason = s["waiting"]["reason"]
            elif s.get("terminated") and s["terminated"].get("reason"):
                reason = s["terminated"]["reason"]
            elif s.get("terminated"):
                t = s["terminated"]
                reason = "Signal:%s" % t["signal"] if t.get("signal") else \
                    "ExitCode:%s" % t.get("exitCode")
            elif cs.get("ready") and s.get("running"):
                running = True
        if reason == "Completed" and running:
            reason = "Running"
    if p["metadata"].get("deletionTimestamp"):
        reason = "Terminating"
    return reason


def _pod_row(p):
    st = p.get("status") or {}
    css = st.get("containerStatuses") or []
    total = len(p.get("spec", {}).get("containers") or [])
    ready = sum(1 for c in css if c.get("ready"))
    restarts = sum(c.get("restartCount", 0) for c in css)
    return [p["metadata"]["name"], "%d/%d" % (ready, total), _pod_status(p), restarts,
            age(p["metadata"].get("creationTimestamp")), st.get("podIP") or "<none>",
            p.get("spec", {}).get("nodeName") or "<none>", "<none>", "<none>"]


_POD_COLS = [NAME, _col("Ready"), _col("Status"), _col("Restarts", "string"), AGE,
             _col("IP", priority=1), _col("Node", priority=1),
             _col("Nominated Node", priority=1), _col("Readiness Gates", priority=1)]


def _job_row(j):
    st = j.get("status") or {}
    conds = {c.get("type"): c.get("status") for c in st.get("conditions") or []}
    if conds.get("Complete") == "True":
        status = "Complete"
    elif conds.get("Failed") == "True":
        status = "Failed"
    elif conds.get("FailureTarget") == "True":
        status = "FailureTarget"
    elif conds.get("Suspended") == "True":
        status = "Suspended"
    elif conds.get("SuccessCriteriaMet") == "True":
        status = "SuccessCriteriaMet"
    elif j["metadata"].get("deletionTimestamp"):
        status = "Terminating"
    else:
        status = "Running"
    comp = "%d/%d" % (st.get("succeeded", 0), j.get("spec", {}).get("completions", 1))
    dur = ""
    if st.get("startTime"):
        import calendar as c
        t0 = c.timegm(time.strptime(st["startTime"][:19], "%Y-%m-%dT%H:%M:%S"))
        t1 = c.timegm(time.strptime(st["completionTime"][:19], "%Y-%m-%dT%H:%M:%S")) \
            if st.get("completionTime") else time.time()
        dur = human_duration(t1 - t0)
    return [j["metadata"]["name"], status, comp, dur, age(j["metadata"].get("creationTimestamp"))]


_JOB_COLS = [NAME, _col("Status"), _col("Completions"), _col("Duration"), AGE]


def _svc_row(s):
    sp = s.get("spec") or {}
    ports = ",".join("%s/%s" % (p.get("port"), p.get("protocol", "TCP"))
                     for p in sp.get("ports") or []) or "<none>"
    return [s["metadata"]["name"], sp.get("type", "ClusterIP"), sp.get("clusterIP") or "<none>",
            "<none>", ports, age(s["metadata"].get("creationTimestamp"))]


_SVC_COLS = [NAME, _col("Type"), _col("Cluster-IP"), _col("External-IP"), _col("Port(s)"), AGE]


def _ns_row(n):
    return [n["metadata"]["name"], (n.get("status") or {}).get("phase", ""),
            age(n["metadata"].get("creationTimestamp"))]


def _node_row(n):
    conds = {c.get("type"): c.get("status") for c in (n.get("status") or {}).get(
        "conditions") or []}
    st = "Ready" if conds.get("Ready") == "True" else "NotReady"
    if (n.get("spec") or {}).get("unschedulable"):
        st += ",SchedulingDisabled"
    ver = ((n.get("status") or {}).get("nodeInfo") or {}).get("kubeletVersion", "")
    return [n["metadata"]["name"], st, "<none>", age(n["metadata"].get("creationTimestamp")), ver]


def _cm_row(c):
    return [c["metadata"]["name"], len(c.get("data") or {}) + len(c.get("binaryData") or {}),
            age(c["metadata"].get("creationTimestamp"))]


def _secret_row(s):
    return [s["metadata"]["name"], s.get("type", "Opaque"), len(s.get("data") or {}),
            age(s["metadata"].get("creationTimestamp"))]


def _ev_row(e):
    io = e.get("involvedObject") or {}
    return [age(e.get("lastTimestamp") or e.get("eventTime") or
                e["metadata"].get("creationTimestamp")), e.get("type", ""), e.get("reason", ""),
            "%s/%s" % ((io.get("kind") or "").lower(), io.get("name", "")), e.get("message", "")]


def _crd_row(c):
    return [c["metadata"]["name"], c["metadata"].get("creationTimestamp", "")]


def _deploy_row(d):
    st = d.get("status") or {}
    return [d["metadata"]["name"], "%d/%d" % (st.get("readyReplicas", 0),
                                              (d.get("spec") or {}).get("replicas", 1)),
            st.get("updatedReplicas", 0), st.get("availableReplicas", 0),
            age(d["metadata"].get("creationTimestamp"))]


def _rs_row(r):
    st = r.get("status") or {}
    return [r["metadata"]["name"], (r.get("spec") or {}).get("replicas", 1),
            st.get("replicas", 0), st.get("readyReplicas", 0),
            age(r["metadata"].get("creationTimestamp"))]


def _ep_row(e):
    eps = []
    for sub in e.get("subsets") or []:
        ports = [p.get("port") for p in sub.get("ports") or []] or [None]
        for a in sub.get("addresses") or []:
            for p in ports:
                eps.append(a["ip"] if p is None else "%s:%s" % (a["ip"], p))
    text = ",".join(eps[:3]) + (" + %d more..." % (len(eps) - 3) if len(eps) > 3 else "")
    return [e["metadata"]["name"], text or "<none>", age(e["metadata"].get("creationTimestamp"))]


def _sa_row(a):
    return [a["metadata"]["name"], len(a.get("secrets") or []),
            age(a["metadata"].get("creationTimestamp"))]


_BUILTIN = {
    "endpoints": ([NAME, _col("Endpoints"), AGE], _ep_row),
    "serviceaccounts": ([NAME, _col("Secrets", "integer"), AGE], _sa_row),
    "deployments.apps": ([NAME, _col("Ready"), _col("Up-to-date", "integer"),
                          _col("Available", "integer"), AGE], _deploy_row),
    "replicasets.apps": ([NAME, _col("Desired", "integer"), _col("Current", "integer"),
                          _col("Ready", "integer"), AGE], _rs_row),
    "customresourcedefinitions.apiextensions.k8s.io": (
        [NAME, _col("Created At", "date")], _crd_row),
    "pods": (_POD_COLS, _pod_row),
    "jobs.batch": (_JOB_COLS, _job_row),
    "services": (_SVC_COLS, _svc_row),
    "namespaces": ([NAME, _col("Status"), AGE], _ns_row),
    "nodes": ([NAME, _col("Status"), _col("Roles"), AGE, _col("Version")], _node_row),
    "configmaps": ([NAME, _col("Data", "integer"), AGE], _cm_row),
    "secrets": ([NAME, _col("Type"), _col("Data", "integer"), AGE], _secret_row),
    "events": ([_col("Last Seen"), _col("Type"), _col("Reason"), _col("Object"),
                _col("Message")], _ev_row),
}


def _cell(obj, col):
    try:
        vals = evaluate(obj, col.get("jsonPath", ""))
    except ValueError:
        return None
    if not vals:
        return None
    v = vals[0] if len(vals) == 1 else " ".join(
        json.dumps(x) if isinstance(x, (dict, list)) else str(x) for x in vals)
    if col.get("type") == "date" and isinstance(v, str):
        return age(v)
    if isinstance(v, (dict, list)):
        return json.dumps(v, separators=(",", ":"))
    return v


def columns_and_rower(info, version):
    if info.crd is not None:
        cols = crdmod.printer_columns(info, version)
        if cols is None:
            return [NAME, AGE], lambda o: [o["metadata"]["name"],
                                           age(o["metadata"].get("creationTimestamp"))]
        defs = [NAME] + [_col(c["name"], c.get("type", "string"), c.get("format", ""),
                              c.get("description", ""), c.get("priority", 0)) for c in cols]
        return defs, lambda o: [o["metadata"]["name"]] + [_cell(o, c) for c in cols]
    if info.key in _BUILTIN:
        return _BUILTIN[info.key]
    return [NAME, AGE], lambda o: [o["metadata"]["name"],
                                   age(o["metadata"].get("creationTimestamp"))]


def table(info, version, objs, list_md, include_object="Object", no_headers=False):
    cols, rower = columns_and_rower(info, version)
    rows = []
    for o in objs:
        row = {"cells": rower(o)}
        if include_object == "Object":
            row["object"] = o
        elif include_object != "None":
            row["object"] = {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                             "metadata": o.get("metadata", {})}
        rows.append(row)
    t = {"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": list_md, "rows": rows}
    t["columnDefinitions"] = [] if no_headers else cols
    return t
