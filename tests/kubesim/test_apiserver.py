"""Unit tests of kubesim's API-server half without a network: store semantics, patches,
selectors, JSONPath, protobuf decoding, RBAC, CRD pruning/defaulting, and the controllers
(GC, Job, endpoints, deployments) driven on an asyncio loop.
Run: /usr/bin/python3 -m unittest discover -s tests/kubesim -p 'test_*.py'"""
import asyncio
import base64
import json
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from sim import admission, defaults, patch, protobuf, rbac  # noqa: E402
from sim.apps import AppsController  # noqa: E402
from sim.auth import Authenticator, sa_user, User  # noqa: E402
from sim.crd import CRDController, prepare  # noqa: E402
from sim.endpoints import EndpointsController  # noqa: E402
from sim.errors import ApiError  # noqa: E402
from sim.gc import GarbageCollector  # noqa: E402
from sim.jobs import JobController  # noqa: E402
from sim.jsonpath import evaluate  # noqa: E402
from sim.selectors import match_labels, match_fields  # noqa: E402
from sim.store import Store  # noqa: E402


def new_store(window=100):
    s = Store(watch_window=window)
    defaults.install(s)
    s.create("namespaces", None, {"metadata": {"name": "default"}})
    s.create("serviceaccounts", "default", {"metadata": {"name": "default"}})
    return s


def pod(name, labels=None, node=None, **spec):
    p = {"metadata": {"name": name, "labels": labels or {}},
         "spec": {"containers": [{"name": "c", "image": "busybox"}], **spec}}
    if node:
        p["spec"]["nodeName"] = node
    return p


class StoreTest(unittest.TestCase):
    def test_create_sets_metadata_and_rejects_duplicates(self):
        s = new_store()
        cm = s.create("configmaps", "default", {"metadata": {"name": "a"}, "data": {"k": "v"}})
        md = cm["metadata"]
        self.assertTrue(md["uid"] and md["creationTimestamp"] and md["resourceVersion"])
        self.assertNotIn("generation", md)
        with self.assertRaises(ApiError) as e:
            s.create("configmaps", "default", {"metadata": {"name": "a"}})
        self.assertEqual((e.exception.code, e.exception.message),
                         (409, 'configmaps "a" already exists'))

    def test_not_found_wording(self):
        s = new_store()
        with self.assertRaises(ApiError) as e:
            s.get("jobs.batch", "default", "x")
        self.assertEqual(e.exception.message, 'jobs.batch "x" not found')
        with self.assertRaises(ApiError) as e:
            s.create("configmaps", "nope", {"metadata": {"name": "a"}})
        self.assertEqual(e.exception.message, 'namespaces "nope" not found')

    def test_generate_name_and_invalid_name(self):
        s = new_store()
        cm = s.create("configmaps", "default", {"metadata": {"generateName": "x-"}})
        self.assertRegex(cm["metadata"]["name"], r"^x-[a-z0-9]{5}$")
        with self.assertRaises(ApiError) as e:
            s.create("configmaps", "default", {"metadata": {"name": "Bad_Name"}})
        self.assertEqual(e.exception.code, 422)

    def test_label_and_name_validation(self):
        s = new_store()
        with self.assertRaises(ApiError) as e:
            s.create("configmaps", "default", {"metadata": {"name": "a",
                                                            "labels": {"k": "v" * 64}}})
        self.assertEqual(e.exception.code, 422)
        self.assertIn("must be no more than 63 characters", e.exception.message)
        with self.assertRaises(ApiError) as e:
            s.create("services", "default", {"metadata": {"name": "1svc"}, "spec": {}})
        self.assertIn("DNS-1035", e.exception.message)
        s.create("configmaps", "default", {"metadata": {"name": "b", "labels": {
            "app.kubernetes.io/name": "x", "training.kubeflow.org/replica-index": "0"}}})

    def test_optimistic_concurrency_and_generation(self):
        s = new_store()
        j = s.create("jobs.batch", "default", {"metadata": {"name": "j"}, "spec": {
            "template": {"spec": {"restartPolicy": "Never",
                                  "containers": [{"name": "c", "image": "i"}]}}}})
        self.assertEqual(j["metadata"]["generation"], 1)
        j["metadata"]["labels"] = {"a": "b"}
        j2 = s.update("jobs.batch", "default", j)
        self.assertEqual(j2["metadata"]["generation"], 1)
        with self.assertRaises(ApiError) as e:
            s.update("jobs.batch", "default", j)  # stale resourceVersion
        self.assertEqual(e.exception.code, 409)
        self.assertIn("the object has been modified", e.exception.message)
        j2["spec"]["suspend"] = True
        j3 = s.update("jobs.batch", "default", j2)
        self.assertEqual(j3["metadata"]["generation"], 2)
        # a no-op update keeps the resourceVersion
        self.assertEqual(s.update("jobs.batch", "default", j3)["metadata"]["resourceVersion"],
                         j3["metadata"]["resourceVersion"])

    def test_status_subresource_separation(self):
        s = new_store()
        p = s.create("pods", "default", pod("p"))
        p["status"] = {"phase": "Running"}
        p = s.update("pods", "default", p)
        self.assertEqual(p["status"]["phase"], "Pending")  # main resource ignores status
        p["status"] = {"phase": "Running"}
        p = s.update("pods", "default", p, subresource="status")
        self.assertEqual(p["status"]["phase"], "Running")

    def test_graceful_pod_deletion_waits_for_kubelet(self):
        s = new_store()
        s.create("pods", "default", pod("bound", node="n1"))
        s.create("pods", "default", pod("unbound"))
        obj, removed = s.delete("pods", "default", "bound")
        self.assertFalse(removed)
        self.assertEqual(obj["metadata"]["deletionGracePeriodSeconds"], 30)
        self.assertIsNotNone(s.try_get("pods", "default", "bound"))
        s.remove("pods", "default", "bound")
        self.assertIsNone(s.try_get("pods", "default", "bound"))
        _, removed = s.delete("pods", "default", "unbound")
        self.assertTrue(removed)

    def test_finalizers_hold_objects(self):
        s = new_store()
        s.create("configmaps", "default", {"metadata": {"name": "f", "finalizers": ["x/y"]}})
        obj, removed = s.delete("configmaps", "default", "f")
        self.assertFalse(removed)
        self.assertTrue(obj["metadata"]["deletionTimestamp"])
        obj["metadata"]["finalizers"] = []
        s.update("configmaps", "default", obj)
        self.assertIsNone(s.try_get("configmaps", "default", "f"))

    def test_preconditions(self):
        s = new_store()
        s.create("configmaps", "default", {"metadata": {"name": "a"}})
        with self.assertRaises(ApiError) as e:
            s.delete("configmaps", "default", "a", preconditions={"uid": "other"})
        self.assertEqual(e.exception.code, 409)

    def test_watch_history_and_compaction(self):
        s = new_store(window=5)
        rv0 = s.rv
        for i in range(10):
            s.create("configmaps", "default", {"metadata": {"name": "c%d" % i}})
        with self.assertRaises(ApiError) as e:
            s.events_since(rv0)
        self.assertEqual(e.exception.code, 410)
        self.assertEqual(len(s.events_since(s.rv - 2)), 2)

    def test_subscribe_reentrancy_order(self):
        s = new_store()
        seen = []

        def cb(t, o):
            seen.append((t, o["metadata"]["name"]))
            if o["metadata"]["name"] == "a" and t == "ADDED":
                s.create("configmaps", "default", {"metadata": {"name": "b"}})
        h = s.subscribe("configmaps", cb)
        s.create("configmaps", "default", {"metadata": {"name": "a"}})
        s.unsubscribe(h)
        self.assertEqual(seen, [("ADDED", "a"), ("ADDED", "b")])

    def test_pod_admission_mounts_token(self):
        s = new_store()
        p = s.create("pods", "default", pod("p"))
        vols = [v for v in p["spec"]["volumes"] if v["name"].startswith("kube-api-access-")]
        self.assertEqual(len(vols), 1)
        self.assertEqual(p["spec"]["containers"][0]["volumeMounts"][0]["mountPath"],
                         "/var/run/secrets/kubernetes.io/serviceaccount")
        p2 = s.create("pods", "default", pod("q", automountServiceAccountToken=False))
        self.assertNotIn("volumes", p2["spec"])
        with self.assertRaises(ApiError) as e:
            s.create("pods", "default", pod("r", serviceAccountName="ghost"))
        self.assertEqual(e.exception.code, 403)

    def test_record_event_aggregates(self):
        s = new_store()
        p = s.create("pods", "default", pod("p"))
        s.record_event(None, p, "Normal", "Pulled", "done", "kubelet")
        e = s.record_event(None, p, "Normal", "Pulled", "done", "kubelet")
        self.assertEqual(e["count"], 2)
        self.assertEqual(len(s.list("events", "default",
                                    field_selector="involvedObject.name=p")), 1)


class ScaleIndexTest(unittest.TestCase):
    """The store's indexes (sorted keys, labels, owners, uids) stay right through writes."""

    def test_list_namespace_ranges_and_label_index(self):
        s = new_store()
        for ns in ("a", "b"):
            s.create("namespaces", None, {"metadata": {"name": ns}})
            s.create("serviceaccounts", ns, {"metadata": {"name": "default"}})
        for i in range(5):
            s.create("pods", "a", pod("p%d" % i, {"app": "x" if i % 2 else "y", "i": str(i)}))
        s.create("pods", "b", pod("p0", {"app": "x"}))
        s.create("pods", "default", pod("q", {"app": "x"}))
        self.assertEqual([p["metadata"]["name"] for p in s.list("pods", "a")],
                         ["p0", "p1", "p2", "p3", "p4"])
        self.assertEqual([p["metadata"]["name"] for p in s.list("pods", "a", "app=x")],
                         ["p1", "p3"])
        self.assertEqual([p["metadata"]["name"] for p in s.list("pods", "a", "app in (x,y),i!=0")],
                         ["p1", "p2", "p3", "p4"])
        self.assertEqual([(p["metadata"]["namespace"], p["metadata"]["name"])
                          for p in s.list("pods", None, "app=x")],
                         [("a", "p1"), ("a", "p3"), ("b", "p0"), ("default", "q")])
        # a label change moves the object between index entries
        s.mutate("pods", "a", "p1", lambda o: o["metadata"]["labels"].update(app="y"))
        self.assertEqual([p["metadata"]["name"] for p in s.list("pods", "a", "app=x")], ["p3"])
        self.assertEqual([p["metadata"]["name"] for p in s.select("pods", "a", {"app": "y"})],
                         ["p0", "p1", "p2", "p4"])
        s.delete("pods", "a", "p3")
        self.assertEqual(s.list("pods", "a", "app=x"), [])
        self.assertEqual(s.select("pods", "a", {"app": "x"}), [])
        # list results are copies: changing them changes nothing stored
        s.list("pods", "a")[0]["metadata"]["labels"]["app"] = "z"
        self.assertEqual(s.list("pods", "a", "app=z"), [])

    def test_owner_and_uid_index(self):
        s = new_store()
        o = s.create("configmaps", "default", {"metadata": {"name": "o"}})
        uid = o["metadata"]["uid"]
        ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": "o", "uid": uid}
        s.create("configmaps", "default", {"metadata": {"name": "d1", "ownerReferences": [ref]}})
        s.create("pods", "default", dict(pod("d2"), metadata={"name": "d2",
                                                              "ownerReferences": [ref]}))
        self.assertEqual(s.dependents(uid), [("configmaps", "default", "d1"),
                                             ("pods", "default", "d2")])
        self.assertEqual(s.by_uid(uid), ("configmaps", "default", "o"))
        s.mutate("configmaps", "default", "d1", lambda x: x["metadata"].pop("ownerReferences"))
        self.assertEqual(s.dependents(uid), [("pods", "default", "d2")])
        s.delete("configmaps", "default", "o")
        self.assertIsNone(s.by_uid(uid))
        self.assertEqual(s.dependents(uid), [("pods", "default", "d2")])

    def test_history_keeps_old_versions_unchanged(self):
        s = new_store()
        s.create("configmaps", "default", {"metadata": {"name": "h"}, "data": {"k": "1"}})
        rv = s.rv
        s.mutate("configmaps", "default", "h", lambda o: o["data"].update(k="2"))
        s.delete("configmaps", "default", "h")
        ev = [(t, o["metadata"]["resourceVersion"], (o.get("data") or {}).get("k"))
              for _rv, r, t, o in s.events_since(rv - 1) if r == "configmaps"]
        self.assertEqual([e[0] for e in ev], ["ADDED", "MODIFIED", "DELETED"])
        self.assertEqual(len({e[1] for e in ev}), 3)
        self.assertEqual([e[2] for e in ev], ["1", "2", "2"])

    def test_event_aggregation_by_index(self):
        s = new_store()
        cm = s.create("configmaps", "default", {"metadata": {"name": "e"}})
        for _ in range(3):
            s.record_event(None, cm, "Normal", "Same", "same message", "test")
        s.record_event(None, cm, "Normal", "Other", "same message", "test")
        evs = sorted((e["reason"], e["count"]) for e in s.list("events", "default"))
        self.assertEqual(evs, [("Other", 1), ("Same", 3)])
        # a deleted event is not bumped: the next one is new
        name = [e for e in s.list("events", "default") if e["reason"] == "Same"][0]
        s.delete("events", "default", name["metadata"]["name"])
        s.record_event(None, cm, "Normal", "Same", "same message", "test")
        self.assertEqual(sorted((e["reason"], e["count"]) for e in s.list("events", "default")),
                         [("Other", 1), ("Same", 1)])


class PatchTest(unittest.TestCase):
    def test_merge_patch(self):
        self.assertEqual(patch.merge_patch({"a": 1, "b": {"c": 2, "d": 3}},
                                           {"b": {"c": None, "e": 4}, "f": [1]}),
                         {"a": 1, "b": {"d": 3, "e": 4}, "f": [1]})

    def test_json_patch(self):
        doc = {"a": [1, 2], "b": {"c": "x"}}
        out = patch.json_patch(doc, [{"op": "add", "path": "/a/-", "value": 3},
                                     {"op": "replace", "path": "/b/c", "value": "y"},
                                     {"op": "test", "path": "/b/c", "value": "y"},
                                     {"op": "move", "from": "/b/c", "path": "/d"},
                                     {"op": "remove", "path": "/a/0"}])
        self.assertEqual(out, {"a": [2, 3], "b": {}, "d": "y"})
        with self.assertRaises(ApiError):
            patch.json_patch(doc, [{"op": "test", "path": "/b/c", "value": "z"}])

    def test_strategic_merge_lists_by_key(self):
        cur = {"spec": {"containers": [{"name": "a", "image": "1"}, {"name": "b", "image": "2"}],
                        "finalizers": ["x"]}}
        p = {"spec": {"containers": [{"name": "b", "image": "3"}, {"name": "c", "image": "4"},
                                     {"name": "a", "$patch": "delete"}],
                      "finalizers": ["y"]}}
        out = patch.strategic_merge(cur, p)
        self.assertEqual(out["spec"]["containers"], [{"name": "b", "image": "3"},
                                                     {"name": "c", "image": "4"}])
        self.assertEqual(out["spec"]["finalizers"], ["x", "y"])


class SelectorTest(unittest.TestCase):
    def test_labels(self):
        lb = {"app": "x", "tier": "db"}
        self.assertTrue(match_labels("app=x,tier!=web", lb))
        self.assertTrue(match_labels("tier in (db,cache),!missing", lb))
        self.assertFalse(match_labels("app notin (x)", lb))
        self.assertFalse(match_labels("missing", lb))

    def test_fields(self):
        o = {"metadata": {"name": "n"}, "status": {"phase": "Running"}}
        self.assertTrue(match_fields("metadata.name=n,status.phase!=Failed", o))
        self.assertFalse(match_fields("status.phase=Failed", o))


class JsonPathTest(unittest.TestCase):
    def test_filters_and_slices(self):
        o = {"s": {"c": [{"t": "A", "v": "False"}, {"t": "B", "v": "True"}]}}
        self.assertEqual(evaluate(o, '.s.c[?(@.v=="True")].t'), ["B"])
        self.assertEqual(evaluate(o, ".s.c[-1:].t"), ["B"])
        self.assertEqual(evaluate(o, "{.s.c[0].t}"), ["A"])
        self.assertEqual(evaluate(o, ".s.c[*].t"), ["A", "B"])


def _pb_field(num, wt, payload):
    def varint(v):
        out = b""
        while True:
            b = v & 0x7F
            v >>= 7
            out += bytes([b | (0x80 if v else 0)])
            if not v:
                return out
    key = varint((num << 3) | wt)
    if wt == 0:
        return key + varint(payload)
    return key + varint(len(payload)) + payload


class ProtobufTest(unittest.TestCase):
    def test_configmap_envelope(self):
        meta = _pb_field(1, 2, b"cfg") + _pb_field(3, 2, b"ns") + \
            _pb_field(11, 2, _pb_field(1, 2, b"app") + _pb_field(2, 2, b"x"))
        cm = _pb_field(1, 2, meta) + _pb_field(2, 2, _pb_field(1, 2, b"k") + _pb_field(2, 2, b"v"))
        tm = _pb_field(1, 2, b"v1") + _pb_field(2, 2, b"ConfigMap")
        body = protobuf.MAGIC + _pb_field(1, 2, tm) + _pb_field(2, 2, cm)
        obj = protobuf.decode(body)
        self.assertEqual(obj, {"apiVersion": "v1", "kind": "ConfigMap",
                               "metadata": {"name": "cfg", "namespace": "ns",
                                            "labels": {"app": "x"}},
                               "data": {"k": "v"}})

    def test_pointer_zero_kept(self):
        spec = _pb_field(7, 0, 0)  # JobSpec.backoffLimit = 0 (a *int32)
        job = _pb_field(2, 2, spec)
        tm = _pb_field(1, 2, b"batch/v1") + _pb_field(2, 2, b"Job")
        obj = protobuf.decode(protobuf.MAGIC + _pb_field(1, 2, tm) + _pb_field(2, 2, job))
        self.assertEqual(obj["spec"], {"backoffLimit": 0})

    def test_garbage_is_400(self):
        with self.assertRaises(ApiError) as e:
            protobuf.decode(protobuf.MAGIC + b"\xff\xff\xff")
        self.assertEqual(e.exception.code, 400)


class RbacTest(unittest.TestCase):
    def setUp(self):
        self.s = new_store()
        roles, bindings = rbac.bootstrap_roles()
        for r in roles:
            self.s.create("clusterroles.rbac.authorization.k8s.io", None, r)
        for b in bindings:
            self.s.create("clusterrolebindings.rbac.authorization.k8s.io", None, b)
        self.s.create("serviceaccounts", "default", {"metadata": {"name": "a"}})
        self.s.create("roles.rbac.authorization.k8s.io", "default", {
            "metadata": {"name": "r"}, "rules": [
                {"apiGroups": [""], "resources": ["pods"], "verbs": ["get"],
                 "resourceNames": ["p1"]},
                {"apiGroups": [""], "resources": ["pods/exec"], "verbs": ["create"]}]})
        self.s.create("rolebindings.rbac.authorization.k8s.io", "default", {
            "metadata": {"name": "rb"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "r"},
            "subjects": [{"kind": "ServiceAccount", "name": "a"}]})
        self.u = sa_user("default", "a")

    def allowed(self, verb, res, name="", sub="", ns="default", group=""):
        return rbac.authorize(self.s, self.u, rbac.Attrs(verb, group, res, sub, name, ns))

    def test_rules(self):
        self.assertTrue(self.allowed("get", "pods", "p1"))
        self.assertFalse(self.allowed("get", "pods", "p2"))
        self.assertFalse(self.allowed("list", "pods"))
        self.assertTrue(self.allowed("create", "pods", "p2", "exec"))
        self.assertFalse(self.allowed("get", "pods", "p1", "exec"))
        self.assertFalse(self.allowed("get", "pods", "p1", ns="other"))
        self.assertTrue(rbac.authorize(self.s, self.u, rbac.Attrs("get", path="/version")))
        self.assertTrue(rbac.authorize(self.s, User("x", ["system:masters"]),
                                       rbac.Attrs("delete", "", "nodes", "", "n", "")))

    def test_token_lifecycle(self):
        auth = Authenticator(self.s, "admin-token")
        tok = auth.token_for("default", "a")
        self.assertEqual(auth.authenticate("Bearer " + tok).name,
                         "system:serviceaccount:default:a")
        self.s.delete("serviceaccounts", "default", "a")
        with self.assertRaises(ApiError) as e:
            auth.authenticate("Bearer " + tok)
        self.assertEqual(e.exception.code, 401)

    def test_legacy_token_secret(self):
        auth = Authenticator(self.s, "admin-token", "CA")
        auth.install(self.s)
        sec = self.s.create("secrets", "default", {
            "metadata": {"name": "t", "annotations": {
                "kubernetes.io/service-account.name": "a"}},
            "type": "kubernetes.io/service-account-token"})
        tok = base64.b64decode(sec["data"]["token"]).decode()
        self.assertEqual(auth.authenticate("Bearer " + tok).name,
                         "system:serviceaccount:default:a")


class AdmissionTest(RbacTest):
    """RBAC escalation prevention and OwnerReferencesPermissionEnforcement (sim/admission.py)."""

    ROLES = "roles.rbac.authorization.k8s.io"

    def role(self, rules, name="new"):
        return {"metadata": {"name": name, "namespace": "default"}, "rules": rules}

    def escalate(self, obj, old=None, extra=None, key=ROLES):
        info = self.s.registry.get(key)
        admission.rbac_escalation(self.s, extra or {}, self.u, info, "default", obj, old)

    def test_role_within_held(self):
        self.escalate(self.role([
            {"apiGroups": [""], "resources": ["pods"], "verbs": ["get"], "resourceNames": ["p1"]},
            {"apiGroups": [""], "resources": ["pods/exec"], "verbs": ["create"],
             "resourceNames": ["p1", "p2"]}]))

    def test_role_beyond_held(self):
        with self.assertRaises(ApiError) as e:
            self.escalate(self.role([
                {"apiGroups": [""], "resources": ["secrets", "pods"], "verbs": ["get", "list"]},
                {"apiGroups": [""], "resources": ["pods"], "verbs": ["get"],
                 "resourceNames": ["p1", "p2"]}]))
        self.assertEqual(e.exception.code, 403)
        self.assertEqual(e.exception.message,
                         'roles.rbac.authorization.k8s.io "new" is forbidden: user '
                         '"system:serviceaccount:default:a" (groups=["system:serviceaccounts" '
                         '"system:serviceaccounts:default" "system:authenticated"]) is attempting '
                         'to grant RBAC permissions not currently held:\n'
                         '{APIGroups:[""], Resources:["pods"], ResourceNames:["p2"], Verbs:["get"]}\n'
                         '{APIGroups:[""], Resources:["pods"], Verbs:["get" "list"]}\n'
                         '{APIGroups:[""], Resources:["secrets"], Verbs:["get" "list"]}')

    def test_escalate_verb_gc_update_and_switch(self):
        big = self.role([{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}])
        old = dict(big, metadata={"name": "new", "namespace": "default", "resourceVersion": "5"})
        gc_only = dict(big, metadata={"name": "new", "namespace": "default", "resourceVersion": "5",
                                      "finalizers": ["x"]})
        self.escalate(gc_only, old)   # only GC fields change: allowed
        self.escalate(big, extra={"rbac_escalation_check": "false"})
        with self.assertRaises(ApiError):
            self.escalate(big)
        self.s.create(self.ROLES, "default", self.role(
            [{"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["roles"],
              "verbs": ["escalate"]}], "esc"))
        self.s.create("rolebindings.rbac.authorization.k8s.io", "default", {
            "metadata": {"name": "esc"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "esc"},
            "subjects": [{"kind": "ServiceAccount", "name": "a"}]})
        self.escalate(big)

    def test_binding(self):
        b = {"metadata": {"name": "b"}, "subjects": [],
             "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                         "name": "edit"}}
        with self.assertRaises(ApiError) as e:
            self.escalate(b, key="rolebindings.rbac.authorization.k8s.io")
        self.assertIn('rolebindings.rbac.authorization.k8s.io "b" is forbidden: user', e.exception.message)
        b["roleRef"] = {"kind": "Role", "name": "r"}
        self.escalate(b, key="rolebindings.rbac.authorization.k8s.io")
        b["roleRef"] = {"kind": "Role", "name": "missing"}
        with self.assertRaises(ApiError) as e:
            self.escalate(b, key="rolebindings.rbac.authorization.k8s.io")
        self.assertEqual(e.exception.code, 404)

    def owner(self, obj, old=None, extra=None):
        admission.owner_references(self.s, extra or {}, self.s.registry, self.u,
                                   self.s.registry.get("pods"), "default", "", obj, old)

    def test_owner_references(self):
        ref = {"apiVersion": "batch/v1", "kind": "Job", "name": "j", "uid": "u1"}
        pod = {"metadata": {"name": "p", "ownerReferences": [dict(ref, blockOwnerDeletion=True)]}}
        with self.assertRaises(ApiError) as e:
            self.owner(pod)
        self.assertEqual(e.exception.message,
                         'pods "p" is forbidden: cannot set blockOwnerDeletion if an ownerReference '
                         "refers to a resource you can't set finalizers on: , <nil>")
        self.owner({"metadata": {"name": "p", "ownerReferences": [ref]}})   # not blocking
        self.owner(pod, extra={"owner_references_enforcement": "false"})
        with self.assertRaises(ApiError) as e:   # an update changing them needs delete
            self.owner({"metadata": {"name": "p", "ownerReferences": [ref]}}, {"metadata": {"name": "p"}})
        self.assertIn("cannot set an ownerRef on a resource you can't delete", e.exception.message)
        bad = {"metadata": {"name": "p", "ownerReferences": [
            {"apiVersion": "x.io/v1", "kind": "Nope", "name": "n", "uid": "u", "blockOwnerDeletion": True}]}}
        with self.assertRaises(ApiError) as e:
            self.owner(bad)
        self.assertIn("cannot find RESTMapping for APIVersion x.io/v1 Kind Nope", e.exception.message)
        self.s.create(self.ROLES, "default", self.role(
            [{"apiGroups": ["batch"], "resources": ["jobs/finalizers"], "verbs": ["update"]}], "fin"))
        self.s.create("rolebindings.rbac.authorization.k8s.io", "default", {
            "metadata": {"name": "fin"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "fin"},
            "subjects": [{"kind": "ServiceAccount", "name": "a"}]})
        self.owner(pod)


CRD = {"metadata": {"name": "things.example.com"}, "spec": {
    "group": "example.com", "scope": "Namespaced",
    "names": {"plural": "things", "kind": "Thing"},
    "versions": [{"name": "v1", "served": True, "storage": True,
                  "subresources": {"status": {}},
                  "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                      "spec": {"type": "object", "properties": {
                          "size": {"type": "integer", "minimum": 1, "default": 2},
                          "mode": {"type": "string", "enum": ["a", "b"]},
                          "free": {"type": "object",
                                   "x-kubernetes-preserve-unknown-fields": True}}}}}}}]}}


class TlsAuthnTest(unittest.TestCase):
    """--tls-min-version and client certificates: real handshakes over a socket pair."""

    def setUp(self):
        import subprocess
        import tempfile
        from sim import tls
        self.tmp = tempfile.TemporaryDirectory(prefix="kubesim-tls-")
        self.pki = self.tmp.name
        tls.make_pki(self.pki)
        subprocess.run(["openssl", "req", "-x509", "-CA", "ca.crt", "-CAkey", "ca.key",
                        "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                        "-keyout", "u.key", "-out", "u.crt", "-days", "1",
                        "-subj", "/CN=alice/O=devs/O=ops"], cwd=self.pki, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def tearDown(self):
        self.tmp.cleanup()

    def handshake(self, min_version, client_max=None, cert=False):
        """(server's peercert or None, client error or None) of one handshake."""
        import socket
        import ssl
        import threading
        from sim import tls
        sctx = tls.server_context(self.pki, min_version)
        cctx = ssl.create_default_context(cafile=os.path.join(self.pki, "ca.crt"))
        if client_max:
            cctx.maximum_version = client_max
        if cert:
            cctx.load_cert_chain(os.path.join(self.pki, "u.crt"), os.path.join(self.pki, "u.key"))
        a, b = socket.socketpair()
        got = {}

        def serve():
            try:
                with sctx.wrap_socket(a, server_side=True) as ss:
                    got["peer"] = ss.getpeercert()
                    ss.recv(1)
            except (ssl.SSLError, OSError):
                pass
        t = threading.Thread(target=serve)
        t.start()
        err = None
        try:
            with cctx.wrap_socket(b, server_hostname="127.0.0.1") as cs:
                cs.sendall(b"x")
        except (ssl.SSLError, OSError) as e:
            err = e
        t.join(10)
        return got.get("peer"), err

    def test_min_version(self):
        import ssl
        self.assertIsNone(self.handshake("VersionTLS12", ssl.TLSVersion.TLSv1_2)[1])
        self.assertIsNotNone(self.handshake("VersionTLS13", ssl.TLSVersion.TLSv1_2)[1])
        self.assertIsNone(self.handshake("VersionTLS13")[1])

    def test_client_certificate_user(self):
        from sim.auth import cert_user
        peer, err = self.handshake("VersionTLS12", cert=True)
        self.assertIsNone(err)
        u = cert_user(peer)
        self.assertEqual((u.name, u.groups), ("alice", ["devs", "ops", "system:authenticated"]))
        self.assertIsNone(self.handshake("VersionTLS12")[0])    # no certificate: optional
        # a certificate wins over a token (x509 comes first); no CN: the token decides
        auth = Authenticator(new_store(), "admintok")
        self.assertEqual(auth.authenticate("Bearer admintok", peer).name, "alice")
        nocn = {"subject": ((("organizationName", "devs"),),)}
        self.assertEqual(auth.authenticate("Bearer admintok", nocn).name, "kubernetes-admin")


class LoopTest(unittest.TestCase):
    """Controllers need an event loop: run the loop briefly after each step."""

    def setUp(self):
        self.loop = asyncio.new_event_loop()
        asyncio.set_event_loop(self.loop)
        self.s = new_store()

    def tearDown(self):
        self.loop.close()

    def settle(self, secs=0.2):
        self.loop.run_until_complete(asyncio.sleep(secs))

    def test_crd_registration_pruning_defaults(self):
        CRDController(self.s)
        self.s.create("customresourcedefinitions.apiextensions.k8s.io", None, CRD)
        info = self.s.registry.get("things.example.com")
        self.assertIsNotNone(info)
        obj = prepare(info, "v1", {"metadata": {"name": "t"}, "spec": {
            "mode": "a", "junk": 1, "free": {"any": {"x": 1}}}})
        self.assertEqual(obj["spec"], {"mode": "a", "size": 2, "free": {"any": {"x": 1}}})
        with self.assertRaises(ApiError) as e:
            prepare(info, "v1", {"metadata": {"name": "t"}, "spec": {"mode": "c", "size": 0}})
        self.assertEqual(e.exception.code, 422)
        self.assertIn('spec.mode: Unsupported value: "c"', e.exception.message)
        self.s.create("things.example.com", "default", obj)
        self.s.delete("customresourcedefinitions.apiextensions.k8s.io", None,
                      "things.example.com")
        self.settle()
        self.assertIsNone(self.s.registry.get("things.example.com"))
        self.assertEqual(self.s.data.get("things.example.com"), {})

    def test_crd_field_validation_strict_warn_ignore(self):
        """fieldValidation: Strict refuses unknown fields with kube-apiserver's strict
        decoding message (sorted, list indexes in the path), Warn reports them, Ignore
        prunes silently; the schema is published in /openapi/v3 for kubectl explain."""
        from sim import discovery
        CRDController(self.s)
        self.s.create("customresourcedefinitions.apiextensions.k8s.io", None, CRD)
        info = self.s.registry.get("things.example.com")
        body = {"metadata": {"name": "t"}, "spec": {"mode": "a", "zz": 1, "aa": [1]}}
        with self.assertRaises(ApiError) as e:
            prepare(info, "v1", json.loads(json.dumps(body)), validation="Strict")
        self.assertEqual(e.exception.code, 400)
        self.assertEqual(e.exception.message, 'Thing in version "v1" cannot be handled as a '
                         'Thing: strict decoding error: unknown field "spec.aa", unknown '
                         'field "spec.zz"')
        warns = []
        obj = prepare(info, "v1", json.loads(json.dumps(body)), validation="Warn",
                      warnings=warns)
        self.assertEqual(warns, ['unknown field "spec.aa"', 'unknown field "spec.zz"'])
        self.assertEqual(obj["spec"], {"mode": "a", "size": 2})
        warns = []
        prepare(info, "v1", json.loads(json.dumps(body)), validation="Ignore", warnings=warns)
        self.assertEqual(warns, [])
        # preserved subtrees are not unknown; list items carry their index
        from sim.crd import prune
        unknown = []
        prune({"l": [{"a": 1, "b": 2}], "free": {"x": 1}}, {"type": "object", "properties": {
            "l": {"type": "array", "items": {"type": "object", "properties": {
                "a": {"type": "integer"}}}},
            "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}},
            unknown=unknown)
        self.assertEqual(unknown, ["l[0].b"])
        doc = discovery.openapi_gv(self.s.registry, "example.com", "v1")
        sch = doc["components"]["schemas"]["com.example.v1.Thing"]
        self.assertEqual(sch["x-kubernetes-group-version-kind"],
                         [{"group": "example.com", "version": "v1", "kind": "Thing"}])
        self.assertIn("size", sch["properties"]["spec"]["properties"])

    def test_gc_background_foreground_orphan(self):
        GarbageCollector(self.s)
        for mode in ("Background", "Foreground", "Orphan"):
            n = mode.lower()
            owner = self.s.create("configmaps", "default", {"metadata": {"name": "o-" + n}})
            ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": "o-" + n,
                   "uid": owner["metadata"]["uid"], "blockOwnerDeletion": True}
            self.s.create("configmaps", "default",
                          {"metadata": {"name": "d-" + n, "ownerReferences": [ref]}})
            self.s.delete("configmaps", "default", "o-" + n, propagation=mode)
            self.settle()
            self.assertIsNone(self.s.try_get("configmaps", "default", "o-" + n))
            dep = self.s.try_get("configmaps", "default", "d-" + n)
            if mode == "Orphan":
                self.assertNotIn("ownerReferences", dep["metadata"])
            else:
                self.assertIsNone(dep)

    def test_gc_incremental_missing_owner_namespace_and_expiry(self):
        gc = GarbageCollector(self.s, event_ttl=3600)
        # a dependent whose owner never existed goes; one whose owner lives stays
        owner = self.s.create("configmaps", "default", {"metadata": {"name": "own"}})
        good = {"apiVersion": "v1", "kind": "ConfigMap", "name": "own",
                "uid": owner["metadata"]["uid"]}
        bad = dict(good, uid="no-such-uid")
        self.s.create("configmaps", "default", {"metadata": {"name": "keep",
                                                             "ownerReferences": [good]}})
        self.s.create("configmaps", "default", {"metadata": {"name": "orphan",
                                                             "ownerReferences": [bad]}})
        self.settle()
        self.assertIsNotNone(self.s.try_get("configmaps", "default", "keep"))
        self.assertIsNone(self.s.try_get("configmaps", "default", "orphan"))
        # a chain: deleting the owner takes the dependent and its own dependent
        keep = self.s.get("configmaps", "default", "keep")
        self.s.create("configmaps", "default", {"metadata": {"name": "grandchild", "ownerReferences": [
            {"apiVersion": "v1", "kind": "ConfigMap", "name": "keep",
             "uid": keep["metadata"]["uid"]}]}})
        self.s.delete("configmaps", "default", "own")
        self.settle()
        self.assertEqual([c["metadata"]["name"] for c in self.s.list("configmaps", "default")
                          if c["metadata"]["name"] in ("keep", "grandchild")], [])
        # a terminating namespace is emptied, then removed
        self.s.create("namespaces", None, {"metadata": {"name": "gone"}})
        self.settle()
        self.s.create("configmaps", "gone", {"metadata": {"name": "x"}})
        self.s.delete("namespaces", None, "gone")
        self.settle()
        self.assertIsNone(self.s.try_get("namespaces", None, "gone"))
        self.assertEqual(self.s.list("configmaps", "gone"), [])
        # event expiry (--event-ttl)
        cm = self.s.get("configmaps", "default", "kube-root-ca.crt") if self.s.try_get(
            "configmaps", "default", "kube-root-ca.crt") else self.s.create(
            "configmaps", "default", {"metadata": {"name": "evowner"}})
        self.s.record_event(None, cm, "Normal", "Old", "old", "test")
        self.s.record_event(None, cm, "Normal", "New", "new", "test")
        old = [e for e in self.s.list("events", "default") if e["reason"] == "Old"][0]
        old["lastTimestamp"] = "2000-01-01T00:00:00Z"
        self.s.update("events", "default", old)
        gc.expire_events()
        self.assertEqual(sorted(e["reason"] for e in self.s.list("events", "default")), ["New"])

    def test_gc_retries_a_failed_delete(self):
        gc = GarbageCollector(self.s)
        gc.retry_seconds = 0.05
        # "default" may not be deleted (403): an owner reference to nothing makes the GC try
        with self.assertLogs("kubesim.gc", "WARNING") as logs:
            self.s.mutate("namespaces", None, "default", lambda o: o["metadata"].update(
                ownerReferences=[{"apiVersion": "v1", "kind": "ConfigMap", "name": "x",
                                  "uid": "gone"}]))
            self.settle(0.4)
        self.assertGreaterEqual(len([m for m in logs.output if "forbidden" in m]), 2)
        self.s.mutate("namespaces", None, "default",
                      lambda o: o["metadata"].pop("ownerReferences"))
        self.settle(0.2)

    def test_endpoints_follow_label_changes(self):
        EndpointsController(self.s)
        for i in range(3):
            self.s.create("services", "default", {"metadata": {"name": "s%d" % i}, "spec": {
                "clusterIP": "None", "selector": {"app": "s%d" % i, "tier": "w"},
                "ports": [{"port": 22}]}})
        self.s.create("pods", "default", pod("p", {"app": "s1", "tier": "w"}))
        self.s.update_status("pods", "default", "p", {"phase": "Running", "podIP": "10.250.1.9",
                                                      "conditions": [{"type": "Ready",
                                                                      "status": "True"}]})
        self.settle()

        def ips(svc):
            ep = self.s.get("endpoints", "default", svc)
            return [a["ip"] for sub in ep.get("subsets") or [] for a in sub.get("addresses", [])]
        self.assertEqual([ips("s0"), ips("s1"), ips("s2")], [[], ["10.250.1.9"], []])
        # relabelled: it leaves s1's endpoints and joins s2's
        self.s.mutate("pods", "default", "p", lambda o: o["metadata"]["labels"].update(app="s2"))
        self.settle()
        self.assertEqual([ips("s0"), ips("s1"), ips("s2")], [[], [], ["10.250.1.9"]])
        # the service's selector changes: the pod leaves
        svc = self.s.get("services", "default", "s2")
        svc["spec"]["selector"] = {"app": "other"}
        self.s.update("services", "default", svc)
        self.settle()
        self.assertEqual(ips("s2"), [])
        self.s.delete("pods", "default", "p")
        self.settle()
        self.assertEqual([ips("s0"), ips("s1"), ips("s2")], [[], [], []])

    def test_job_success_and_backoff(self):
        jc = JobController(self.s, backoff_base=0, resync=0.05)
        jc.start()
        self.s.create("jobs.batch", "default", {"metadata": {"name": "j"}, "spec": {
            "backoffLimit": 1, "template": {"spec": {
                "restartPolicy": "Never", "containers": [{"name": "c", "image": "i"}]}}}})
        self.settle()

        def pods():
            return self.s.list("pods", "default", label_selector="job-name=j")
        self.assertEqual(len(pods()), 1)
        p = pods()[0]
        self.assertIn("batch.kubernetes.io/job-tracking", p["metadata"]["finalizers"])
        self.s.update_status("pods", "default", p["metadata"]["name"], {"phase": "Failed"})
        self.settle()
        live = [x for x in pods() if x["status"]["phase"] != "Failed"]
        self.assertEqual(len(live), 1)
        self.s.update_status("pods", "default", live[0]["metadata"]["name"], {"phase": "Failed"})
        self.settle()
        j = self.s.get("jobs.batch", "default", "j")
        types = {c["type"]: c for c in j["status"]["conditions"]}
        self.assertEqual(types["Failed"]["reason"], "BackoffLimitExceeded")
        self.assertEqual(j["status"]["failed"], 2)
        jc.stop()
        self.settle(0.01)

    def test_endpoints_for_headless_service(self):
        EndpointsController(self.s)
        self.s.create("services", "default", {"metadata": {"name": "w"}, "spec": {
            "clusterIP": "None", "selector": {"app": "w"}, "ports": [{"port": 22}]}})
        p = self.s.create("pods", "default", pod("w-0", {"app": "w"}, hostname="w-0",
                                                 subdomain="w"))
        self.s.update_status("pods", "default", "w-0", {
            "phase": "Running", "podIP": "10.250.1.2",
            "conditions": [{"type": "Ready", "status": "True"}]})
        self.settle()
        ep = self.s.get("endpoints", "default", "w")
        addr = ep["subsets"][0]["addresses"][0]
        self.assertEqual((addr["ip"], addr["hostname"], addr["targetRef"]["uid"]),
                         ("10.250.1.2", "w-0", p["metadata"]["uid"]))
        self.assertEqual(ep["subsets"][0]["ports"], [{"port": 22, "protocol": "TCP"}])

    def test_deployment_creates_replicaset_and_pods(self):
        AppsController(self.s)
        self.s.create("deployments.apps", "default", {"metadata": {"name": "d"}, "spec": {
            "replicas": 2, "selector": {"matchLabels": {"app": "d"}},
            "template": {"metadata": {"labels": {"app": "d"}},
                         "spec": {"containers": [{"name": "c", "image": "i"}]}}}})
        self.settle()
        rss = self.s.list("replicasets.apps", "default")
        self.assertEqual(len(rss), 1)
        self.assertEqual(len(self.s.list("pods", "default", label_selector="app=d")), 2)
        with self.assertRaises(ApiError) as e:
            self.s.create("deployments.apps", "default", {"metadata": {"name": "bad"}, "spec": {
                "selector": {"matchLabels": {"app": "x"}},
                "template": {"metadata": {"labels": {"app": "y"}},
                             "spec": {"containers": [{"name": "c", "image": "i"}]}}}})
        self.assertEqual(e.exception.code, 422)


class HttpTest(unittest.TestCase):
    """The HTTP layer through aiohttp's test server (plain HTTP, no namespace, no root)."""

    def setUp(self):
        import json
        import tempfile
        from aiohttp import web
        from aiohttp.test_utils import TestClient, TestServer
        from sim import tls
        from sim.config import Config
        from sim.server import Server
        self.json = json
        self.loop = asyncio.new_event_loop()
        asyncio.set_event_loop(self.loop)
        self.tmp = tempfile.TemporaryDirectory(prefix="kubesim-unit-")
        cfg = Config(self.tmp.name, extra={"watch_window": "30", "bookmark_interval": "0.2"})
        os.makedirs(cfg.state_dir)
        tls.make_pki(os.path.join(cfg.dir, "pki"))
        self.server = Server(cfg)
        self.server.bootstrap()
        app = web.Application()
        app["kubelet"] = None
        app.router.add_route("*", "/{tail:.*}", self.server.handle)
        self.client = TestClient(TestServer(app), loop=self.loop)
        self.loop.run_until_complete(self.client.start_server())
        self.admin = {"Authorization": "Bearer " + self.server.admin_token}

    def tearDown(self):
        self.loop.run_until_complete(self.client.close())
        self.loop.close()
        self.tmp.cleanup()

    def req(self, method, path, body=None, headers=None, raw=False):
        async def go():
            h = dict(self.admin)
            h["Content-Type"] = "application/json"
            h.update(headers or {})
            data = body if isinstance(body, (bytes, type(None))) else self.json.dumps(body)
            r = await self.client.request(method, path, data=data, headers=h)
            text = await r.read()
            return r.status, (text if raw else (self.json.loads(text) if text else None))
        return self.loop.run_until_complete(go())

    def test_discovery(self):
        code, v = self.req("GET", "/version")
        self.assertEqual((code, v["minor"]), (200, "32"))
        _, groups = self.req("GET", "/apis")
        names = [g["name"] for g in groups["groups"]]
        for g in ("batch", "apps", "rbac.authorization.k8s.io", "apiextensions.k8s.io"):
            self.assertIn(g, names)
        _, core = self.req("GET", "/api/v1")
        res = {r["name"]: r for r in core["resources"]}
        self.assertEqual(res["pods/exec"]["verbs"], ["create", "get"])
        self.assertEqual(res["pods"]["shortNames"], ["po"])
        _, oa = self.req("GET", "/openapi/v3")
        self.assertIn("apis/batch/v1", oa["paths"])

    def test_errors_and_auth(self):
        code, st = self.req("GET", "/api/v1/namespaces/default/pods/x")
        self.assertEqual((code, st["reason"], st["message"]), (404, "NotFound",
                                                               'pods "x" not found'))
        code, st = self.req("GET", "/api/v1/pods", headers={"Authorization": "Bearer bad"})
        self.assertEqual((code, st["reason"]), (401, "Unauthorized"))
        tok = self.server.auth.token_for("default", "default")
        code, st = self.req("GET", "/api/v1/namespaces/default/pods",
                            headers={"Authorization": "Bearer " + tok})
        self.assertEqual(code, 403)
        self.assertEqual(st["message"], 'pods is forbidden: User "system:serviceaccount:'
                         'default:default" cannot list resource "pods" in API group "" in the '
                         'namespace "default"')
        code, _ = self.req("GET", "/version", headers={"Authorization": "Bearer " + tok})
        self.assertEqual(code, 200)

    def imp(self, token, pairs, path="/api/v1/namespaces/default/pods"):
        """GET path as token's owner with impersonation header pairs (repeatable)."""
        from multidict import CIMultiDict

        async def go():
            h = CIMultiDict([("Authorization", "Bearer " + token)] + pairs)
            r = await self.client.get(path, headers=h)
            return r.status, (await r.read()).decode()
        return self.loop.run_until_complete(go())

    def test_impersonation(self):
        self.req("POST", "/api/v1/namespaces/default/serviceaccounts",
                 {"metadata": {"name": "alice"}})
        tok = self.server.auth.token_for("default", "alice")
        alice = 'User "system:serviceaccount:default:alice" cannot impersonate resource '
        self.req("POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles", {
            "metadata": {"name": "imp"}, "rules": [
                {"apiGroups": [""], "resources": ["users", "groups"], "verbs": ["impersonate"],
                 "resourceNames": ["bob", "devs"]},
                {"apiGroups": ["authentication.k8s.io"], "resources": ["userextras/scopes"],
                 "verbs": ["impersonate"]}]})
        self.req("POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", {
            "metadata": {"name": "imp"}, "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "imp"},
            "subjects": [{"kind": "ServiceAccount", "name": "alice", "namespace": "default"}]})
        # allowed: runs as bob (who may not list pods)
        code, body = self.imp(tok, [("Impersonate-User", "bob")])
        self.assertEqual(code, 403)
        self.assertIn('User "bob" cannot list resource "pods"', self.json.loads(body)["message"])
        review = "/apis/authentication.k8s.io/v1/selfsubjectreviews"
        code, body = self.req("POST", review, {"kind": "SelfSubjectReview"}, headers={
            "Authorization": "Bearer " + tok, "Impersonate-User": "bob",
            "Impersonate-Group": "devs", "Impersonate-Extra-Scopes": "s1"})
        self.assertEqual((code, body["status"]["userInfo"]), (201, {
            "username": "bob", "groups": ["devs", "system:authenticated"],
            "extra": {"scopes": ["s1"]}}))
        cases = [
            ([("Impersonate-User", "carol")],
             'users "carol" is forbidden: ' + alice + '"users" in API group "" at the cluster '
             'scope'),
            ([("Impersonate-User", "bob"), ("Impersonate-Group", "devs"),
              ("Impersonate-Group", "ops")],
             'groups "ops" is forbidden: ' + alice + '"groups" in API group "" at the cluster '
             'scope'),
            ([("Impersonate-User", "system:serviceaccount:kube-system:x")],
             'serviceaccounts "x" is forbidden: ' + alice + '"serviceaccounts" in API group "" '
             'in the namespace "kube-system"'),
            ([("Impersonate-User", "bob"), ("Impersonate-Uid", "u1")],
             'uids.authentication.k8s.io "u1" is forbidden: ' + alice + '"uids" in API group '
             '"authentication.k8s.io" at the cluster scope'),
            ([("Impersonate-User", "bob"), ("Impersonate-Extra-Acme.com%2fProject", "p")],
             'userextras.authentication.k8s.io "p" is forbidden: ' + alice +
             '"userextras/acme.com/project" in API group "authentication.k8s.io" at the '
             'cluster scope')]
        for pairs, msg in cases:
            code, body = self.imp(tok, pairs)
            self.assertEqual((code, self.json.loads(body)["message"]), (403, msg), pairs)
        code, body = self.imp(tok, [("Impersonate-Group", "devs")])
        self.assertEqual((code, body), (500, 'Internal Server Error: "/api/v1/namespaces/'
                                        'default/pods": requested [{Group  devs    }] without '
                                        'impersonating a user\n'))
        # a service account impersonated without groups gets its fixed groups
        code, body = self.req("POST", review, {"kind": "SelfSubjectReview"}, headers={
            "Impersonate-User": "system:serviceaccount:ns1:sa1"})
        self.assertEqual(body["status"]["userInfo"]["groups"], [
            "system:serviceaccounts", "system:serviceaccounts:ns1", "system:authenticated"])

    def test_pagination_and_table(self):
        for i in range(3):
            self.req("POST", "/api/v1/namespaces/default/configmaps",
                     {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c%d" % i}})
        names, cont = [], ""
        for _ in range(10):
            q = "?limit=2" + ("&continue=" + cont if cont else "")
            _, lst = self.req("GET", "/api/v1/namespaces/default/configmaps" + q)
            names += [o["metadata"]["name"] for o in lst["items"]]
            cont = lst["metadata"].get("continue")
            if not cont:
                break
        self.assertEqual(names, ["c0", "c1", "c2", "kube-root-ca.crt"])
        _, t = self.req("GET", "/api/v1/namespaces/default/configmaps", headers={
            "Accept": "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"})
        self.assertEqual(t["kind"], "Table")
        self.assertEqual([c["name"] for c in t["columnDefinitions"]], ["Name", "Data", "Age"])
        self.assertEqual(t["rows"][0]["cells"][:2], ["c0", 0])

    def test_watch_bookmarks_and_expiry(self):
        _, lst = self.req("GET", "/api/v1/namespaces/default/configmaps")
        rv = lst["metadata"]["resourceVersion"]

        async def watch(q):
            r = await self.client.get("/api/v1/namespaces/default/configmaps?watch=1&" + q,
                                      headers=self.admin)
            body = await r.read()
            return [self.json.loads(x) for x in body.splitlines() if x.strip()]

        async def create_later():
            await asyncio.sleep(0.1)
            self.server.store.create("configmaps", "default", {"metadata": {"name": "late"}})

        async def both():
            t = asyncio.ensure_future(create_later())
            evs = await watch("resourceVersion=%s&allowWatchBookmarks=true&timeoutSeconds=1"
                              % rv)
            await t
            return evs
        evs = self.loop.run_until_complete(both())
        types = [e["type"] for e in evs]
        self.assertEqual(types[0], "ADDED")
        self.assertEqual(evs[0]["object"]["metadata"]["name"], "late")
        self.assertIn("BOOKMARK", types)
        for i in range(40):
            self.server.store.create("configmaps", "default", {"metadata": {"name": "x%d" % i}})
        evs = self.loop.run_until_complete(watch("resourceVersion=%s&timeoutSeconds=1" % rv))
        self.assertEqual(evs[0]["type"], "ERROR")
        self.assertEqual((evs[0]["object"]["code"], evs[0]["object"]["reason"]),
                         (410, "Expired"))

    def test_protobuf_create_and_unsupported_media(self):
        meta = _pb_field(1, 2, b"pb")
        body = protobuf.MAGIC + _pb_field(1, 2, _pb_field(1, 2, b"v1") + _pb_field(
            2, 2, b"ConfigMap")) + _pb_field(2, 2, _pb_field(1, 2, meta))
        code, obj = self.req("POST", "/api/v1/namespaces/default/configmaps", body,
                             {"Content-Type": "application/vnd.kubernetes.protobuf"})
        self.assertEqual((code, obj["metadata"]["name"]), (201, "pb"))
        code, st = self.req("POST", "/api/v1/namespaces/default/configmaps", b"x",
                            {"Content-Type": "application/cbor"})
        self.assertEqual(code, 415)

    def test_delete_propagation_and_patch_types(self):
        code, _ = self.req("POST", "/api/v1/namespaces/default/configmaps",
                           {"metadata": {"name": "p"}, "data": {"a": "1"}})
        self.assertEqual(code, 201)
        code, obj = self.req("PATCH", "/api/v1/namespaces/default/configmaps/p",
                             {"data": {"b": "2"}},
                             {"Content-Type": "application/strategic-merge-patch+json"})
        self.assertEqual((code, obj["data"]), (200, {"a": "1", "b": "2"}))
        code, st = self.req("PATCH", "/api/v1/namespaces/default/configmaps/p", {"x": 1},
                            {"Content-Type": "text/plain"})
        self.assertEqual(code, 415)
        code, st = self.req("DELETE", "/api/v1/namespaces/default/configmaps/p",
                            {"propagationPolicy": "Sideways"})
        self.assertEqual(code, 400)
        code, st = self.req("DELETE", "/api/v1/namespaces/default/configmaps/p")
        self.assertEqual((code, st["status"]), (200, "Success"))
        code, _ = self.req("DELETE", "/api/v1/namespaces")
        self.assertEqual(code, 405)
        code, st = self.req("POST", "/api/v1/namespaces/default/configmaps",
                            {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "k"}})
        self.assertEqual((code, st["message"]), (400, 'Secret in version "v1" cannot be '
                                                      'handled as a ConfigMap: kind mismatch'))
        code, st = self.req("POST", "/api/v1/namespaces/default/configmaps",
                            {"apiVersion": "v2", "kind": "ConfigMap", "metadata": {"name": "k"}})
        self.assertEqual(code, 400)


if __name__ == "__main__":
    unittest.main()
