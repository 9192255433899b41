"""Garbage collector (ownerReferences: background, foreground, orphan), the namespace
lifecycle controller (deletes a terminating namespace's content), and the per-namespace
defaults (service account "default", ConfigMap kube-root-ca.crt).

Incremental, as the real garbage collector's dependency graph: each change marks what it
can affect (the object itself if it has owners; the dependents of a deleted object; its
owners that are being deleted; a terminating namespace), found through the store's uid
and owner indexes, and a debounced pass handles only those. `sweep()` is the full pass
over every object (the unit tests' reference; ~0.5 s at 10,000 objects, so it does not run
periodically: that stalled every request behind it). Every `event_sweep` seconds Events
older than `event_ttl` are deleted, as kube-apiserver's --event-ttl (1 h) does."""
import asyncio
import bisect
import logging
import time

from .errors import ApiError
from .rfc3339 import rfc3339

log = logging.getLogger("kubesim.gc")


class GarbageCollector:
    """Reacts to store changes with a debounced pass over what they affect."""

    def __init__(self, store, ca_pem="", event_ttl=3600.0, event_sweep=60.0):
        self.store = store
        self.ca_pem = ca_pem
        self.scheduled = False
        self.event_ttl = event_ttl
        self.event_sweep = event_sweep
        self.retry_seconds = 1.0
        self.task = None
        self.deps = set()     # (res, ns, name): check that its owners live
        self.owners = set()   # (res, ns, name): being deleted with orphan/foreground
        self.nss = set()      # terminating namespaces to empty
        store.subscribe("*", self._on_event, readonly=True)

    def _on_event(self, res, etype, obj):
        md = obj["metadata"]
        s = self.store
        if res == "namespaces":
            if etype == "ADDED":
                self._namespace_defaults(md["name"])
            if md.get("deletionTimestamp") and etype != "DELETED":
                self.nss.add(md["name"])
        key = (res, md.get("namespace", ""), md["name"])
        if etype == "DELETED":
            self.deps.update(s.dependents(md.get("uid")))
        elif md.get("ownerReferences") and not md.get("deletionTimestamp"):
            self.deps.add(key)
        if etype != "DELETED" and md.get("deletionTimestamp") and \
                set(md.get("finalizers") or ()) & {"orphan", "foregroundDeletion"}:
            self.owners.add(key)
        for ref in md.get("ownerReferences") or []:
            own = s.by_uid(ref.get("uid")) if isinstance(ref, dict) else None
            if own is not None:
                o = s.stored(*own)
                if o is not None and o["metadata"].get("deletionTimestamp"):
                    self.owners.add(own)
        ns = md.get("namespace")
        if ns and res != "namespaces":
            nso = s.stored("namespaces", None, ns)
            if nso is not None and nso["metadata"].get("deletionTimestamp"):
                self.nss.add(ns)
        if (self.deps or self.owners or self.nss) and not self.scheduled:
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

    def start(self):
        """Periodic work: the expiry of old Events."""
        self.task = asyncio.ensure_future(self._loop())

    def stop(self):
        if self.task is not None:
            self.task.cancel()

    async def _loop(self):
        while True:
            await asyncio.sleep(self.event_sweep)
            try:
                self.expire_events()
            except Exception:
                log.exception("event expiry failed")

    def expire_events(self):
        """Deletes Events not seen for event_ttl seconds (kube-apiserver --event-ttl, 1 h)."""
        if self.event_ttl <= 0:
            return
        limit = rfc3339(time.time() - self.event_ttl)
        for ev in self.store.list("events", copy=False):
            if (ev.get("lastTimestamp") or ev["metadata"].get("creationTimestamp") or "") < limit:
                self.store._remove("events", ev["metadata"]["namespace"], ev["metadata"]["name"])

    def _sweep_safe(self):
        self.scheduled = False
        try:
            self.process()
        except Exception:
            log.exception("garbage collector sweep failed")

    def process(self):
        """Handles what the changes since the last pass marked (see the module doc)."""
        s = self.store
        deps, self.deps = sorted(self.deps), set()
        owners, self.owners = sorted(self.owners), set()
        nss, self.nss = sorted(self.nss), set()
        for res, ns, name in deps:
            o = s.stored(res, ns, name)
            if o is not None:
                self._check_dependent(res, o, self._owner_lookup)
        for res, ns, name in owners:
            o = s.stored(res, ns, name)
            if o is not None and o["metadata"].get("deletionTimestamp"):
                deps_of = [(r, s.stored(r, n, m)) for r, n, m in s.dependents(
                    o["metadata"].get("uid"))]
                self._check_owner(res, o, [(r, d) for r, d in deps_of if d is not None])
        for ns in nss:
            o = s.stored("namespaces", None, ns)
            if o is not None and o["metadata"].get("deletionTimestamp"):
                self._empty_namespace(ns, self._namespaced_in(ns))

    def _owner_lookup(self, uid):
        own = self.store.by_uid(uid)
        if own is None:
            return None
        o = self.store.stored(*own)
        return None if o is None else (own[0], o)

    def _namespaced_in(self, ns):
        """[(res, obj)] of every stored object in namespace ns (sorted-key ranges)."""
        s = self.store
        out = []
        for res in sorted(s.data):
            info = s.registry.get(res)
            if info is None or not info.namespaced:
                continue
            keys = s._sorted_keys(res)
            lo = bisect.bisect_left(keys, (ns, ""))
            hi = bisect.bisect_left(keys, (ns + "\0", ""))
            bucket = s.data[res]
            out.extend((res, bucket[k]) for k in keys[lo:hi])
        return out

    def _delete(self, res, ns, name, prop="Background", retry=None):
        """Deletes; on a failure other than 404 the pass that wanted it runs again in
        `retry_seconds` (retry: (set name, item)), as the real GC requeues with back-off."""
        try:
            self.store.delete(res, ns, name, None, prop)
        except ApiError as e:
            if e.code != 404:
                log.warning("gc: delete %s %s/%s: %s", res, ns, name, e.message)
                if retry is not None:
                    asyncio.get_event_loop().call_later(self.retry_seconds, self._retry, *retry)

    def _retry(self, which, item):
        getattr(self, which).add(item)
        if not self.scheduled:
            self.scheduled = True
            asyncio.get_event_loop().call_later(0.02, self._sweep_safe)

    def sweep(self):
        """Full pass over every object (the safety net; process() is the incremental one)."""
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
            self._check_dependent(res, o, uids.get)
        # 2. owners being deleted with orphan / foregroundDeletion finalizers
        for res, o in objs:
            if o["metadata"].get("deletionTimestamp"):
                self._check_owner(res, o, dependents.get(o["metadata"].get("uid"), []))
        # 3. terminating namespaces
        for res, o in objs:
            if res != "namespaces" or not o["metadata"].get("deletionTimestamp"):
                continue
            ns = o["metadata"]["name"]
            self._empty_namespace(ns, [(r2, o2) for r2, o2 in objs
                                       if o2["metadata"].get("namespace") == ns])

    def _check_dependent(self, res, o, owner_of):
        """Deletes o if none of its owners lives (owner_of: uid -> (res, obj) or None)."""
        s = self.store
        md = o["metadata"]
        refs = md.get("ownerReferences") or []
        if not refs or md.get("deletionTimestamp"):
            return
        alive = False
        for ref in refs:
            own = owner_of(ref.get("uid"))
            if own is None:
                continue
            ores, oo = own
            if s.registry.get(ores) and s.registry.get(ores).namespaced and \
                    oo["metadata"].get("namespace") != md.get("namespace"):
                continue
            alive = True
        if not alive:
            self._delete(res, md.get("namespace"), md["name"],
                         retry=("deps", (res, md.get("namespace", ""), md["name"])))

    def _check_owner(self, res, o, dependents):
        """An owner being deleted: orphan its dependents, or delete them first (foreground)."""
        s = self.store
        md = o["metadata"]
        fins = md.get("finalizers") or []
        uid = md.get("uid")
        if "orphan" in fins:
            for dres, d in dependents:
                dmd = d["metadata"]

                def strip(x, uid=uid):
                    x["metadata"]["ownerReferences"] = [
                        r for r in x["metadata"].get("ownerReferences") or []
                        if r.get("uid") != uid]
                    if not x["metadata"]["ownerReferences"]:
                        del x["metadata"]["ownerReferences"]
                if s.stored(dres, dmd.get("namespace"), dmd["name"]) is not None:
                    s.mutate(dres, dmd.get("namespace"), dmd["name"], strip)
            self._drop_finalizer(res, md, "orphan")
        elif "foregroundDeletion" in fins:
            deps = [(dres, d) for dres, d in dependents
                    if s.stored(dres, d["metadata"].get("namespace"),
                                d["metadata"]["name"]) is not None]
            blocking = [x for x in deps if any(
                r.get("uid") == uid and r.get("blockOwnerDeletion")
                for r in x[1]["metadata"].get("ownerReferences") or [])]
            for dres, d in deps:
                if not d["metadata"].get("deletionTimestamp"):
                    self._delete(dres, d["metadata"].get("namespace"), d["metadata"]["name"],
                                 "Foreground",
                                 retry=("owners", (res, md.get("namespace", ""), md["name"])))
            if not blocking:
                # non-blocking dependents do not hold the owner
                self._drop_finalizer(res, md, "foregroundDeletion")

    def _empty_namespace(self, ns, objs):
        """Deletes the content of terminating namespace ns; removes it once empty."""
        s = self.store
        left = 0
        for r2, o2 in objs:
            info = s.registry.get(r2)
            if info is None or not info.namespaced or o2["metadata"].get("namespace") != ns:
                continue
            left += 1
            if not o2["metadata"].get("deletionTimestamp"):
                self._delete(r2, ns, o2["metadata"]["name"], retry=("nss", ns))
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
