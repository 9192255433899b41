"""apps/v1 Deployments and ReplicaSets: defaults, the ReplicaSet controller (keeps
spec.replicas pods from the template) and the Deployment controller (one ReplicaSet per
pod-template hash, RollingUpdate and Recreate, revision history, status and conditions as
`kubectl rollout status` reads them). Enough to run `kubectl create -f deploy/...`."""
import asyncio
import hashlib
import json
import logging

from . import errors
from .defaults import pod_spec_defaults
from .errors import ApiError
from .selectors import label_selector_from_object, match_requirements
from .store import deepcopy, now

log = logging.getLogger("kubesim.apps")
DEPLOY = "deployments.apps"
RS = "replicasets.apps"
_CHARS = "bcdfghjklmnpqrstvwxz2456789"


def template_hash(tmpl):
    h = int(hashlib.sha1(json.dumps(tmpl, sort_keys=True).encode()).hexdigest(), 16)
    out = ""
    for _ in range(10):
        out += _CHARS[h % len(_CHARS)]
        h //= len(_CHARS)
    return out


def _validate_selector(kind, obj):
    md = obj["metadata"]
    spec = obj.get("spec") or {}
    name = md.get("name") or md.get("generateName", "")
    sel = spec.get("selector")
    if not sel:
        raise errors.invalid(kind, name, [("spec.selector", "Required value")])
    labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
    if not match_requirements(label_selector_from_object(sel), labels):
        raise errors.invalid(kind, name, [("spec.template.metadata.labels", "Invalid value: %s: "
                                           "`selector` does not match template `labels`"
                                           % json.dumps(labels, separators=(",", ":")))])


def deployment_create(store, info, d):
    spec = d.setdefault("spec", {})
    spec.setdefault("replicas", 1)
    spec.setdefault("revisionHistoryLimit", 10)
    spec.setdefault("progressDeadlineSeconds", 600)
    st = spec.setdefault("strategy", {"type": "RollingUpdate"})
    st.setdefault("type", "RollingUpdate")
    if st["type"] == "RollingUpdate":
        ru = st.setdefault("rollingUpdate", {})
        ru.setdefault("maxUnavailable", "25%")
        ru.setdefault("maxSurge", "25%")
    pod_spec_defaults(spec.setdefault("template", {}).setdefault("spec", {}))
    _validate_selector("Deployment", d)
    d["status"] = {}


def deployment_update(store, info, old, new):
    pod_spec_defaults(new.setdefault("spec", {}).setdefault("template", {}).setdefault(
        "spec", {}))
    _validate_selector("Deployment", new)
    if new["spec"].get("selector") != old.get("spec", {}).get("selector"):
        raise errors.invalid("Deployment", new["metadata"]["name"], [
            ("spec.selector", "Invalid value: %s: field is immutable" % json.dumps(
                new["spec"].get("selector"), separators=(",", ":")))])


def replicaset_create(store, info, rs):
    spec = rs.setdefault("spec", {})
    spec.setdefault("replicas", 1)
    pod_spec_defaults(spec.setdefault("template", {}).setdefault("spec", {}))
    _validate_selector("ReplicaSet", rs)
    rs["status"] = {"replicas": 0}


def _ready(p):
    for c in (p.get("status") or {}).get("conditions") or []:
        if c.get("type") == "Ready":
            return c.get("status") == "True"
    return False


def _owned(objs, uid):
    out = []
    for o in objs:
        for ref in o["metadata"].get("ownerReferences") or []:
            if ref.get("uid") == uid and ref.get("controller"):
                out.append(o)
    return out


def _cond(typ, status, reason, message, old=None):
    t = now()
    c = {"type": typ, "status": status, "lastUpdateTime": t, "lastTransitionTime": t,
         "reason": reason, "message": message}
    if old and old.get("status") == status:
        c["lastTransitionTime"] = old.get("lastTransitionTime", t)
        if old.get("reason") == reason and old.get("message") == message:
            c["lastUpdateTime"] = old.get("lastUpdateTime", t)
    return c


class AppsController:
    """ReplicaSet and Deployment controllers (level-triggered, debounced)."""

    def __init__(self, store):
        self.store = store
        self.scheduled = False
        store.hooks_create.setdefault(DEPLOY, []).append(deployment_create)
        store.hooks_update.setdefault(DEPLOY, []).append(deployment_update)
        store.hooks_create.setdefault(RS, []).append(replicaset_create)
        for r in (DEPLOY, RS, "pods"):
            store.subscribe(r, self._kick)

    def _kick(self, etype, obj):
        if not self.scheduled:
            self.scheduled = True
            asyncio.get_event_loop().call_later(0.02, self._run)

    def _run(self):
        self.scheduled = False
        try:
            if not self.store.data.get(DEPLOY) and not self.store.data.get(RS):
                return
            for d in self.store.list(DEPLOY):
                self.sync_deployment(d)
            for rs in self.store.list(RS):
                self.sync_rs(rs)
        except ApiError as e:
            if e.code not in (404, 409):
                log.warning("apps controller: %s", e.message)
            self._kick(None, None)
        except Exception:
            log.exception("apps controller failed")

    # ---- ReplicaSet ---------------------------------------------------------
    def sync_rs(self, rs):
        s = self.store
        md = rs["metadata"]
        ns = md["namespace"]
        pods = _owned(s.list("pods", ns), md["uid"])
        active = [p for p in pods if not p["metadata"].get("deletionTimestamp") and
                  (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")]
        want = rs["spec"].get("replicas", 1)
        if md.get("deletionTimestamp"):
            want = len(active)
        if len(active) < want:
            for _ in range(want - len(active)):
                active.append(self._create_pod(rs))
        elif len(active) > want:
            def rank(p):
                return (bool((p.get("spec") or {}).get("nodeName")),
                        (p.get("status") or {}).get("phase") == "Running", _ready(p),
                        [-ord(ch) for ch in p["metadata"].get("creationTimestamp", "")])
            for p in sorted(active, key=rank)[:len(active) - want]:
                try:
                    s.delete("pods", ns, p["metadata"]["name"])
                    s.record_event(None, rs, "Normal", "SuccessfulDelete",
                                   "Deleted pod: %s" % p["metadata"]["name"],
                                   "replicaset-controller")
                except ApiError:
                    pass
                active.remove(p)
        ready = sum(1 for p in active if _ready(p))
        st = {"replicas": len(active), "fullyLabeledReplicas": len(active),
              "readyReplicas": ready, "availableReplicas": ready,
              "observedGeneration": md.get("generation", 1)}
        for k in ("fullyLabeledReplicas", "readyReplicas", "availableReplicas"):
            if not st[k]:
                del st[k]
        if st != (rs.get("status") or {}):
            s.update_status(RS, ns, md["name"], st)

    def _create_pod(self, rs):
        md = rs["metadata"]
        tmpl = deepcopy(rs["spec"].get("template") or {})
        tmd = tmpl.get("metadata") or {}
        pod = {"metadata": {"generateName": md["name"] + "-",
                            "labels": dict(tmd.get("labels") or {}),
                            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                                 "name": md["name"], "uid": md["uid"],
                                                 "controller": True,
                                                 "blockOwnerDeletion": True}]},
               "spec": tmpl.get("spec") or {}}
        if tmd.get("annotations"):
            pod["metadata"]["annotations"] = dict(tmd["annotations"])
        try:
            p = self.store.create("pods", md["namespace"], pod)
        except ApiError as e:
            self.store.record_event(None, rs, "Warning", "FailedCreate",
                                    "Error creating: %s" % e.message, "replicaset-controller")
            raise
        self.store.record_event(None, rs, "Normal", "SuccessfulCreate",
                                "Created pod: %s" % p["metadata"]["name"],
                                "replicaset-controller")
        return p

    # ---- Deployment -----------------------------------------------------------
    def sync_deployment(self, d):
        s = self.store
        md = d["metadata"]
        ns = md["namespace"]
        if md.get("deletionTimestamp"):
            return
        spec = d["spec"]
        replicas = spec.get("replicas", 1)
        tmpl = spec.get("template") or {}
        h = template_hash(tmpl)
        rss = _owned(s.list(RS, ns), md["uid"])
        new = next((r for r in rss if (r["metadata"].get("labels") or {}).get(
            "pod-template-hash") == h), None)
        old = [r for r in rss if r is not new]
        revs = [int((r["metadata"].get("annotations") or {}).get(
            "deployment.kubernetes.io/revision", "0")) for r in rss]
        recreate = (spec.get("strategy") or {}).get("type") == "Recreate"
        old_pods = sum((r.get("status") or {}).get("replicas", 0) for r in old)
        if spec.get("paused"):
            pass
        elif new is None:
            labels = dict((tmpl.get("metadata") or {}).get("labels") or {})
            labels["pod-template-hash"] = h
            t = deepcopy(tmpl)
            t.setdefault("metadata", {})["labels"] = labels
            sel = deepcopy(spec.get("selector") or {})
            sel.setdefault("matchLabels", {})["pod-template-hash"] = h
            rev = max(revs + [0]) + 1
            new = s.create(RS, ns, {
                "metadata": {"name": "%s-%s" % (md["name"], h), "labels": labels,
                             "annotations": {"deployment.kubernetes.io/revision": str(rev),
                                             "deployment.kubernetes.io/desired-replicas":
                                             str(replicas),
                                             "deployment.kubernetes.io/max-replicas":
                                             str(replicas)},
                             "ownerReferences": [{"apiVersion": "apps/v1",
                                                  "kind": "Deployment", "name": md["name"],
                                                  "uid": md["uid"], "controller": True,
                                                  "blockOwnerDeletion": True}]},
                "spec": {"replicas": 0 if recreate and old_pods else replicas,
                         "selector": sel, "template": t,
                         **({"minReadySeconds": spec["minReadySeconds"]}
                            if spec.get("minReadySeconds") else {})}})
            s.record_event(None, d, "Normal", "ScalingReplicaSet",
                           "Scaled up replica set %s from 0 to %d" % (new["metadata"]["name"],
                                                                      replicas),
                           "deployment-controller")
        else:
            want = 0 if recreate and old_pods else replicas
            if new["spec"].get("replicas") != want:
                before = new["spec"].get("replicas", 0)

                def f(o, want=want):
                    o["spec"]["replicas"] = want
                    o["metadata"].setdefault("annotations", {})[
                        "deployment.kubernetes.io/desired-replicas"] = str(replicas)
                new = s.mutate(RS, ns, new["metadata"]["name"], f)
                s.record_event(None, d, "Normal", "ScalingReplicaSet",
                               "Scaled %s replica set %s from %d to %d" % (
                                   "up" if want > before else "down", new["metadata"]["name"],
                                   before, want), "deployment-controller")
        new_avail = (new.get("status") or {}).get("availableReplicas", 0) if new else 0
        if new is not None and not spec.get("paused") and (recreate or new_avail >= replicas):
            for r in old:
                if r["spec"].get("replicas", 0) != 0:
                    s.mutate(RS, ns, r["metadata"]["name"],
                             lambda o: o["spec"].__setitem__("replicas", 0))
                    s.record_event(None, d, "Normal", "ScalingReplicaSet",
                                   "Scaled down replica set %s from %d to 0" % (
                                       r["metadata"]["name"], r["spec"].get("replicas", 0)),
                                   "deployment-controller")
        # history limit
        limit = spec.get("revisionHistoryLimit", 10)
        idle = sorted([r for r in old if r["spec"].get("replicas", 0) == 0 and
                       not (r.get("status") or {}).get("replicas")],
                      key=lambda r: int((r["metadata"].get("annotations") or {}).get(
                          "deployment.kubernetes.io/revision", "0")))
        for r in idle[:max(0, len(idle) - limit)]:
            try:
                s.delete(RS, ns, r["metadata"]["name"])
            except ApiError:
                pass
        self._status(d, new, old)

    def _status(self, d, new, old):
        s = self.store
        md = d["metadata"]
        spec = d["spec"]
        replicas = spec.get("replicas", 1)
        allrs = ([new] if new else []) + old
        tot = sum((r.get("status") or {}).get("replicas", 0) for r in allrs)
        ready = sum((r.get("status") or {}).get("readyReplicas", 0) for r in allrs)
        avail = sum((r.get("status") or {}).get("availableReplicas", 0) for r in allrs)
        updated = (new.get("status") or {}).get("replicas", 0) if new else 0
        cur = d.get("status") or {}
        oldc = {c.get("type"): c for c in cur.get("conditions") or []}
        conds = []
        if avail >= replicas:
            conds.append(_cond("Available", "True", "MinimumReplicasAvailable",
                               "Deployment has minimum availability.", oldc.get("Available")))
        else:
            conds.append(_cond("Available", "False", "MinimumReplicasUnavailable",
                               "Deployment does not have minimum availability.",
                               oldc.get("Available")))
        rsname = new["metadata"]["name"] if new else ""
        if new and updated == replicas and avail >= replicas and tot == replicas:
            conds.append(_cond("Progressing", "True", "NewReplicaSetAvailable",
                               'ReplicaSet "%s" has successfully progressed.' % rsname,
                               oldc.get("Progressing")))
        else:
            conds.append(_cond("Progressing", "True", "ReplicaSetUpdated",
                               'ReplicaSet "%s" is progressing.' % rsname,
                               oldc.get("Progressing")))
        st = {"observedGeneration": md.get("generation", 1), "replicas": tot,
              "updatedReplicas": updated, "readyReplicas": ready, "availableReplicas": avail,
              "conditions": conds}
        if replicas - avail > 0:
            st["unavailableReplicas"] = replicas - avail
        for k in ("replicas", "updatedReplicas", "readyReplicas", "availableReplicas"):
            if not st[k]:
                del st[k]
        if st != cur:
            s.update_status(DEPLOY, md["namespace"], md["name"], st)
