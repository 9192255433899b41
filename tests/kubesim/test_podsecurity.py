"""Unit tests of kubesim's Pod Security admission (sim/podsecurity.py): the namespace's
enforce label decides, and a refused pod gets kube-apiserver's 403 with the library's
wording and order (the expected texts are messages real API servers printed).
Run: /usr/bin/python3 -m unittest discover -s tests/kubesim -p 'test_*.py'"""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from sim import defaults, podsecurity  # noqa: E402
from sim.errors import ApiError  # noqa: E402
from sim.store import Store  # noqa: E402

RESTRICTED_SC = {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]},
                 "runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}}


def store_with(level):
    s = Store(watch_window=100)
    defaults.install(s)
    podsecurity.install(s)
    labels = {podsecurity.LABEL: level} if level else {}
    s.create("namespaces", None, {"metadata": {"name": "ns", "labels": labels}})
    s.create("serviceaccounts", "ns", {"metadata": {"name": "default"}})
    return s


def pod(name, containers, **spec):
    return {"metadata": {"name": name}, "spec": {"containers": containers, **spec}}


class PodSecurityTest(unittest.TestCase):
    def refused(self, s, p):
        with self.assertRaises(ApiError) as e:
            s.create("pods", "ns", p)
        self.assertEqual((e.exception.code, e.exception.reason), (403, "Forbidden"))
        return e.exception.message

    def test_unlabelled_and_privileged_admit_anything(self):
        for level in (None, "privileged"):
            s = store_with(level)
            s.create("pods", "ns", pod("p", [{"name": "c", "image": "i",
                                              "securityContext": {"privileged": True}}], hostNetwork=True))

    def test_restricted_all_defaults(self):
        s = store_with("restricted")
        self.assertEqual(self.refused(s, pod("pod-hostpath", [{"name": "nginx", "image": "nginx"}],
                                             volumes=[{"name": "host-etc", "hostPath": {"path": "/etc"}}])),
                         'pods "pod-hostpath" is forbidden: violates PodSecurity "restricted:latest": '
                         'allowPrivilegeEscalation != false (container "nginx" must set '
                         'securityContext.allowPrivilegeEscalation=false), unrestricted capabilities '
                         '(container "nginx" must set securityContext.capabilities.drop=["ALL"]), '
                         'restricted volume types (volume "host-etc" uses restricted volume type "hostPath"), '
                         'runAsNonRoot != true (pod or container "nginx" must set securityContext.runAsNonRoot=true), '
                         'seccompProfile (pod or container "nginx" must set securityContext.seccompProfile.type '
                         'to "RuntimeDefault" or "Localhost")')

    def test_restricted_everything_wrong(self):
        s = store_with("restricted")
        c = {"name": "violation-container", "image": "i", "securityContext": {
            "privileged": True, "runAsUser": 0,
            "capabilities": {"add": ["SYS_ADMIN", "NET_ADMIN"]}}}
        self.assertEqual(self.refused(s, pod("security-violations", [c],
                                             volumes=[{"name": "host-root", "hostPath": {"path": "/"}}])),
                         'pods "security-violations" is forbidden: violates PodSecurity "restricted:latest": '
                         'privileged (container "violation-container" must not set securityContext.privileged=true), '
                         'allowPrivilegeEscalation != false (container "violation-container" must set '
                         'securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container '
                         '"violation-container" must set securityContext.capabilities.drop=["ALL"]; container '
                         '"violation-container" must not include "NET_ADMIN", "SYS_ADMIN" in '
                         'securityContext.capabilities.add), restricted volume types (volume "host-root" uses '
                         'restricted volume type "hostPath"), runAsNonRoot != true (pod or container '
                         '"violation-container" must set securityContext.runAsNonRoot=true), runAsUser=0 (container '
                         '"violation-container" must not set runAsUser=0), seccompProfile (pod or container '
                         '"violation-container" must set securityContext.seccompProfile.type to "RuntimeDefault" '
                         'or "Localhost")')

    def test_restricted_compliant_and_pod_level(self):
        s = store_with("restricted")
        s.create("pods", "ns", pod("ok", [{"name": "c", "image": "i", "securityContext": RESTRICTED_SC}],
                                   volumes=[{"name": "e", "emptyDir": {}}, {"name": "s", "secret": {"secretName": "x"}}]))
        # pod-level runAsNonRoot and seccomp cover every container; init containers are checked too
        csc = {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}
        s.create("pods", "ns", pod("ok2", [{"name": "c", "image": "i", "securityContext": csc}],
                                   initContainers=[{"name": "init", "image": "i", "securityContext": csc}],
                                   securityContext={"runAsNonRoot": True, "runAsUser": 1000,
                                                    "seccompProfile": {"type": "RuntimeDefault"}}))
        msg = self.refused(s, pod("p", [{"name": "c", "image": "i", "securityContext": csc}],
                                  initContainers=[{"name": "mpi-agent-init", "image": "i"},
                                                  {"name": "b", "image": "i"}],
                                  securityContext={"runAsNonRoot": True,
                                                   "seccompProfile": {"type": "RuntimeDefault"}}))
        self.assertEqual(msg, 'pods "p" is forbidden: violates PodSecurity "restricted:latest": '
                              'allowPrivilegeEscalation != false (containers "mpi-agent-init", "b" must set '
                              'securityContext.allowPrivilegeEscalation=false), unrestricted capabilities '
                              '(containers "mpi-agent-init", "b" must set securityContext.capabilities.drop=["ALL"])')

    def test_explicit_false_and_unconfined(self):
        s = store_with("restricted")
        sc = dict(RESTRICTED_SC, runAsNonRoot=False, seccompProfile={"type": "Unconfined"})
        self.assertEqual(self.refused(s, pod("p", [{"name": "c", "image": "i", "securityContext": sc}],
                                             securityContext={"runAsUser": 0})),
                         'pods "p" is forbidden: violates PodSecurity "restricted:latest": runAsNonRoot != true '
                         '(container "c" must not set securityContext.runAsNonRoot=false), runAsUser=0 (pod must '
                         'not set runAsUser=0), seccompProfile (container "c" must not set '
                         'securityContext.seccompProfile.type to "Unconfined")')

    def test_baseline(self):
        s = store_with("baseline")
        # restricted's demands do not apply; hostPath, host namespaces and privileged do
        s.create("pods", "ns", pod("ok", [{"name": "c", "image": "i"}]))
        msg = self.refused(s, pod("b", [{"name": "a", "image": "i", "ports": [{"containerPort": 80, "hostPort": 80}],
                                         "securityContext": {"privileged": True,
                                                             "capabilities": {"add": ["NET_ADMIN", "CHOWN"]}}}],
                                  hostNetwork=True, hostPID=True,
                                  volumes=[{"name": "h", "hostPath": {"path": "/"}}]))
        self.assertEqual(msg, 'pods "b" is forbidden: violates PodSecurity "baseline:latest": non-default '
                              'capabilities (container "a" must not include "NET_ADMIN" in '
                              'securityContext.capabilities.add), host namespaces (hostNetwork=true, hostPID=true), '
                              'hostPath volumes (volume "h"), hostPort (container "a" uses hostPort 80), privileged '
                              '(container "a" must not set securityContext.privileged=true)')

    def test_version_label_and_generate_name(self):
        s = store_with("restricted")
        ns = s.get("namespaces", None, "ns")
        ns["metadata"]["labels"][podsecurity.VERSION_LABEL] = "v1.32"
        s.update("namespaces", None, ns)
        p = {"metadata": {"generateName": "job-"}, "spec": {"containers": [
            {"name": "c", "image": "i", "securityContext": dict(RESTRICTED_SC, runAsNonRoot=None)}]}}
        p["spec"]["containers"][0]["securityContext"].pop("runAsNonRoot")
        msg = self.refused(s, p)
        self.assertRegex(msg, r'^pods "job-[a-z0-9]{5}" is forbidden: violates PodSecurity "restricted:v1.32": '
                              r'runAsNonRoot != true \(pod or container "c" must set securityContext.runAsNonRoot=true\)$')

    def test_namespace_labels_validated(self):
        s = store_with(None)
        with self.assertRaises(ApiError) as e:
            s.create("namespaces", None, {"metadata": {"name": "typo", "labels": {podsecurity.LABEL: "strict"}}})
        self.assertEqual((e.exception.code, e.exception.message),
                         (422, 'Namespace "typo" is invalid: metadata.labels[pod-security.kubernetes.io/enforce]: '
                               'Invalid value: "strict": must be one of privileged, baseline, restricted'))
        ns = s.get("namespaces", None, "ns")
        ns["metadata"]["labels"][podsecurity.VERSION_LABEL] = "1.32"
        with self.assertRaises(ApiError) as e:
            s.update("namespaces", None, ns)
        self.assertEqual(e.exception.message, 'Namespace "ns" is invalid: '
                         'metadata.labels[pod-security.kubernetes.io/enforce-version]: Invalid value: "1.32": '
                         'must be "latest" or "v1.x"')
        ns["metadata"]["labels"][podsecurity.VERSION_LABEL] = "v1.32"
        s.update("namespaces", None, ns)


if __name__ == "__main__":
    unittest.main()
