"""Endpoints controller: for every Service with a selector, an Endpoints object listing
the IPs of matching pods (ready -> addresses, else notReadyAddresses), with hostname
set for pods whose spec.subdomain names the service (headless-service DNS)."""
import asyncio
import logging

from .selectors import match_labels

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
        store.subscribe("pods", self._kick)
        store.subscribe("services", self._on_service)

    def _on_service(self, etype, svc):
        md = svc["metadata"]
        if etype == "DELETED" and self.store.try_get("endpoints", md["namespace"], md["name"]):
            self.store.delete("endpoints", md["namespace"], md["name"])
        self._kick(etype, svc)

    def _kick(self, etype, obj):
        if not self.scheduled:
            self.scheduled = True
            asyncio.get_event_loop().call_later(0.01, self._sync_safe)

    def _sync_safe(self):
        self.scheduled = False
        try:
            self.sync()
        except Exception:
            log.exception("endpoints sync failed")

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
        s = self.store
        services = s.list("services")
        live = set()
        for svc in services:
            md = svc["metadata"]
            ns, name = md["namespace"], md["name"]
            sel = (svc.get("spec") or {}).get("selector")
            live.add((ns, name))
            if not sel:
                continue
            pods = [p for p in s.list("pods", ns) if match_labels(sel, p["metadata"].get(
                "labels")) and (p.get("status") or {}).get("podIP") and
                not p["metadata"].get("deletionTimestamp") and
                (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")]
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
            cur = s.try_get("endpoints", ns, name)
            if cur is None:
                s.create("endpoints", ns, want)
            elif cur.get("subsets") != want.get("subsets") or \
                    cur["metadata"].get("labels") != labels:
                cur["subsets"] = subsets
                if not subsets:
                    cur.pop("subsets")
                cur["metadata"]["labels"] = labels
                s.update("endpoints", ns, cur)
