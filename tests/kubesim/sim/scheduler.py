"""default-scheduler: binds pending pods to nodes.

Filters: node Ready and without NoSchedule taints the pod does not tolerate,
spec.nodeSelector, requiredDuringScheduling node affinity (matchExpressions
In/NotIn/Exists/DoesNotExist on labels), and resource requests (cpu, memory,
pods, extended resources such as nvidia.com/gpu) against allocatable minus what
bound, non-terminal pods request. Among feasible nodes it picks the least
loaded. An unschedulable pod gets PodScheduled=False/Unschedulable with the
scheduler's message and a FailedScheduling event, and is retried whenever pods
or nodes change and every few seconds.
"""
import asyncio
import logging

from .volumes import quantity

log = logging.getLogger("kubesim.scheduler")
RETRY_SECONDS = 5


def pod_requests(pod):
    """Effective requests: max(sum of containers, max of init containers) per resource."""
    spec = pod.get("spec", {})
    total = {}
    for c in spec.get("containers") or []:
        r = (c.get("resources") or {})
        req = dict(r.get("limits") or {})
        req.update(r.get("requests") or {})
        for k, v in req.items():
            total[k] = total.get(k, 0) + quantity(v)
    for c in spec.get("initContainers") or []:
        r = (c.get("resources") or {})
        req = dict(r.get("limits") or {})
        req.update(r.get("requests") or {})
        for k, v in req.items():
            total[k] = max(total.get(k, 0), quantity(v))
    total["pods"] = 1
    return total


def _terminal(pod):
    return pod.get("status", {}).get("phase") in ("Succeeded", "Failed")


def _match_expr(labels, e):
    k, op, vals = e.get("key"), e.get("operator"), e.get("values") or []
    if op == "In":
        return k in labels and labels[k] in vals
    if op == "NotIn":
        return k not in labels or labels[k] not in vals
    if op == "Exists":
        return k in labels
    if op == "DoesNotExist":
        return k not in labels
    if op in ("Gt", "Lt"):
        try:
            a, b = int(labels.get(k, "")), int(vals[0])
        except (ValueError, IndexError):
            return False
        return a > b if op == "Gt" else a < b
    return False


def _affinity_ok(pod, labels):
    na = ((pod["spec"].get("affinity") or {}).get("nodeAffinity") or {})
    req = na.get("requiredDuringSchedulingIgnoredDuringExecution")
    if not req:
        return True
    for term in req.get("nodeSelectorTerms") or []:
        if all(_match_expr(labels, e) for e in term.get("matchExpressions") or []):
            return True
    return False


def _tolerates(pod, taint):
    for t in pod["spec"].get("tolerations") or []:
        if t.get("effect") and t["effect"] != taint.get("effect"):
            continue
        if t.get("operator") == "Exists" and (not t.get("key") or t["key"] == taint["key"]):
            return True
        if t.get("key") == taint["key"] and t.get("value", "") == taint.get("value", ""):
            return True
    return False


class Scheduler:
    """Watches pods and nodes in the store and binds pending pods."""

    def __init__(self, store, name="default-scheduler"):
        self.store = store
        self.name = name
        self._pending = False
        self._task = None
        self._last_msg = {}

    def start(self):
        self.store.subscribe("pods", lambda t, o: self.kick())
        self.store.subscribe("nodes", lambda t, o: self.kick())
        self._task = asyncio.ensure_future(self._periodic())
        self.kick()

    def stop(self):
        if self._task:
            self._task.cancel()

    async def _periodic(self):
        while True:
            await asyncio.sleep(RETRY_SECONDS)
            self.kick(retry=True)

    def kick(self, retry=False):
        if self._pending:
            return
        self._pending = True
        asyncio.get_event_loop().call_soon(self._run, retry)

    def _run(self, retry):
        self._pending = False
        try:
            self.schedule_all(retry)
        except Exception:
            log.exception("scheduling pass failed")

    def schedule_all(self, retry=False):
        pods = self.store.list("pods", copy=False)   # read only (stored objects)
        pending = [p for p in pods if not p["spec"].get("nodeName") and not _terminal(p)
                   and not p["metadata"].get("deletionTimestamp")
                   and p["spec"].get("schedulerName", "default-scheduler") == self.name]
        if not pending:
            return
        nodes = self.store.list("nodes", copy=False)
        used = {n["metadata"]["name"]: {} for n in nodes}
        for p in pods:
            nn = p["spec"].get("nodeName")
            if nn in used and not _terminal(p):
                for k, v in pod_requests(p).items():
                    used[nn][k] = used[nn].get(k, 0) + v
        pending.sort(key=lambda p: (-int(p["spec"].get("priority") or 0),
                                    p["metadata"].get("creationTimestamp", ""),
                                    p["metadata"]["name"]))
        for p in pending:
            self.schedule_one(p, nodes, used, retry)

    def schedule_one(self, pod, nodes, used, retry):
        ns, name = pod["metadata"]["namespace"], pod["metadata"]["name"]
        req = pod_requests(pod)
        reasons = {}
        feasible = []
        for n in nodes:
            nn = n["metadata"]["name"]
            why = self._filter(pod, n, req, used[nn])
            if why:
                for w in why:
                    reasons[w] = reasons.get(w, 0) + 1
            else:
                feasible.append(n)
        if not feasible:
            self._unschedulable(pod, len(nodes), reasons, retry)
            return
        def load(n):
            alloc = n["status"].get("allocatable", {})
            u = used[n["metadata"]["name"]]
            return sum(float(u.get(k, 0)) / float(quantity(alloc[k])) for k in ("cpu", "memory", "pods")
                       if k in alloc and quantity(alloc[k]) > 0)
        node = min(feasible, key=lambda n: (load(n), n["metadata"]["name"]))
        nn = node["metadata"]["name"]
        try:
            self.store.bind(ns, name, nn)
        except Exception as e:
            log.info("bind %s/%s: %s", ns, name, e)
            return
        for k, v in req.items():
            used[nn][k] = used[nn].get(k, 0) + v

        def f(o):
            conds = [c for c in o.setdefault("status", {}).get("conditions") or []
                     if c.get("type") != "PodScheduled"]
            conds.insert(0, {"type": "PodScheduled", "status": "True", "lastProbeTime": None,
                             "lastTransitionTime": self.store.now()})
            o["status"]["conditions"] = conds
        try:
            self.store.mutate("pods", ns, name, f)
        except Exception:
            pass
        self._last_msg.pop((ns, name), None)
        self.store.record_event(ns, pod_ref(pod), "Normal", "Scheduled",
                                "Successfully assigned %s/%s to %s" % (ns, name, nn), self.name)

    def _filter(self, pod, node, req, used):
        spec = pod["spec"]
        labels = node["metadata"].get("labels") or {}
        why = []
        for t in node.get("spec", {}).get("taints") or []:
            if t.get("effect") in ("NoSchedule", "NoExecute") and not _tolerates(pod, t):
                why.append("node(s) had untolerated taint {%s: %s}" % (t["key"], t.get("value", "")))
                return why
        if node.get("spec", {}).get("unschedulable"):
            return ["node(s) were unschedulable"]
        sel = spec.get("nodeSelector") or {}
        if any(labels.get(k) != v for k, v in sel.items()) or not _affinity_ok(pod, labels):
            return ["node(s) didn't match Pod's node affinity/selector"]
        alloc = node.get("status", {}).get("allocatable", {})
        for k, v in sorted(req.items()):
            if v == 0 and k != "pods":
                continue
            have = quantity(alloc.get(k, 0))
            if used.get(k, 0) + v > have:
                why.append("Too many pods" if k == "pods" else "Insufficient %s" % k)
        return why

    def _unschedulable(self, pod, nnodes, reasons, retry):
        ns, name = pod["metadata"]["namespace"], pod["metadata"]["name"]
        if nnodes == 0:
            msg = "no nodes available to schedule pods"
        else:
            parts = ", ".join("%d %s" % (c, r) for r, c in sorted(reasons.items()))
            msg = ("0/%d nodes are available: %s. preemption: 0/%d nodes are available: "
                   "%d No preemption victims found for incoming pod." % (nnodes, parts, nnodes, nnodes))
        key = (ns, name)
        if self._last_msg.get(key) == msg and not retry:
            return
        first = key not in self._last_msg
        self._last_msg[key] = msg
        cond = None
        for c in pod.get("status", {}).get("conditions") or []:
            if c.get("type") == "PodScheduled":
                cond = c
        if cond is None or cond.get("status") != "False" or cond.get("message") != msg:
            def f(o):
                conds = [c for c in o.setdefault("status", {}).get("conditions") or []
                         if c.get("type") != "PodScheduled"]
                conds.insert(0, {"type": "PodScheduled", "status": "False", "lastProbeTime": None,
                                 "lastTransitionTime": self.store.now(), "reason": "Unschedulable",
                                 "message": msg})
                o["status"]["conditions"] = conds
            try:
                self.store.mutate("pods", ns, name, f)
            except Exception:
                return
        if first or retry:
            self.store.record_event(ns, pod_ref(pod), "Warning", "FailedScheduling", msg, self.name)


def pod_ref(pod):
    return {"kind": "Pod", "apiVersion": "v1", "metadata": pod["metadata"]}
