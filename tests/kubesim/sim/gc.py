"""Garbage collector (ownerReferences: background, foreground, orphan), the namespace
lifecycle controller (deletes a terminating namespace's content), and the per-namespace
defaults (service account "default", ConfigMap kube-root-ca.crt)."""
import asyncio
import logging

from .errors import ApiError

log = logging.getLogger("kubesim.gc")


class GarbageCollector:
    """Reacts to every store change with a debounced sweep over all objects."""

    def __init__(self, store, ca_pem=""):
        self.store = store
        self.ca_pem = ca_pem
        self.scheduled = False
        store.subscribe("*", self._on_event)

    def _on_event(self, res, etype, obj):
        if res == "namespaces" and etype == "ADDED":
            self._namespace_defaults(obj["metadata"]["name"])
        if res == "events":
            return
        if not self.scheduled:
            self.scheduled = True
            asyncio.get_event_loop().call_later(0.02, self._sweep_safe)

    def _namespace_defaults(self, ns):
        s = self.store
        if s.try_get("serviceaccounts", ns, "default") is None:
            s.create("serviceaccounts", ns, {"metadata": {"name": "default"}})
        if s.try_get("configmaps", ns, "kube-root-ca.crt") is None:
            s.create("configmaps", ns, {"metadata": {
                "name": "kube-root-ca.crt",
                "annotations": {"kubernetes.io/description": "Contains a CA bundle that can be "
                                "used to verify the kube-apiserver when using internal "
                                "endpoints such as the internal service IP or kubernetes."
                                "default.svc. No other usage is guaranteed across distributions "
                                "of Kubernetes clusters."}}, "data": {"ca.crt": self.ca_pem}})

    def _sweep_safe(self):
        self.scheduled = False
        try:
            self.sweep()
        except Exception:
            log.exception("garbage collector sweep failed")

    def _delete(self, res, ns, name, prop="Background"):
        try:
            self.store.delete(res, ns, name, None, prop)
        except ApiError as e:
            if e.code != 404:
                log.warning("gc: delete %s %s/%s: %s", res, ns, name, e.message)

    def sweep(self):
        s = self.store
        objs = list(s.all_objects())
        uids = {}
        for res, o in objs:
            uids[o["metadata"].get("uid")] = (res, o)
        dependents = {}
        for res, o in objs:
            for ref in o["metadata"].get("ownerReferences") or []:
                dependents.setdefault(ref.get("uid"), []).append((res, o))
        # 1. dependents whose owners are all gone
        for res, o in objs:
            md = o["metadata"]
            refs = md.get("ownerReferences") or []
            if not refs or md.get("deletionTimestamp"):
                continue
            alive = False
            for ref in refs:
                own = uids.get(ref.get("uid"))
                if own is None:
                    continue
                ores, oo = own
                if s.registry.get(ores) and s.registry.get(ores).namespaced and \
                        oo["metadata"].get("namespace") != md.get("namespace"):
                    continue
                alive = True
            if not alive:
                self._delete(res, md.get("namespace"), md["name"])
        # 2. owners being deleted with orphan / foregroundDeletion finalizers
        for res, o in objs:
            md = o["metadata"]
            fins = md.get("finalizers") or []
            if not md.get("deletionTimestamp"):
                continue
            uid = md.get("uid")
            if "orphan" in fins:
                for dres, d in dependents.get(uid, []):
                    dmd = d["metadata"]

                    def strip(x, uid=uid):
                        x["metadata"]["ownerReferences"] = [
                            r for r in x["metadata"].get("ownerReferences") or []
                            if r.get("uid") != uid]
                        if not x["metadata"]["ownerReferences"]:
                            del x["metadata"]["ownerReferences"]
                    if s.try_get(dres, dmd.get("namespace"), dmd["name"]):
                        s.mutate(dres, dmd.get("namespace"), dmd["name"], strip)
                self._drop_finalizer(res, md, "orphan")
            elif "foregroundDeletion" in fins:
                deps = [(dres, d) for dres, d in dependents.get(uid, [])
                        if s.try_get(dres, d["metadata"].get("namespace"),
                                     d["metadata"]["name"]) is not None]
                blocking = [x for x in deps if any(
                    r.get("uid") == uid and r.get("blockOwnerDeletion")
                    for r in x[1]["metadata"].get("ownerReferences") or [])]
                for dres, d in deps:
                    if not d["metadata"].get("deletionTimestamp"):
                        self._delete(dres, d["metadata"].get("namespace"), d["metadata"]["name"],
                                     "Foreground")
                if not blocking:
                    # non-blocking dependents do not hold the owner
                    self._drop_finalizer(res, md, "foregroundDeletion")
        # 3. terminating namespaces
        for res, o in objs:
            if res != "namespaces" or not o["metadata"].get("deletionTimestamp"):
                continue
            ns = o["metadata"]["name"]
            left = 0
            for r2, o2 in objs:
                info = s.registry.get(r2)
                if info is None or not info.namespaced or o2["metadata"].get("namespace") != ns:
                    continue
                left += 1
                if not o2["metadata"].get("deletionTimestamp"):
                    self._delete(r2, ns, o2["metadata"]["name"])
            if left == 0:
                s._remove("namespaces", "", ns)

    def _drop_finalizer(self, res, md, fin):
        def f(x):
            x["metadata"]["finalizers"] = [y for y in x["metadata"].get("finalizers") or []
                                           if y != fin]
            if not x["metadata"]["finalizers"]:
                del x["metadata"]["finalizers"]
        if self.store.try_get(res, md.get("namespace"), md["name"]):
            self.store.mutate(res, md.get("namespace"), md["name"], f)
