"""Endpoints controller: for every Service with a selector, an Endpoints object listing
the IPs of matching pods (ready -> addresses, else notReadyAddresses), with hostname
set for pods whose spec.subdomain names the service (headless-service DNS).

Event-driven per Service: a Service change resyncs that Service; a pod change resyncs
the Services whose selector matches the pod now (found through a selector index: each
Service is filed under one key=value of its selector, the least used one) and those
whose Endpoints listed it. Pods come from the store's label index, not a scan."""
import asyncio
import logging

from .selectors import match_labels
from .store import deepcopy

log = logging.getLogger("kubesim.endpoints")


def pod_ready(p):
    for c in (p.get("status") or {}).get("conditions") or []:
        if c.get("type") == "Ready":
            return c.get("status") == "True"
    return False


class EndpointsController:
    def __init__(self, store):
        self.store = store
        self.scheduled = False
        self.dirty = set()       # (ns, service name)
        self.full = True         # first pass: every Service
        self.filed = {}          # (ns, service) -> (key, value) it is filed under
        self.by_pair = {}        # (ns, key, value) -> {service}
        self.listed = {}         # (ns, service) -> {pod names in its Endpoints}
        self.member = {}         # (ns, pod name) -> {services whose Endpoints list it}
        store.subscribe("pods", self._on_pod, readonly=True)
        store.subscribe("services", self._on_service, readonly=True)

    def _file(self, ns, name, sel):
        """(Re)files a Service in the selector index under its least used pair."""
        self._unfile(ns, name)
        if not isinstance(sel, dict) or not sel:
            return
        pair = min(sorted(sel.items()), key=lambda kv: len(self.by_pair.get(
            (ns, kv[0], kv[1]), ())))
        self.filed[(ns, name)] = pair
        self.by_pair.setdefault((ns, pair[0], pair[1]), set()).add(name)

    def _unfile(self, ns, name):
        pair = self.filed.pop((ns, name), None)
        if pair is not None:
            names = self.by_pair.get((ns, pair[0], pair[1]))
            if names is not None:
                names.discard(name)
                if not names:
                    del self.by_pair[(ns, pair[0], pair[1])]

    def _on_service(self, etype, svc):
        md = svc["metadata"]
        ns, name = md["namespace"], md["name"]
        if etype == "DELETED":
            self._unfile(ns, name)
            self._set_listed(ns, name, set())
            if self.store.stored("endpoints", ns, name) is not None:
                self.store.delete("endpoints", ns, name)
        elif self.filed.get((ns, name)) is None or \
                self.filed[(ns, name)] not in ((svc.get("spec") or {}).get("selector") or
                                               {}).items():
            self._file(ns, name, (svc.get("spec") or {}).get("selector"))
        self._kick(ns, name)

    def _on_pod(self, etype, pod):
        md = pod["metadata"]
        ns = md.get("namespace", "")
        labels = md.get("labels") or {}
        svcs = set(self.member.get((ns, md["name"]), ()))
        for k, v in labels.items():
            for name in self.by_pair.get((ns, k, v), ()):
                svc = self.store.stored("services", ns, name)
                sel = (svc.get("spec") or {}).get("selector") if svc else None
                if sel and match_labels(sel, labels):
                    svcs.add(name)
        for name in svcs:
            self._kick(ns, name)

    def _kick(self, ns, name):
        self.dirty.add((ns, name))
        if not self.scheduled:
            self.scheduled = True
            asyncio.get_event_loop().call_later(0.01, self._sync_safe)

    def _sync_safe(self):
        self.scheduled = False
        try:
            self.sync()
        except Exception:
            log.exception("endpoints sync failed")

    def _set_listed(self, ns, name, pods):
        for p in self.listed.pop((ns, name), set()) - pods:
            m = self.member.get((ns, p))
            if m is not None:
                m.discard(name)
                if not m:
                    del self.member[(ns, p)]
        if pods:
            self.listed[(ns, name)] = pods
            for p in pods:
                self.member.setdefault((ns, p), set()).add(name)

    def _port(self, sp, pods):
        tp = sp.get("targetPort", sp.get("port"))
        if isinstance(tp, str) and not tp.isdigit():
            for p in pods:
                for c in p.get("spec", {}).get("containers") or []:
                    for cp in c.get("ports") or []:
                        if cp.get("name") == tp:
                            return cp.get("containerPort")
            return None
        return int(tp)

    def sync(self):
        """Brings the Endpoints of the changed Services (all of them on the first pass) up
        to date."""
        s = self.store
        if self.full:
            self.full = False
            services = s.list("services", copy=False)
            for svc in services:
                md = svc["metadata"]
                self._file(md["namespace"], md["name"], (svc.get("spec") or {}).get("selector"))
            self.dirty = set()
        else:
            todo, self.dirty = sorted(self.dirty), set()
            services = [x for x in (s.stored("services", ns, n) for ns, n in todo) if x]
        for svc in services:
            md = svc["metadata"]
            ns, name = md["namespace"], md["name"]
            sel = (svc.get("spec") or {}).get("selector")
            if not sel:
                continue
            pods = [p for p in s.select("pods", ns, sel) if (p.get("status") or {}).get(
                "podIP") and not p["metadata"].get("deletionTimestamp") and
                (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")]
            self._set_listed(ns, name, {p["metadata"]["name"] for p in pods})
            publish = (svc.get("spec") or {}).get("publishNotReadyAddresses", False)
            ready, not_ready = [], []
            for p in pods:
                a = {"ip": p["status"]["podIP"], "targetRef": {
                    "kind": "Pod", "namespace": ns, "name": p["metadata"]["name"],
                    "uid": p["metadata"]["uid"]}}
                if p["spec"].get("nodeName"):
                    a["nodeName"] = p["spec"]["nodeName"]
                if p["spec"].get("hostname") and p["spec"].get("subdomain") == name:
                    a["hostname"] = p["spec"]["hostname"]
                (ready if publish or pod_ready(p) else not_ready).append(a)
            ports = []
            for sp in (svc.get("spec") or {}).get("ports") or []:
                port = self._port(sp, pods)
                if port is None:
                    continue
                e = {"port": port, "protocol": sp.get("protocol", "TCP")}
                if sp.get("name"):
                    e["name"] = sp["name"]
                ports.append(e)
            subsets = []
            if ready or not_ready:
                sub = {}
                if ready:
                    sub["addresses"] = sorted(ready, key=lambda a: a["ip"])
                if not_ready:
                    sub["notReadyAddresses"] = sorted(not_ready, key=lambda a: a["ip"])
                if ports:
                    sub["ports"] = ports
                subsets.append(sub)
            labels = dict(md.get("labels") or {})
            if (svc.get("spec") or {}).get("clusterIP") == "None":
                labels["service.kubernetes.io/headless"] = ""
            want = {"metadata": {"name": name, "namespace": ns, "labels": labels}}
            if subsets:
                want["subsets"] = subsets
            cur = s.stored("endpoints", ns, name)
            if cur is None:
                s.create("endpoints", ns, want)
            elif cur.get("subsets") != want.get("subsets") or \
                    cur["metadata"].get("labels") != labels:
                cur = deepcopy(cur)
                cur["subsets"] = subsets
                if not subsets:
                    cur.pop("subsets")
                cur["metadata"]["labels"] = labels
                s.update("endpoints", ns, cur)
