"""Pod Security admission as kube-apiserver's PodSecurity plugin enforces it
(k8s.io/pod-security-admission): a pod created in a namespace labelled
pod-security.kubernetes.io/enforce=baseline|restricted is refused with 403 Forbidden and
`pods "NAME" is forbidden: violates PodSecurity "LEVEL:VERSION": reason (detail), ...`,
each failed check worded as the library words it, in its order (the baseline checks, then
the restricted ones, each level by check ID; a restricted check replaces the baseline
check it overrides). Only the checks that apply to what kubesim runs are implemented
(Linux pods: host namespaces, privileged, capabilities, hostPath and other volume types,
hostPorts, seccomp, allowPrivilegeEscalation, runAsNonRoot, runAsUser); AppArmor,
SELinux, procMount, sysctls and Windows options are not checked. Only enforce: no warn
or audit labels, no exemptions, pod updates are not re-checked. Namespaces: the
enforce/audit/warn level and version labels must parse (422 as the plugin words it)."""

import re

from . import errors

LABEL = "pod-security.kubernetes.io/enforce"
VERSION_LABEL = "pod-security.kubernetes.io/enforce-version"
LEVELS = ("privileged", "baseline", "restricted")

# capabilities_baseline: what a baseline container may add
BASELINE_CAPS = {"AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD",
                 "NET_BIND_SERVICE", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT"}
# restrictedVolumes: the volume sources a restricted pod may use
ALLOWED_VOLUMES = ("configMap", "csi", "downwardAPI", "emptyDir", "ephemeral",
                   "persistentVolumeClaim", "projected", "secret")


def _quote(names):
    return ", ".join('"%s"' % n for n in names)


def _plural(one, many, n):
    return one if n == 1 else many


def _containers(spec):
    """initContainers, containers, ephemeralContainers: the library's visit order."""
    for key in ("initContainers", "containers", "ephemeralContainers"):
        for c in spec.get(key) or []:
            yield c


def _sc(c):
    return c.get("securityContext") or {}


def _named(word, names):
    return "%s %s" % (_plural(word, word + "s", len(names)), _quote(names))


def check_host_namespaces(spec):
    used = sorted(k + "=true" for k in ("hostIPC", "hostNetwork", "hostPID") if spec.get(k))
    return ("host namespaces", ", ".join(used)) if used else None


def check_capabilities_baseline(spec):
    bad, caps = [], set()
    for c in _containers(spec):
        add = [x for x in ((_sc(c).get("capabilities") or {}).get("add") or [])
               if x not in BASELINE_CAPS]
        if add:
            bad.append(c.get("name"))
            caps.update(add)
    if not bad:
        return None
    return ("non-default capabilities", "%s must not include %s in securityContext.capabilities.add"
            % (_named("container", bad), _quote(sorted(caps))))


def check_host_path_volumes(spec):
    vols = [v.get("name") for v in spec.get("volumes") or [] if "hostPath" in v]
    return ("hostPath volumes", _named("volume", vols)) if vols else None


def check_host_ports(spec):
    bad, ports = [], set()
    for c in _containers(spec):
        hp = [str(p["hostPort"]) for p in c.get("ports") or [] if p.get("hostPort")]
        if hp:
            bad.append(c.get("name"))
            ports.update(hp)
    if not bad:
        return None
    return ("hostPort", "%s %s %s %s" % (_named("container", bad), _plural("uses", "use", len(bad)),
                                         _plural("hostPort", "hostPorts", len(ports)),
                                         ", ".join(sorted(ports))))


def check_privileged(spec):
    bad = [c.get("name") for c in _containers(spec) if _sc(c).get("privileged") is True]
    if not bad:
        return None
    return ("privileged", "%s must not set securityContext.privileged=true" % _named("container", bad))


def _seccomp_ok(profile):
    return (profile or {}).get("type") in ("RuntimeDefault", "Localhost")


def _seccomp(spec, restricted):
    """seccompProfile_baseline (explicit bad values) and _restricted (also unset ones)."""
    setters, values, implicit = [], set(), []
    pod = (spec.get("securityContext") or {}).get("seccompProfile")
    if pod is not None and not _seccomp_ok(pod):
        setters.append("pod")
        values.add(pod.get("type", ""))
    pod_set = pod is not None and _seccomp_ok(pod)
    explicit = []
    for c in _containers(spec):
        prof = _sc(c).get("seccompProfile")
        if prof is not None:
            if not _seccomp_ok(prof):
                explicit.append(c.get("name"))
                values.add(prof.get("type", ""))
        elif not pod_set:
            implicit.append(c.get("name"))
    if explicit:
        setters.append(_named("container", explicit))
    if setters:
        return ("seccompProfile", "%s must not set securityContext.seccompProfile.type to %s"
                % (" and ".join(setters), _quote(sorted(values))))
    if restricted and implicit:
        return ("seccompProfile", 'pod or %s must set securityContext.seccompProfile.type to '
                '"RuntimeDefault" or "Localhost"' % _named("container", implicit))
    return None


def check_seccomp_baseline(spec):
    return _seccomp(spec, False)


def check_allow_privilege_escalation(spec):
    bad = [c.get("name") for c in _containers(spec)
           if _sc(c).get("allowPrivilegeEscalation") is not False]
    if not bad:
        return None
    return ("allowPrivilegeEscalation != false",
            "%s must set securityContext.allowPrivilegeEscalation=false" % _named("container", bad))


def check_capabilities_restricted(spec):
    no_drop, adding, caps = [], [], set()
    for c in _containers(spec):
        cap = _sc(c).get("capabilities")
        if cap is None:
            no_drop.append(c.get("name"))
            continue
        if "ALL" not in (cap.get("drop") or []):
            no_drop.append(c.get("name"))
        add = [x for x in cap.get("add") or [] if x != "NET_BIND_SERVICE"]
        if add:
            adding.append(c.get("name"))
            caps.update(add)
    details = []
    if no_drop:
        details.append('%s must set securityContext.capabilities.drop=["ALL"]' % _named("container", no_drop))
    if adding:
        details.append("%s must not include %s in securityContext.capabilities.add"
                       % (_named("container", adding), _quote(sorted(caps))))
    return ("unrestricted capabilities", "; ".join(details)) if details else None


def _volume_type(v):
    for k in v:
        if k != "name":
            return k
    return "unknown"


def check_restricted_volumes(spec):
    names, types = [], set()
    for v in spec.get("volumes") or []:
        t = _volume_type(v)
        if t not in ALLOWED_VOLUMES:
            names.append(v.get("name"))
            types.add(t)
    if not names:
        return None
    return ("restricted volume types", "%s %s %s %s" % (
        _named("volume", names), _plural("uses", "use", len(names)),
        _plural("restricted volume type", "restricted volume types", len(types)), _quote(sorted(types))))


def _explicit_setters(spec, bad):
    """["pod", 'container(s) "a", ...'] for the pod and containers whose securityContext is bad."""
    setters = ["pod"] if bad(spec.get("securityContext") or {}) else []
    names = [c.get("name") for c in _containers(spec) if bad(_sc(c))]
    if names:
        setters.append(_named("container", names))
    return setters


def check_run_as_non_root(spec):
    setters = _explicit_setters(spec, lambda sc: sc.get("runAsNonRoot") is False)
    if setters:
        return ("runAsNonRoot != true", "%s must not set securityContext.runAsNonRoot=false"
                % " and ".join(setters))
    if (spec.get("securityContext") or {}).get("runAsNonRoot") is True:
        return None
    implicit = [c.get("name") for c in _containers(spec) if _sc(c).get("runAsNonRoot") is None]
    if implicit:
        return ("runAsNonRoot != true", "pod or %s must set securityContext.runAsNonRoot=true"
                % _named("container", implicit))
    return None


def check_run_as_user(spec):
    setters = _explicit_setters(spec, lambda sc: sc.get("runAsUser") == 0)
    return ("runAsUser=0", "%s must not set runAsUser=0" % " and ".join(setters)) if setters else None


# (level, check, the baseline check a restricted one replaces), each level in check-ID order
CHECKS = (
    ("baseline", "capabilities_baseline", check_capabilities_baseline),
    ("baseline", "hostNamespaces", check_host_namespaces),
    ("baseline", "hostPathVolumes", check_host_path_volumes),
    ("baseline", "hostPorts", check_host_ports),
    ("baseline", "privileged", check_privileged),
    ("baseline", "seccompProfile_baseline", check_seccomp_baseline),
    ("restricted", "allowPrivilegeEscalation", check_allow_privilege_escalation),
    ("restricted", "capabilities_restricted", check_capabilities_restricted),
    ("restricted", "restrictedVolumes", check_restricted_volumes),
    ("restricted", "runAsNonRoot", check_run_as_non_root),
    ("restricted", "runAsUser", check_run_as_user),
    ("restricted", "seccompProfile_restricted", lambda s: _seccomp(s, True)),
)
OVERRIDDEN = {"capabilities_baseline": "capabilities_restricted",
              "hostPathVolumes": "restrictedVolumes",
              "seccompProfile_baseline": "seccompProfile_restricted"}


def violations(level, spec):
    """The failed checks of level for a pod spec: ["reason (detail)", ...]."""
    if level == "privileged":
        return []
    out = []
    for lvl, cid, fn in CHECKS:
        if lvl == "restricted" and level != "restricted":
            continue
        if level == "restricted" and cid in OVERRIDDEN:
            continue
        r = fn(spec)
        if r:
            out.append("%s (%s)" % r if r[1] else r[0])
    return out


def namespace_level(ns_obj):
    """(level, version) the namespace enforces; an unknown level is enforced as restricted,
    as the plugin does with a label it cannot parse."""
    labels = (ns_obj or {}).get("metadata", {}).get("labels") or {}
    level = labels.get(LABEL)
    if level is None:
        return "privileged", "latest"
    if level not in LEVELS:
        level = "restricted"
    return level, labels.get(VERSION_LABEL) or "latest"


_VERSION = re.compile(r"^v1\.([0-9]|[1-9][0-9]*)$")


def label_errors(labels):
    """The plugin's checks of a namespace's policy labels: [(field, message)]."""
    out = []
    for mode in ("enforce", "audit", "warn"):
        key = "pod-security.kubernetes.io/" + mode
        for k, ok, want in ((key, lambda v: v in LEVELS, "must be one of privileged, baseline, restricted"),
                            (key + "-version", lambda v: v == "latest" or _VERSION.match(v),
                             'must be "latest" or "v1.x"')):
            v = labels.get(k)
            if v is not None and not ok(v):
                out.append(("metadata.labels[%s]" % k, 'Invalid value: "%s": %s' % (v, want)))
    return out


def namespace_check(store, info, old, new=None):
    """Create (old is the new namespace) or update: invalid policy labels are refused, on
    update only when they changed."""
    ns = new if new is not None else old
    errs = label_errors(ns["metadata"].get("labels") or {})
    if errs and (new is None or errs != label_errors(old["metadata"].get("labels") or {})):
        raise errors.invalid("Namespace", ns["metadata"]["name"], errs)


def pod_create(store, info, pod):
    md = pod["metadata"]
    level, version = namespace_level(store.try_get("namespaces", "", md["namespace"]))
    bad = violations(level, pod.get("spec") or {})
    if not bad:
        return
    name = md.get("name") or md.get("generateName", "")
    raise errors.ApiError(403, "Forbidden", 'pods "%s" is forbidden: violates PodSecurity "%s:%s": %s'
                          % (name, level, version, ", ".join(bad)),
                          {"name": name, "kind": "pods"})


def install(store):
    """Runs after defaults.install's pod hook: the pod is checked as admitted (with the
    service-account token volume, a projected one, which every level allows)."""
    store.hooks_create.setdefault("pods", []).append(pod_create)
    store.hooks_create.setdefault("namespaces", []).append(namespace_check)
    store.hooks_update.setdefault("namespaces", []).append(namespace_check)
