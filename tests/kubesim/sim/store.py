"""In-memory object store: every API object keyed by (resource key, namespace, name),
with a global resourceVersion counter, watch history, and synchronous change
notifications. See ../INTERFACE.md for the contract used by the node side.

Scale notes (docs/kubesim.md, "Scale"): a stored object is never mutated in place (every
write stores a new dict), so history entries and read-only subscribers share it without
copies; indexes by sorted key (namespace ranges), uid, owner uid and label keep lists,
label selections and owner lookups from scanning every object."""
import bisect
import collections
import random
import time
import uuid

from . import errors, patch as patchmod
from .errors import ApiError
from .jsoncopy import deepcopy
from .rfc3339 import rfc3339
from .registry import Registry, VIRTUAL
from .selectors import match_labels, match_fields, parse_label_selector, parse_field_selector

_GEN_CHARS = "bcdfghjklmnpqrstvwxz2456789"


def now(offset=0):
    """RFC3339 UTC timestamp (seconds precision), optionally offset by seconds."""
    return rfc3339(time.time() + offset)


def now_micro():
    return rfc3339(digits=6)


def _label_keys(res, ns, obj):
    labels = (obj.get("metadata") or {}).get("labels")
    if not isinstance(labels, dict):
        return ()
    return [(res, ns, k, v) for k, v in labels.items() if isinstance(v, str)]


def _owner_uids(obj):
    refs = (obj.get("metadata") or {}).get("ownerReferences")
    if not isinstance(refs, list):
        return ()
    return {r.get("uid") for r in refs if isinstance(r, dict) and r.get("uid")}


def rand_suffix(n=5):
    return "".join(random.choice(_GEN_CHARS) for _ in range(n))


def _spec_part(obj):
    return {k: v for k, v in obj.items() if k not in ("metadata", "status")}


class Store:
    """The simulator's etcd + registry storage layer (synchronous; call from the loop)."""

    def __init__(self, registry=None, watch_window=2000):
        self.registry = registry or Registry()
        self.data = {}
        self.rv = 1
        self.window = max(1, int(watch_window))
        self.history = collections.deque()   # [(rv, key, type, obj)]
        self.compacted = 0         # newest RV no longer in history
        self._subs = {}            # key -> {handle: (cb, readonly)}
        self._all_subs = {}
        self._next_handle = 1
        self._queue = collections.deque()
        self._keys = {}            # res -> sorted [(ns, name)] (None: rebuild on next list)
        self._uids = {}            # uid -> (res, ns, name)
        self._owned = {}           # owner uid -> {(res, ns, name)} (from ownerReferences)
        self._labels = {}          # (res, ns, label, value) -> {name}
        self._event_keys = {}      # (ns, involved uid, reason, message, component) -> name
        self._delivering = False
        self.hooks_create = {}     # key -> [fn(store, info, obj)]   (defaults/admission)
        self.hooks_update = {}     # key -> [fn(store, info, old, new)]
        self.hooks_validate = {}   # key -> [fn(store, info, obj, old)]
        self.now = now

    # ---- helpers -------------------------------------------------------
    def info(self, res):
        info = self.registry.get(res)
        if info is None:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        return info

    def _bucket(self, res):
        return self.data.setdefault(res, {})

    def _ns(self, info, ns):
        return (ns or "") if info.namespaced else ""

    def _bump(self):
        self.rv += 1
        return self.rv

    # ---- indexes (kept by the only two places that change a bucket) -------------
    def _index(self, res, key, obj, add):
        ns, name = key
        uid = obj["metadata"].get("uid")
        for o in _owner_uids(obj):
            if add:
                self._owned.setdefault(o, set()).add((res, ns, name))
            else:
                deps = self._owned.get(o)
                if deps is not None:
                    deps.discard((res, ns, name))
                    if not deps:
                        del self._owned[o]
        for lk in _label_keys(res, ns, obj):
            if add:
                self._labels.setdefault(lk, set()).add(name)
            else:
                names = self._labels.get(lk)
                if names is not None:
                    names.discard(name)
                    if not names:
                        del self._labels[lk]
        if uid:
            if add:
                self._uids[uid] = (res, ns, name)
            elif self._uids.get(uid) == (res, ns, name):
                del self._uids[uid]

    def _put(self, res, key, obj):
        bucket = self._bucket(res)
        old = bucket.get(key)
        if old is not None:
            self._index(res, key, old, False)
        else:
            self._keys[res] = None
        bucket[key] = obj
        self._index(res, key, obj, True)

    def _pop(self, res, key):
        obj = self.data.get(res, {}).pop(key, None)
        if obj is not None:
            self._index(res, key, obj, False)
            self._keys[res] = None
        return obj

    def _sorted_keys(self, res):
        keys = self._keys.get(res)
        if keys is None:
            keys = self._keys[res] = sorted(self.data.get(res, {}))
        return keys

    def by_uid(self, uid):
        """(res, ns, name) of the live object with this uid, or None."""
        return self._uids.get(uid)

    def dependents(self, uid):
        """[(res, ns, name)] of objects whose ownerReferences name uid."""
        return sorted(self._owned.get(uid, ()))

    def stored(self, res, ns, name):
        """The stored object itself (no copy; never mutate it), or None."""
        info = self.registry.get(res)
        if info is None:
            return None
        return self.data.get(res, {}).get((self._ns(info, ns), name))

    def _emit(self, res, etype, obj):
        self.history.append((self.rv, res, etype, obj))
        if len(self.history) > self.window:
            while len(self.history) > self.window:
                self.compacted = self.history.popleft()[0]
        self._queue.append((res, etype, obj))
        if self._delivering:
            return
        self._delivering = True
        try:
            while self._queue:
                r, t, o = self._queue.popleft()
                for cb, ro in list(self._subs.get(r, {}).values()):
                    self._call(cb, (t, o if ro else deepcopy(o)))
                for cb, ro in list(self._all_subs.values()):
                    self._call(cb, (r, t, o if ro else deepcopy(o)))
        finally:
            self._delivering = False

    @staticmethod
    def _call(cb, args):
        try:
            cb(*args)
        except Exception:  # a broken subscriber must not break the store
            import traceback
            traceback.print_exc()

    # ---- subscriptions -------------------------------------------------
    def subscribe(self, res, callback, readonly=False):
        """callback(type, obj) for changes of res ("*": callback(res, type, obj)).
        readonly=True: obj is the stored object itself (no copy), which the callback
        and anything it keeps must never mutate."""
        h = self._next_handle
        self._next_handle += 1
        if res == "*":
            self._all_subs[h] = (callback, readonly)
        else:
            self._subs.setdefault(res, {})[h] = (callback, readonly)
        return h

    def unsubscribe(self, handle):
        self._all_subs.pop(handle, None)
        for d in self._subs.values():
            d.pop(handle, None)

    def events_since(self, rv):
        """History entries with RV > rv; raises 410 Expired if compacted."""
        rv = int(rv)
        if rv < self.compacted:
            raise errors.gone("too old resource version: %d (%d)" % (rv, self.compacted + 1))
        h = self.history
        i = bisect.bisect_right(h, rv, key=lambda e: e[0])
        return [h[j] for j in range(i, len(h))]

    # ---- reads ---------------------------------------------------------
    def get(self, res, ns, name):
        info = self.info(res)
        obj = self.data.get(res, {}).get((self._ns(info, ns), name))
        if obj is None:
            raise errors.not_found(res, name)
        return deepcopy(obj)

    def try_get(self, res, ns, name):
        info = self.registry.get(res)
        if info is None:
            return None
        obj = self.data.get(res, {}).get((self._ns(info, ns), name))
        return deepcopy(obj) if obj is not None else None

    def list(self, res, ns=None, label_selector=None, field_selector=None, copy=True):
        info = self.info(res)
        if isinstance(label_selector, str):
            label_selector = parse_label_selector(label_selector)
        if isinstance(field_selector, str):
            field_selector = parse_field_selector(field_selector)
        bucket = self.data.get(res, {})
        keys = self._sorted_keys(res)
        if info.namespaced and ns:
            lo = bisect.bisect_left(keys, (ns, ""))
            hi = bisect.bisect_left(keys, (ns + "\0", ""))
            keys = keys[lo:hi]
        cand = self._label_candidates(res, ns if info.namespaced else "", label_selector)
        if cand is not None:
            keys = [k for k in keys if k[1] in cand]
        out = []
        for k in keys:
            obj = bucket[k]
            md = obj.get("metadata", {})
            if label_selector and not match_labels(label_selector, md.get("labels")):
                continue
            if field_selector and not match_fields(field_selector, obj):
                continue
            out.append(obj)
        return [deepcopy(o) for o in out] if copy else out

    def _label_candidates(self, res, ns, reqs):
        """Names that can match the equality requirements of a parsed label selector, within
        one namespace (None: no usable requirement or no namespace; filter as usual)."""
        if not reqs or not ns:
            return None
        cand = None
        for key, op, vals in reqs:
            if op == "=":
                names = self._labels.get((res, ns, key, vals[0]), set())
            elif op == "in":
                names = set()
                for v in vals:
                    names |= self._labels.get((res, ns, key, v), set())
            else:
                continue
            cand = set(names) if cand is None else cand & names
        return cand

    def select(self, res, ns, labels):
        """Stored objects (no copies) in namespace ns whose labels include every key=value of
        the dict labels (a Service/Job selector), sorted by name."""
        if not labels:
            return []
        cand = None
        for k, v in labels.items():
            names = self._labels.get((res, ns, k, v), set())
            cand = set(names) if cand is None else cand & names
            if not cand:
                return []
        bucket = self.data.get(res, {})
        return [bucket[(ns, n)] for n in sorted(cand) if (ns, n) in bucket]

    def all_objects(self):
        """Yields (res, obj) for every stored object (no copies; do not mutate)."""
        for res, bucket in list(self.data.items()):
            for obj in list(bucket.values()):
                yield res, obj

    # ---- writes --------------------------------------------------------
    def create(self, res, ns, obj):
        info = self.info(res)
        if res in VIRTUAL:
            raise errors.method_not_allowed()
        obj = deepcopy(obj)
        md = obj.setdefault("metadata", {})
        if not isinstance(md, dict):
            raise errors.bad_request("metadata must be an object")
        if info.namespaced:
            ns = ns or md.get("namespace") or ""
            if md.get("namespace") and md["namespace"] != ns:
                raise errors.bad_request("the namespace of the provided object does not match "
                                         "the namespace sent on the request")
            if not ns:
                raise errors.bad_request("the server could not find the requested resource")
            nso = self.data.get("namespaces", {}).get(("", ns))
            if nso is None:
                raise errors.not_found("namespaces", ns)
            if nso["metadata"].get("deletionTimestamp"):
                name = md.get("name") or md.get("generateName", "")
                raise ApiError(403, "Forbidden",
                               '%s "%s" is forbidden: unable to create new content in namespace '
                               '%s because it is being terminated' % (res, name, ns),
                               {"name": name, "kind": info.plural})
            md["namespace"] = ns
        else:
            ns = ""
            md.pop("namespace", None)
        bucket = self._bucket(res)
        if not md.get("name"):
            gen = md.get("generateName")
            if not gen:
                raise errors.invalid(info.kind, "", [("metadata.name",
                                     "Required value: name or generateName is required")])
            for _ in range(100):
                cand = gen + rand_suffix()
                if (ns, cand) not in bucket:
                    break
            md["name"] = cand
        name = md["name"]
        obj["apiVersion"] = info.api_version()
        obj["kind"] = info.kind
        md["uid"] = str(uuid.uuid4())
        for fn in self.hooks_create.get(res, []) + self.hooks_create.get("*", []):
            fn(self, info, obj)
        for fn in self.hooks_validate.get(res, []) + self.hooks_validate.get("*", []):
            fn(self, info, obj, None)
        if (ns, name) in bucket:
            raise errors.already_exists(res, name)
        for k in ("deletionTimestamp", "deletionGracePeriodSeconds"):
            md.pop(k, None)
        md["creationTimestamp"] = now()
        if "spec" in obj or info.crd is not None:
            md["generation"] = 1
        else:
            md.pop("generation", None)
        md["resourceVersion"] = str(self._bump())
        self._put(res, (ns, name), obj)
        self._emit(res, "ADDED", obj)
        return deepcopy(obj)

    def _stored(self, res, ns, name):
        info = self.info(res)
        ns = self._ns(info, ns)
        obj = self.data.get(res, {}).get((ns, name))
        if obj is None:
            raise errors.not_found(res, name)
        return info, ns, obj

    def update(self, res, ns, obj, subresource=None):
        md_in = (obj or {}).get("metadata") or {}
        name = md_in.get("name")
        if not name:
            raise errors.bad_request("name is required")
        info, ns, old = self._stored(res, ns, name)
        rv = md_in.get("resourceVersion")
        if rv and rv != old["metadata"]["resourceVersion"]:
            raise errors.conflict(res, name)
        if old.get("metadata", {}).get("uid") and md_in.get("uid") and \
                md_in["uid"] != old["metadata"]["uid"]:
            raise errors.conflict(res, name, "Precondition failed: UID in precondition: %s, "
                                  "UID in object meta: %s" % (md_in["uid"], old["metadata"]["uid"]))
        new = deepcopy(obj)
        if subresource == "status":
            res_obj = deepcopy(old)
            if "status" in new:
                res_obj["status"] = new["status"]
            else:
                res_obj.pop("status", None)
            new = res_obj
        else:
            if info.has_status:
                if "status" in old:
                    new["status"] = deepcopy(old["status"])
                else:
                    new.pop("status", None)
            md = new.setdefault("metadata", {})
            for k in ("uid", "creationTimestamp", "deletionTimestamp",
                      "deletionGracePeriodSeconds", "namespace", "generation"):
                if k in old["metadata"]:
                    md[k] = old["metadata"][k]
                else:
                    md.pop(k, None)
            if old["metadata"].get("deletionTimestamp") is None:
                pass
            new["apiVersion"] = info.api_version()
            new["kind"] = info.kind
            for fn in self.hooks_update.get(res, []) + self.hooks_update.get("*", []):
                fn(self, info, old, new)
            for fn in self.hooks_validate.get(res, []) + self.hooks_validate.get("*", []):
                fn(self, info, new, old)
            if _spec_part(new) != _spec_part(old) and "generation" in old["metadata"]:
                md["generation"] = old["metadata"]["generation"] + 1
        return self._commit(res, ns, name, old, new)

    def _commit(self, res, ns, name, old, new):
        new["metadata"]["resourceVersion"] = old["metadata"]["resourceVersion"]
        if new == old:
            return deepcopy(old)
        new["metadata"]["resourceVersion"] = str(self._bump())
        self._put(res, (ns, name), new)
        md = new["metadata"]
        if md.get("deletionTimestamp") and not md.get("finalizers") and \
                not self._waits_for_kubelet(res, new) and res != "namespaces":
            return self._remove(res, ns, name)
        self._emit(res, "MODIFIED", new)
        return deepcopy(new)

    def update_status(self, res, ns, name, status):
        info, ns, old = self._stored(res, ns, name)
        new = deepcopy(old)
        new["status"] = deepcopy(status)
        return self._commit(res, ns, name, old, new)

    def mutate(self, res, ns, name, fn):
        info, ns, old = self._stored(res, ns, name)
        new = deepcopy(old)
        r = fn(new)
        if isinstance(r, dict):
            new = r
        return self._commit(res, ns, name, old, new)

    def patch(self, res, ns, name, patch_type, body, subresource=None):
        info, ns, old = self._stored(res, ns, name)
        new = patchmod.apply_patch(self, info, deepcopy(old), patch_type, body)
        return self.update(res, ns, new, subresource=subresource)

    def bind(self, ns, name, node_name):
        info, ns, old = self._stored("pods", ns, name)
        if old.get("spec", {}).get("nodeName"):
            raise errors.conflict("pods", name, "pod %s is already assigned to node \"%s\""
                                  % (name, old["spec"]["nodeName"]))
        new = deepcopy(old)
        new.setdefault("spec", {})["nodeName"] = node_name
        return self._commit("pods", ns, name, old, new)

    def _waits_for_kubelet(self, res, obj):
        """A bound, non-terminal pod being deleted gracefully waits for the kubelet."""
        if res != "pods":
            return False
        if not obj.get("spec", {}).get("nodeName"):
            return False
        if obj["metadata"].get("deletionGracePeriodSeconds", 0) == 0:
            return False
        return True

    def delete(self, res, ns, name, grace_seconds=None, propagation=None, preconditions=None):
        info, ns, old = self._stored(res, ns, name)
        md = old["metadata"]
        pre = preconditions or {}
        if pre.get("uid") and pre["uid"] != md.get("uid"):
            raise errors.conflict(res, name, "Precondition failed: UID in precondition: %s, UID in "
                                  "object meta: %s" % (pre["uid"], md.get("uid")))
        if pre.get("resourceVersion") and pre["resourceVersion"] != md.get("resourceVersion"):
            raise errors.conflict(res, name, "Precondition failed: ResourceVersion in precondition:"
                                  " %s, ResourceVersion in object meta: %s"
                                  % (pre["resourceVersion"], md.get("resourceVersion")))
        new = deepcopy(old)
        nmd = new["metadata"]
        if res == "namespaces":
            if name in ("default", "kube-system", "kube-public"):
                raise ApiError(403, "Forbidden", 'namespaces "%s" is forbidden: this namespace may '
                               'not be deleted' % name, {"name": name, "kind": "namespaces"})
            if not nmd.get("deletionTimestamp"):
                nmd["deletionTimestamp"] = now()
                nmd["deletionGracePeriodSeconds"] = 0
                new.setdefault("status", {})["phase"] = "Terminating"
            return self._commit(res, ns, name, old, new), False
        fins = list(nmd.get("finalizers") or [])
        if propagation is None and res == "jobs.batch":
            propagation = "Orphan"  # batch/v1 Job REST default (legacy)
        if propagation == "Orphan" and "orphan" not in fins:
            fins.append("orphan")
        elif propagation == "Foreground" and "foregroundDeletion" not in fins:
            fins.append("foregroundDeletion")
        if res == "pods":
            grace = grace_seconds
            if grace is None:
                grace = new.get("spec", {}).get("terminationGracePeriodSeconds", 30)
            phase = new.get("status", {}).get("phase")
            if not new.get("spec", {}).get("nodeName") or phase in ("Succeeded", "Failed"):
                grace = 0
            grace = max(0, int(grace))
            if nmd.get("deletionTimestamp"):
                cur = nmd.get("deletionGracePeriodSeconds", 0)
                if grace >= cur and not (fins != list(nmd.get("finalizers") or [])):
                    return deepcopy(old), False
            nmd["deletionGracePeriodSeconds"] = grace
            nmd["deletionTimestamp"] = now(grace)
            if fins:
                nmd["finalizers"] = fins
            if grace > 0 or fins:
                return self._commit(res, ns, name, old, new), False
            return self._remove_obj(res, ns, name, new), True
        if fins:
            if not nmd.get("deletionTimestamp"):
                nmd["deletionTimestamp"] = now()
                nmd["deletionGracePeriodSeconds"] = 0
            nmd["finalizers"] = fins
            return self._commit(res, ns, name, old, new), False
        return self._remove_obj(res, ns, name, new), True

    def _remove_obj(self, res, ns, name, obj):
        self._put(res, (ns, name), obj)
        return self._remove(res, ns, name)

    def _remove(self, res, ns, name):
        obj = self._pop(res, (ns, name))
        if obj is None:
            return None
        obj = dict(obj)   # the stored dict may be shared (history, subscribers): a new one
        obj["metadata"] = dict(obj["metadata"])
        obj["metadata"]["resourceVersion"] = str(self._bump())
        self._emit(res, "DELETED", obj)
        return deepcopy(obj)

    def remove(self, res, ns, name):
        info = self.info(res)
        ns = self._ns(info, ns)
        obj = self.data.get(res, {}).get((ns, name))
        if obj is None:
            return None
        if obj["metadata"].get("finalizers"):
            if not obj["metadata"].get("deletionTimestamp") or \
                    obj["metadata"].get("deletionGracePeriodSeconds"):
                def f(o):
                    o["metadata"].setdefault("deletionTimestamp", now())
                    o["metadata"]["deletionGracePeriodSeconds"] = 0
                return self.mutate(res, ns, name, f)
            return deepcopy(obj)
        return self._remove(res, ns, name)

    # ---- events --------------------------------------------------------
    def record_event(self, ns, involved, type_, reason, message, component, host=None):
        md = involved.get("metadata", {})
        ns = ns or md.get("namespace") or "default"
        if self.data.get("namespaces", {}).get(("", ns)) is None:
            return None
        ref = {"kind": involved.get("kind"), "namespace": md.get("namespace", ""),
               "name": md.get("name"), "uid": md.get("uid"),
               "apiVersion": involved.get("apiVersion"),
               "resourceVersion": md.get("resourceVersion")}
        if not ref["namespace"]:
            ref.pop("namespace")
        # the recorder's aggregation: the same event again bumps count (an index, not a scan)
        key = (ns, ref["uid"], reason, message, component)
        ev = self.data.get("events", {}).get((ns, self._event_keys.get(key)))
        if ev is not None and ev.get("reason") == reason and ev.get("message") == message and \
                ev.get("involvedObject", {}).get("uid") == ref["uid"] and \
                ev.get("source", {}).get("component") == component:
            def bump(o):
                o["count"] = o.get("count", 1) + 1
                o["lastTimestamp"] = now()
            return self.mutate("events", ns, ev["metadata"]["name"], bump)
        ev = {"metadata": {"name": "%s.%016x" % (md.get("name"), random.getrandbits(64)),
                           "namespace": ns},
              "involvedObject": ref, "reason": reason, "message": message,
              "source": {"component": component, **({"host": host} if host else {})},
              "firstTimestamp": now(), "lastTimestamp": now(), "count": 1,
              "type": type_, "eventTime": None, "reportingComponent": component,
              "reportingInstance": host or ""}
        out = self.create("events", ns, ev)
        if len(self._event_keys) > 4 * max(1, len(self.data.get("events", {}))) + 1000:
            self._event_keys = {}   # stale keys of deleted events: start over
        self._event_keys[key] = out["metadata"]["name"]
        return out
