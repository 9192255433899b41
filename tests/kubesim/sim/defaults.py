"""Server-side defaults and admission for built-in kinds (what kubectl and controllers
expect the API server to fill in): pods (+ service-account token volume), services
(cluster IP), jobs (selector, labels), namespaces, secrets, CRDs."""
import ipaddress
import re

from . import errors
from .store import rand_suffix

SA_MOUNT = "/var/run/secrets/kubernetes.io/serviceaccount"
_DNS1123 = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


def _container_defaults(c):
    c.setdefault("terminationMessagePath", "/dev/termination-log")
    c.setdefault("terminationMessagePolicy", "File")
    img = c.get("image", "")
    if "imagePullPolicy" not in c:
        c["imagePullPolicy"] = "Always" if img.endswith(":latest") or ":" not in \
            img.rsplit("/", 1)[-1] else "IfNotPresent"
    c.setdefault("resources", {})
    for p in c.get("ports") or []:
        p.setdefault("protocol", "TCP")
    for probe in ("readinessProbe", "livenessProbe", "startupProbe"):
        pr = c.get(probe)
        if isinstance(pr, dict):
            for k, v in (("timeoutSeconds", 1), ("periodSeconds", 10), ("successThreshold", 1),
                         ("failureThreshold", 3)):
                pr.setdefault(k, v)
    # requests default to limits
    r = c["resources"]
    if r.get("limits") and "requests" not in r:
        r["requests"] = dict(r["limits"])


def pod_spec_defaults(spec):
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("securityContext", {})
    spec.setdefault("schedulerName", "default-scheduler")
    spec.setdefault("enableServiceLinks", True)
    spec.setdefault("preemptionPolicy", "PreemptLowerPriority")
    spec.setdefault("priority", 0)
    for c in (spec.get("containers") or []) + (spec.get("initContainers") or []):
        _container_defaults(c)
    for v in spec.get("volumes") or []:
        for src in ("configMap", "secret"):
            if isinstance(v.get(src), dict):
                v[src].setdefault("defaultMode", 0o644)
        if isinstance(v.get("projected"), dict):
            v["projected"].setdefault("defaultMode", 0o644)
        if isinstance(v.get("downwardAPI"), dict):
            v["downwardAPI"].setdefault("defaultMode", 0o644)


def _validate_pod(name, spec):
    if not spec.get("containers"):
        raise errors.invalid("Pod", name, [("spec.containers", "Required value")])
    seen = set()
    for i, c in enumerate((spec.get("initContainers") or []) + spec["containers"]):
        if not c.get("name"):
            raise errors.invalid("Pod", name, [("spec.containers[%d].name" % i, "Required value")])
        if c["name"] in seen:
            raise errors.invalid("Pod", name, [("spec.containers[%d].name" % i,
                                 'Duplicate value: "%s"' % c["name"])])
        seen.add(c["name"])
        if not c.get("image"):
            raise errors.invalid("Pod", name, [("spec.containers[%d].image" % i,
                                 "Required value")])


def pod_create(store, info, pod):
    md = pod["metadata"]
    spec = pod.setdefault("spec", {})
    _validate_pod(md.get("name") or md.get("generateName", ""), spec)
    if spec.get("serviceAccount") and not spec.get("serviceAccountName"):
        spec["serviceAccountName"] = spec["serviceAccount"]
    spec.setdefault("serviceAccountName", "default")
    spec["serviceAccount"] = spec["serviceAccountName"]
    ns = md["namespace"]
    sa = store.try_get("serviceaccounts", ns, spec["serviceAccountName"])
    if sa is None:
        raise errors.ApiError(403, "Forbidden",
                              'pods "%s" is forbidden: error looking up service account %s/%s: '
                              'serviceaccount "%s" not found' % (md.get("name") or md.get(
                                  "generateName", ""), ns, spec["serviceAccountName"],
                                  spec["serviceAccountName"]),
                              {"name": md.get("name", ""), "kind": "pods"})
    automount = spec.get("automountServiceAccountToken")
    if automount is None:
        automount = sa.get("automountServiceAccountToken", True)
    if automount:
        vname = "kube-api-access-" + rand_suffix()
        vols = spec.setdefault("volumes", [])
        mounted = any(m.get("mountPath") == SA_MOUNT for c in spec.get("containers", [])
                      for m in c.get("volumeMounts") or [])
        if not mounted:
            vols.append({"name": vname, "projected": {"defaultMode": 0o644, "sources": [
                {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                {"configMap": {"name": "kube-root-ca.crt",
                               "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {
                    "apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}}]}})
            for c in (spec.get("initContainers") or []) + spec.get("containers", []):
                c.setdefault("volumeMounts", []).append(
                    {"name": vname, "readOnly": True, "mountPath": SA_MOUNT})
    pod_spec_defaults(spec)
    spec.setdefault("tolerations", [
        {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
         "tolerationSeconds": 300},
        {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
         "tolerationSeconds": 300}])
    pod["status"] = {"phase": "Pending", "qosClass": _qos(spec)}


def _qos(spec):
    cs = spec.get("containers") or []
    if not any((c.get("resources") or {}).get("requests") or (c.get("resources") or {}).get(
            "limits") for c in cs):
        return "BestEffort"
    for c in cs:
        r = c.get("resources") or {}
        lim, req = r.get("limits") or {}, r.get("requests") or {}
        if not lim.get("cpu") or not lim.get("memory") or req != lim:
            return "Burstable"
    return "Guaranteed"


def pod_update(store, info, old, new):
    """spec is mostly immutable; allow image and activeDeadlineSeconds/tolerations changes."""
    os_, ns_ = old.get("spec", {}), new.get("spec", {})
    if not ns_.get("nodeName") and os_.get("nodeName"):
        ns_["nodeName"] = os_["nodeName"]
    a = {k: v for k, v in ns_.items() if k not in ("activeDeadlineSeconds", "tolerations",
                                                    "containers", "initContainers")}
    b = {k: v for k, v in os_.items() if k not in ("activeDeadlineSeconds", "tolerations",
                                                   "containers", "initContainers")}
    if a != b:
        name = new["metadata"]["name"]
        raise errors.invalid("Pod", name, [("spec", "Forbidden: pod updates may not change "
                                            "fields other than `spec.containers[*].image`, "
                                            "`spec.initContainers[*].image`, "
                                            "`spec.activeDeadlineSeconds`, `spec.tolerations` "
                                            "(only additions to existing tolerations), "
                                            "`spec.terminationGracePeriodSeconds` (allow it to "
                                            "be set to 1 if it was previously negative)")])


class ServiceIPs:
    def __init__(self):
        self.net = ipaddress.ip_network("10.96.0.0/16")
        self.next = 10

    def alloc(self, store):
        used = {s.get("spec", {}).get("clusterIP") for s in
                store.data.get("services", {}).values()}
        while True:
            ip = str(self.net[self.next])
            self.next += 1
            if ip not in used:
                return ip


_IPS = ServiceIPs()


def service_create(store, info, svc):
    spec = svc.setdefault("spec", {})
    spec.setdefault("type", "ClusterIP")
    spec.setdefault("sessionAffinity", "None")
    if spec.get("clusterIP") in (None, ""):
        spec["clusterIP"] = _IPS.alloc(store)
    spec["clusterIPs"] = [spec["clusterIP"]]
    spec.setdefault("ipFamilies", ["IPv4"])
    spec.setdefault("ipFamilyPolicy", "SingleStack")
    spec.setdefault("internalTrafficPolicy", "Cluster")
    for p in spec.get("ports") or []:
        p.setdefault("protocol", "TCP")
        p.setdefault("targetPort", p.get("port"))
    svc["status"] = {"loadBalancer": {}}


def service_update(store, info, old, new):
    spec = new.setdefault("spec", {})
    ospec = old.get("spec", {})
    if not spec.get("clusterIP"):
        spec["clusterIP"] = ospec.get("clusterIP")
        spec["clusterIPs"] = ospec.get("clusterIPs")
    elif spec["clusterIP"] != ospec.get("clusterIP"):
        raise errors.invalid("Service", new["metadata"]["name"],
                             [("spec.clusterIPs[0]", "Invalid value: []string{\"%s\"}: may not "
                               "change once set" % spec["clusterIP"])])
    for k in ("type", "sessionAffinity", "ipFamilies", "ipFamilyPolicy",
              "internalTrafficPolicy"):
        if k not in spec and k in ospec:
            spec[k] = ospec[k]
    for p in spec.get("ports") or []:
        p.setdefault("protocol", "TCP")
        p.setdefault("targetPort", p.get("port"))


def job_create(store, info, job):
    md = job["metadata"]
    spec = job.setdefault("spec", {})
    spec.setdefault("parallelism", 1)
    spec.setdefault("completions", 1)
    spec.setdefault("backoffLimit", 6)
    spec.setdefault("completionMode", "NonIndexed")
    spec.setdefault("suspend", False)
    spec.setdefault("manualSelector", False)
    tmpl = spec.setdefault("template", {})
    tspec = tmpl.setdefault("spec", {})
    if tspec.get("restartPolicy") not in ("Never", "OnFailure"):
        raise errors.invalid("Job", md.get("name") or md.get("generateName", ""), [
            ("spec.template.spec.restartPolicy",
             'Required value: valid values: "OnFailure", "Never"' if not tspec.get(
                 "restartPolicy") else 'Unsupported value: "%s": supported values: "OnFailure", '
             '"Never"' % tspec.get("restartPolicy"))])
    spec.setdefault("podReplacementPolicy", "TerminatingOrFailed")
    pod_spec_defaults(tspec)
    uid = md["uid"]
    uid_label = {"batch.kubernetes.io/controller-uid": uid}
    if not spec.get("manualSelector"):
        tlabels = tmpl.setdefault("metadata", {}).setdefault("labels", {})
        tlabels.update({"batch.kubernetes.io/controller-uid": uid,
                        "batch.kubernetes.io/job-name": md.get("name", ""),
                        "controller-uid": uid, "job-name": md.get("name", "")})
        spec["selector"] = {"matchLabels": dict(uid_label)}
    job["status"] = {}


def namespace_create(store, info, ns):
    name = ns["metadata"]["name"]
    if not _LABEL.match(name) or len(name) > 63:
        raise errors.invalid("Namespace", name, [("metadata.name", 'Invalid value: "%s": a '
                             "lowercase RFC 1123 label must consist of lower case alphanumeric "
                             "characters or '-', and must start and end with an alphanumeric "
                             "character (e.g. 'my-name',  or '123-abc', regex used for "
                             "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')" % name)])
    ns["metadata"].setdefault("labels", {})["kubernetes.io/metadata.name"] = name
    ns["spec"] = {"finalizers": ["kubernetes"]}
    ns["status"] = {"phase": "Active"}


def secret_create(store, info, s):
    s.setdefault("type", "Opaque")


_LABEL_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_DNS1035 = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
_CM_KEY = re.compile(r"^[-._a-zA-Z0-9]+$")
_RBAC = ("roles.rbac.authorization.k8s.io", "clusterroles.rbac.authorization.k8s.io",
         "rolebindings.rbac.authorization.k8s.io",
         "clusterrolebindings.rbac.authorization.k8s.io")
_SUBDOMAIN_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
                  "characters, '-' or '.', and must start and end with an alphanumeric "
                  "character (e.g. 'example.com', regex used for validation is "
                  "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
_LABEL_MSG = ("a lowercase RFC 1123 label must consist of lower case alphanumeric "
              "characters or '-', and must start and end with an alphanumeric character "
              "(e.g. 'my-name',  or '123-abc', regex used for validation is "
              "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')")


def _label_key_errors(k):
    prefix, _, name = k.rpartition("/")
    errs = []
    if prefix and (not _DNS1123.match(prefix) or len(prefix) > 253):
        errs.append("prefix part " + _SUBDOMAIN_MSG)
    if not name or not _LABEL_NAME.match(name):
        errs.append("name part must consist of alphanumeric characters, '-', '_' or '.', and "
                    "must start and end with an alphanumeric character (e.g. 'MyName',  or "
                    "'my.name',  or '123-abc', regex used for validation is "
                    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")
    elif len(name) > 63:
        errs.append("name part must be no more than 63 characters")
    return errs


def _label_value_errors(v):
    if not isinstance(v, str):
        return ["must be a string"]
    if len(v) > 63:
        return ["must be no more than 63 characters"]
    if v and not _LABEL_NAME.match(v):
        return ["a valid label must be an empty string or consist of alphanumeric characters, "
                "'-', '_' or '.', and must start and end with an alphanumeric character (e.g. "
                "'MyValue',  or 'my_value',  or '12345', regex used for validation is "
                "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"]
    return []


def _dns_label(v):
    return isinstance(v, str) and len(v) <= 63 and bool(_LABEL.match(v))


def name_validate(store, info, obj, old):
    """Object names, label keys/values, and a few per-kind name rules, with Kubernetes'
    messages (422 Invalid)."""
    md = obj["metadata"]
    name = md.get("name", "")
    causes = []
    if info.key not in ("events", "events.events.k8s.io") and old is None:
        if info.key == "services":
            if not _DNS1035.match(name) or len(name) > 63:
                causes.append(("metadata.name", 'Invalid value: "%s": a DNS-1035 label must '
                               "consist of lower case alphanumeric characters or '-', start "
                               "with an alphabetic character, and end with an alphanumeric "
                               "character (e.g. 'my-name',  or 'abc-123', regex used for "
                               "validation is '[a-z]([-a-z0-9]*[a-z0-9])?')" % name))
        elif info.key not in _RBAC and (not _DNS1123.match(name) or len(name) > 253):
            causes.append(("metadata.name", 'Invalid value: "%s": %s' % (name, _SUBDOMAIN_MSG)))
    for k, v in (md.get("labels") or {}).items():
        for e in _label_key_errors(k):
            causes.append(("metadata.labels", 'Invalid value: "%s": %s' % (k, e)))
        for e in _label_value_errors(v):
            causes.append(("metadata.labels", 'Invalid value: "%s": %s' % (v, e)))
    for k, v in (md.get("annotations") or {}).items():
        for e in _label_key_errors(k):
            causes.append(("metadata.annotations", 'Invalid value: "%s": %s' % (k, e)))
        if not isinstance(v, str):
            causes.append(("metadata.annotations", "Invalid value: must be a string"))
    if info.key in ("configmaps", "secrets"):
        for fld in ("data", "binaryData", "stringData"):
            for k in (obj.get(fld) or {}):
                if not _CM_KEY.match(k) or len(k) > 253:
                    causes.append(("%s[%s]" % (fld, k), 'Invalid value: "%s": a valid config key '
                                   "must consist of alphanumeric characters, '-', '_' or '.' "
                                   "(e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex "
                                   "used for validation is '[-._a-zA-Z0-9]+')" % k))
    if info.key == "pods":
        spec = obj.get("spec") or {}
        for fld in ("hostname", "subdomain"):
            if spec.get(fld) and not _dns_label(spec[fld]):
                causes.append(("spec." + fld, 'Invalid value: "%s": %s' % (spec[fld],
                                                                            _LABEL_MSG)))
        for i, c in enumerate(spec.get("containers") or []):
            if c.get("name") and not _dns_label(c["name"]):
                causes.append(("spec.containers[%d].name" % i, 'Invalid value: "%s": %s'
                               % (c["name"], _LABEL_MSG)))
    if causes:
        raise errors.invalid(info.kind, name, causes)


def install(store):
    store.hooks_create.setdefault("pods", []).append(pod_create)
    store.hooks_update.setdefault("pods", []).append(pod_update)
    store.hooks_create.setdefault("services", []).append(service_create)
    store.hooks_update.setdefault("services", []).append(service_update)
    store.hooks_create.setdefault("jobs.batch", []).append(job_create)
    store.hooks_create.setdefault("namespaces", []).append(namespace_create)
    store.hooks_create.setdefault("secrets", []).append(secret_create)
    store.hooks_validate.setdefault("*", []).append(name_validate)
