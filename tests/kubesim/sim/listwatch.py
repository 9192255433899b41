"""list and watch of a resource collection, as kube-apiserver serves them: label and
field selectors (the fields each resource supports), limit/continue pagination with
remainingItemCount and 410 for expired tokens; watch streams from now, from a
resourceVersion (replayed from the store's history, 410 Expired when too old) or with
sendInitialEvents, bookmarks, timeouts, selector transitions (an object leaving the
selector is DELETED), Table output, bursts written at once. A part of api.py's Api."""
import asyncio
import base64
import json
import time

from aiohttp import web

from . import errors, tables
from .errors import ApiError
from .events import EVENTS_V1
from .httpreply import jresp, qbool
from .jsoncopy import deepcopy
from .selectors import match_labels, match_fields, parse_label_selector, parse_field_selector

# Field selectors each resource supports (others: metadata.name, metadata.namespace);
# anything else is a 400, as the real registry strategies answer.
_FIELDS = {
    "pods": {"spec.nodeName", "spec.restartPolicy", "spec.schedulerName",
             "spec.serviceAccountName", "spec.hostNetwork", "status.phase", "status.podIP",
             "status.podIPs", "status.nominatedNodeName"},
    "events": {"involvedObject.kind", "involvedObject.namespace", "involvedObject.name",
               "involvedObject.uid", "involvedObject.apiVersion",
               "involvedObject.resourceVersion", "involvedObject.fieldPath", "reason",
               "reportingComponent", "source", "type"},
    EVENTS_V1: {"regarding.kind", "regarding.namespace", "regarding.name", "regarding.uid",
                "regarding.apiVersion", "regarding.resourceVersion", "regarding.fieldPath",
                "reason", "reportingController", "type"},
    "secrets": {"type"},
    "nodes": {"spec.unschedulable"},
    "namespaces": {"status.phase"},
    "jobs.batch": {"status.successful"},
    "replicasets.apps": {"status.replicas"},
}


def check_field_selector(info, reqs):
    allowed = {"metadata.name", "metadata.namespace"} | _FIELDS.get(info.key, set())
    if info.crd is not None:
        for v in (info.crd.get("spec") or {}).get("versions") or []:
            for f in v.get("selectableFields") or []:
                allowed.add(f.get("jsonPath", "").lstrip("."))
    for path, _op, _val in reqs:
        if path not in allowed:
            raise errors.bad_request('field label not supported: %s' % path)


def go_duration(s):
    """Go duration string ("6s", "1m0s", "500ms") -> seconds (0 when absent)."""
    if not s:
        return 0
    import re
    total = 0.0
    units = {"h": 3600, "m": 60, "s": 1, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}
    parts = re.findall(r"([0-9.]+)(h|ms|m|s|us|µs|ns)", s)
    if not parts:
        raise ValueError("invalid duration %r" % s)
    for num, unit in parts:
        total += float(num) * units[unit]
    return total


class ListWatch:
    """Api's list and watch verbs (a part of sim/api.py's Api; self is the Api)."""

    # ---- list ----------------------------------------------------------------
    def list(self, request, r):
        q = request.query
        skey = self.skey(r.info)
        ls = parse_label_selector(q.get("labelSelector", ""))
        fs = parse_field_selector(q.get("fieldSelector", ""))
        check_field_selector(r.info, fs)
        if r.info.key == EVENTS_V1:
            fs = [(p.replace("regarding.", "involvedObject.").replace(
                "reportingController", "reportingComponent"), o, v) for p, o, v in fs]
        objs = self.store.list(skey, r.namespace or None, ls, fs, copy=False)
        start = 0
        if q.get("continue"):
            try:
                tok = json.loads(base64.urlsafe_b64decode(q["continue"] + "==="))
                after = (tok["ns"], tok["name"])
            except Exception:
                raise errors.bad_request("continue key is not valid: illegal base64 data")
            if int(tok.get("rv", 0)) < self.store.compacted:
                raise ApiError(410, "Expired", "The provided continue parameter is too old to "
                               "display a consistent list result. You can start a new list "
                               "without the continue parameter, or use the continue token in "
                               "this response to retrieve the remainder of the results.")
            while start < len(objs) and (objs[start]["metadata"].get("namespace", ""),
                                         objs[start]["metadata"]["name"]) <= after:
                start += 1
        md = {"resourceVersion": str(self.store.rv)}
        limit = 0
        if q.get("limit"):
            try:
                limit = int(q["limit"])
            except ValueError:
                raise errors.bad_request("invalid limit")
        page = objs[start:]
        if limit > 0 and len(page) > limit:
            page = page[:limit]
            last = page[-1]["metadata"]
            md["continue"] = base64.urlsafe_b64encode(json.dumps(
                {"ns": last.get("namespace", ""), "name": last["name"],
                 "rv": self.store.rv}).encode()).decode().rstrip("=")
            md["remainingItemCount"] = len(objs) - start - limit
        items = [self.out(r.info, r.version, deepcopy(o) if r.info.crd is not None else o)
                 for o in page]
        if self.wants_table(request):
            return jresp(tables.table(r.info, r.version, items, md,
                                      q.get("includeObject", "Object")))
        return jresp({"kind": r.info.list_kind, "apiVersion": r.info.api_version(r.version),
                      "metadata": md, "items": items})

    # ---- watch ---------------------------------------------------------------
    async def watch(self, request, r):
        q = request.query
        skey = self.skey(r.info)
        ls = parse_label_selector(q.get("labelSelector", ""))
        fs = parse_field_selector(q.get("fieldSelector", ""))
        check_field_selector(r.info, fs)
        if r.info.key == EVENTS_V1:
            fs = [(p.replace("regarding.", "involvedObject.").replace(
                "reportingController", "reportingComponent"), o, v) for p, o, v in fs]
        ns = r.namespace
        as_table = self.wants_table(request)
        rv = q.get("resourceVersion", "")
        bookmarks = qbool(q, "allowWatchBookmarks")
        initial = qbool(q, "sendInitialEvents")
        try:
            timeout = float(q.get("timeoutSeconds") or 0) or go_duration(q.get("timeout")) or \
                self.server.watch_timeout
        except ValueError:
            raise errors.bad_request("invalid timeoutSeconds")
        queue = asyncio.Queue()

        def matches(o):
            md = o.get("metadata", {})
            if ns and md.get("namespace") != ns:
                return False
            return match_labels(ls, md.get("labels")) and match_fields(fs, o)

        backlog, matched, too_old = self.watch_backlog(skey, ns, ls, fs, rv, initial)
        # each event with the time it happened: `watch_delay` (seconds, a tunable) holds every
        # event that long before it is sent, in order (a lagging watch, as a loaded API server's)
        handle = self.store.subscribe(skey, lambda t, o: queue.put_nowait((t, o, time.monotonic())),
                                      readonly=True)
        resp = web.StreamResponse(status=200)
        resp.content_type = "application/json"
        resp.enable_chunked_encoding()
        self.server.track(resp)
        try:
            await resp.prepare(request)

            def encode(etype, o):
                if etype == "ERROR":
                    obj = o
                elif etype == "BOOKMARK":
                    obj = o
                else:
                    obj = self.out(r.info, r.version, deepcopy(o) if r.info.crd is not None
                                   else o)
                    if as_table:
                        obj = tables.table(r.info, r.version, [obj], {
                            "resourceVersion": obj["metadata"].get("resourceVersion", "")},
                            q.get("includeObject", "Object"))
                return json.dumps({"type": etype, "object": obj},
                                  separators=(",", ":")).encode() + b"\n"

            async def send(etype, o):
                await resp.write(encode(etype, o))

            last_rv = [rv if rv not in ("", "0") else str(self.store.rv)]

            def deliver(etype, o, out):
                """Appends the event's line(s) to out as this watch's filter sees them."""
                k = (o["metadata"].get("namespace", ""), o["metadata"]["name"])
                ok = matches(o)
                if etype == "DELETED":
                    if k in matched or ok:
                        matched.discard(k)
                        out.append(encode("DELETED", o))
                elif ok:
                    t = etype if k in matched or etype == "ADDED" else "ADDED"
                    matched.add(k)
                    out.append(encode(t, o))
                elif k in matched:
                    matched.discard(k)
                    out.append(encode("DELETED", o))
                last_rv[0] = o["metadata"].get("resourceVersion", last_rv[0])

            if too_old is not None:
                await send("ERROR", too_old.status())
                return resp
            seen_rv = 0
            out = []
            for etype, o in backlog:
                if etype == "ADDED" and (rv in ("", "0") or initial) and \
                        "resourceVersion" in o["metadata"]:
                    out.append(encode("ADDED", o))
                    last_rv[0] = str(self.store.rv)
                else:
                    deliver(etype, o, out)
                seen_rv = max(seen_rv, int(o["metadata"].get("resourceVersion", 0)))
            if out:
                await resp.write(b"".join(out))
            if initial and bookmarks:
                await send("BOOKMARK", {"kind": r.info.kind, "apiVersion":
                                        r.info.api_version(r.version), "metadata": {
                                            "resourceVersion": str(self.store.rv),
                                            "annotations": {"k8s.io/initial-events-end":
                                                            "true"}}})
            deadline = time.monotonic() + timeout
            next_bm = time.monotonic() + self.server.bookmark_interval
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                wait = min(left, max(0.05, next_bm - time.monotonic())) if bookmarks else left
                try:
                    etype, o, at = await asyncio.wait_for(queue.get(), wait)
                except asyncio.TimeoutError:
                    if bookmarks and time.monotonic() >= next_bm:
                        await send("BOOKMARK", {"kind": r.info.kind, "apiVersion":
                                                r.info.api_version(r.version), "metadata": {
                                                    "resourceVersion": str(self.store.rv)}})
                        next_bm = time.monotonic() + self.server.bookmark_interval
                    continue
                # everything queued meanwhile goes out in the same write: one wake-up and
                # one TLS record per burst, not per event (a busy loop fell seconds behind)
                out = []
                while True:
                    lag = at + float(self.server.config.extra.get("watch_delay") or 0) - time.monotonic()
                    if lag > 0:
                        await asyncio.sleep(lag)
                    if int(o["metadata"].get("resourceVersion", 0)) > seen_rv:
                        deliver(etype, o, out)
                    if queue.empty():
                        break
                    etype, o, at = queue.get_nowait()
                if out:
                    await resp.write(b"".join(out))
            await resp.write_eof()
        except ConnectionResetError:
            pass   # the client went away
        finally:
            self.store.unsubscribe(handle)
            self.server.untrack(resp)
        return resp

    def watch_backlog(self, skey, ns, ls, fs, rv, initial):
        """What a new watch starts from: its backlog of (type, object) events, the
        (namespace, name) keys its selectors matched as of rv, and the 410 ApiError when
        rv is older than the kept history (else None)."""
        backlog = []
        matched = set()
        too_old = None
        # events are stored objects shared with the store (never mutated in place): out()
        # copies custom resources before defaulting them
        if rv in ("", "0") or initial:
            for o in self.store.list(skey, ns or None, ls, fs, copy=False):
                backlog.append(("ADDED", o))
                matched.add((o["metadata"].get("namespace", ""), o["metadata"]["name"]))
        else:
            try:
                int(rv)
            except ValueError:
                raise errors.bad_request('invalid resource version "%s"' % rv)
            for o in self.store.list(skey, ns or None, ls, fs, copy=False):
                matched.add((o["metadata"].get("namespace", ""), o["metadata"]["name"]))
            try:
                hist = self.store.events_since(rv)
            except ApiError as e:
                too_old = e
                hist = []
            # objects matching now may have been added after rv: recompute "matched" as of rv
            for (erv, res, etype, o) in hist:
                if res == skey:
                    k = (o["metadata"].get("namespace", ""), o["metadata"]["name"])
                    if etype == "ADDED":
                        matched.discard(k)
            for (erv, res, etype, o) in hist:
                if res == skey:
                    backlog.append((etype, o))
        return backlog, matched, too_old

