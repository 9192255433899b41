"""Pod volumes and container environment, materialized the way the kubelet does.

Volume contents live on the host under DIR/pods/<uid>/volumes/<name>; each
container bind-mounts them at its mountPaths (sim/podinit.py). configMap,
secret, downwardAPI and projected volumes use the kubelet's atomic-writer
layout (files are symlinks into ..data, which points at a timestamped dir),
so updates of the source objects swap the whole content at once.
"""
import base64
import math
import os
import re
import shutil
import time
from fractions import Fraction


class VolumeError(Exception):
    """A volume cannot be set up yet (FailedMount); message worded like the kubelet's."""


class ConfigError(Exception):
    """A container's configuration references something missing (CreateContainerConfigError)."""


# ---- quantities --------------------------------------------------------------------
_SUFFIX = {"": 1, "m": Fraction(1, 1000), "u": Fraction(1, 10 ** 6), "n": Fraction(1, 10 ** 9),
           "k": 10 ** 3, "M": 10 ** 6, "G": 10 ** 9, "T": 10 ** 12, "P": 10 ** 15, "E": 10 ** 18,
           "Ki": 2 ** 10, "Mi": 2 ** 20, "Gi": 2 ** 30, "Ti": 2 ** 40, "Pi": 2 ** 50, "Ei": 2 ** 60}
_QRE = re.compile(r"^([+-]?[0-9.]+)([eE][+-]?[0-9]+)?([a-zA-Z]*)$")


def quantity(q):
    """Parse a Kubernetes quantity ("100m", "2", "1.5Gi", "1e3") into a Fraction."""
    if isinstance(q, (int, float)):
        return Fraction(q)
    m = _QRE.match(str(q).strip())
    if not m or m.group(3) not in _SUFFIX:
        raise ValueError("quantities must match the regular expression "
                         "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")
    v = Fraction(m.group(1))
    if m.group(2):
        v *= Fraction(10) ** int(m.group(2)[1:])
    return v * _SUFFIX[m.group(3)]


# ---- field paths -------------------------------------------------------------------
def field_value(pod, path):
    md = pod.get("metadata", {})
    spec = pod.get("spec", {})
    st = pod.get("status", {})
    m = re.match(r"^metadata\.(labels|annotations)\['(.*)'\]$", path)
    if m:
        return (md.get(m.group(1)) or {}).get(m.group(2), "")
    simple = {
        "metadata.name": md.get("name", ""), "metadata.namespace": md.get("namespace", ""),
        "metadata.uid": md.get("uid", ""), "spec.nodeName": spec.get("nodeName", ""),
        "spec.serviceAccountName": spec.get("serviceAccountName", ""),
        "status.hostIP": st.get("hostIP", ""), "status.podIP": st.get("podIP", ""),
        "status.hostIPs": ",".join(x.get("ip", "") for x in st.get("hostIPs") or []),
        "status.podIPs": ",".join(x.get("ip", "") for x in st.get("podIPs") or []),
    }
    if path in simple:
        return simple[path]
    if path in ("metadata.labels", "metadata.annotations"):
        d = md.get(path.split(".")[1]) or {}
        return "\n".join('%s="%s"' % (k, d[k]) for k in sorted(d))
    raise ConfigError('unsupported fieldPath "%s"' % path)


def resource_value(pod, ref, default_container, node_alloc):
    cname = ref.get("containerName") or default_container
    c = next((c for c in pod["spec"].get("containers", []) + pod["spec"].get(
        "initContainers", []) if c["name"] == cname), None)
    if c is None:
        raise ConfigError('container "%s" not found for resourceFieldRef' % cname)
    res = ref["resource"]
    kind, _, name = res.partition(".")
    val = ((c.get("resources") or {}).get(kind) or {}).get(name)
    if val is None and kind == "requests":
        val = ((c.get("resources") or {}).get("limits") or {}).get(name)
    if val is None:
        val = node_alloc.get(name, 0) if kind == "limits" else 0
    div = quantity(ref.get("divisor") or ("1" if name != "cpu" else "1"))
    if div == 0:
        div = 1
    return str(int(math.ceil(quantity(val) / div)))


# ---- environment -------------------------------------------------------------------
_VAR = re.compile(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)")


def expand(s, env):
    """Kubernetes $(VAR) expansion ($$ escapes; unknown references stay as they are)."""
    def rep(m):
        if m.group(0) == "$$":
            return "$"
        return env.get(m.group(1), m.group(0))
    return _VAR.sub(rep, s)


def _cm_or_secret(store, kind, ns, name, optional):
    res = "configmaps" if kind == "configmap" else "secrets"
    obj = store.try_get(res, ns, name)
    if obj is None and not optional:
        raise ConfigError('%s "%s" not found' % (kind, name))
    return obj


def _data(obj, kind):
    if obj is None:
        return {}
    if kind == "configmap":
        d = {k: v.encode() for k, v in (obj.get("data") or {}).items()}
        for k, v in (obj.get("binaryData") or {}).items():
            d[k] = base64.b64decode(v)
        return d
    d = {k: v.encode() for k, v in (obj.get("stringData") or {}).items()}
    d.update({k: base64.b64decode(v) for k, v in (obj.get("data") or {}).items()})
    return d


def container_env(store, pod, c, base, node_alloc):
    """The environment of container c: base (service links, HOSTNAME, PATH...) then envFrom
    then env, with $(VAR) expansion; raises ConfigError like CreateContainerConfigError."""
    ns = pod["metadata"]["namespace"]
    env = dict(base)
    for ef in c.get("envFrom") or []:
        prefix = ef.get("prefix", "")
        for kind, key in (("configmap", "configMapRef"), ("secret", "secretRef")):
            ref = ef.get(key)
            if ref:
                obj = _cm_or_secret(store, kind, ns, ref.get("name", ""), ref.get("optional"))
                for k, v in _data(obj, kind).items():
                    env[prefix + k] = v.decode(errors="replace")
    for e in c.get("env") or []:
        name = e.get("name")
        if "value" in e or not e.get("valueFrom"):
            env[name] = expand(e.get("value", ""), env)
            continue
        vf = e["valueFrom"]
        if "fieldRef" in vf:
            env[name] = field_value(pod, vf["fieldRef"]["fieldPath"])
        elif "resourceFieldRef" in vf:
            env[name] = resource_value(pod, vf["resourceFieldRef"], c["name"], node_alloc)
        else:
            for kind, key in (("configmap", "configMapKeyRef"), ("secret", "secretKeyRef")):
                ref = vf.get(key)
                if not ref:
                    continue
                obj = _cm_or_secret(store, kind, ns, ref.get("name", ""), ref.get("optional"))
                data = _data(obj, kind)
                if ref.get("key") in data:
                    env[name] = data[ref["key"]].decode(errors="replace")
                elif not ref.get("optional"):
                    raise ConfigError("couldn't find key %s in %s %s/%s" % (
                        ref.get("key"), "ConfigMap" if kind == "configmap" else "Secret",
                        ns, ref.get("name")))
    return env


# ---- volumes -----------------------------------------------------------------------
def _items(data, items, default_mode, what):
    """[(path, bytes, mode)] for a configMap/secret source."""
    out = []
    if items:
        for it in items:
            if it["key"] not in data:
                raise KeyError(it["key"])
            out.append((it["path"], data[it["key"]], it.get("mode", default_mode)))
    else:
        for k in sorted(data):
            out.append((k, data[k], default_mode))
    return out


def _source_files(store, config, pod, src, default_mode):
    """Files of one configMap/secret/downwardAPI/serviceAccountToken source."""
    ns = pod["metadata"]["namespace"]
    if "configMap" in src or "secret" in src:
        kind = "configmap" if "configMap" in src else "secret"
        s = src.get("configMap") or src.get("secret")
        name = s.get("name") if kind == "configmap" else s.get("secretName", s.get("name"))
        obj = store.try_get("configmaps" if kind == "configmap" else "secrets", ns, name)
        if obj is None and kind == "configmap" and name == "kube-root-ca.crt":
            obj = {"data": {"ca.crt": config.ca_pem}}
        if obj is None:
            if s.get("optional"):
                return []
            raise VolumeError('%s "%s" not found' % (kind, name))
        try:
            return _items(_data(obj, kind), s.get("items"), s.get("defaultMode", default_mode),
                          kind)
        except KeyError as e:
            if s.get("optional"):
                return []
            raise VolumeError('configmap references non-existent config key: %s' % e.args[0]
                              if kind == "configmap" else
                              'references non-existent secret key: %s' % e.args[0])
    if "downwardAPI" in src:
        out = []
        for it in src["downwardAPI"].get("items") or []:
            if it.get("fieldRef"):
                v = field_value(pod, it["fieldRef"]["fieldPath"])
            else:
                v = resource_value(pod, it["resourceFieldRef"],
                                   pod["spec"]["containers"][0]["name"], {})
            out.append((it["path"], v.encode(), it.get("mode", default_mode)))
        return out
    if "serviceAccountToken" in src:
        sat = src["serviceAccountToken"]
        sa = pod["spec"].get("serviceAccountName") or "default"
        try:
            tok = config.token_for(ns, sa) if config.token_for else ""
        except Exception as e:   # the ServiceAccount is gone (ApiError 404)
            raise VolumeError("failed to fetch token: %s" % getattr(e, "message", e))
        return [(sat.get("path", "token"), tok.encode(), default_mode)]
    raise VolumeError("unsupported volume source %s" % ",".join(sorted(src)))


def volume_files(store, config, pod, vol):
    """[(relpath, bytes, mode)] for an atomic-writer volume, or None for other kinds."""
    if "configMap" in vol or "secret" in vol:
        s = vol.get("configMap") or vol.get("secret")
        return _source_files(store, config, pod, vol, s.get("defaultMode", 0o644))
    if "downwardAPI" in vol:
        return _source_files(store, config, pod, {"downwardAPI": vol["downwardAPI"]},
                             vol["downwardAPI"].get("defaultMode", 0o644))
    if "projected" in vol:
        p = vol["projected"]
        mode = p.get("defaultMode", 0o644)
        out = []
        for src in p.get("sources") or []:
            out += _source_files(store, config, pod, src, mode)
        return out
    return None


def write_atomic(voldir, files, uid=None):
    """The kubelet's atomic writer: voldir/..data -> ..TIMESTAMP/ ; voldir/top -> ..data/top.
    Returns True if the content changed."""
    os.makedirs(voldir, exist_ok=True)
    cur = os.path.join(voldir, "..data")
    want = {p: (b, m) for p, b, m in files}
    if os.path.islink(cur):
        old = os.path.join(voldir, os.readlink(cur))
        same = True
        seen = set()
        for root, _dirs, fs in os.walk(old):
            for f in fs:
                rel = os.path.relpath(os.path.join(root, f), old)
                seen.add(rel)
                if rel not in want:
                    same = False
                    break
                try:
                    st = os.stat(os.path.join(root, f))
                    with open(os.path.join(root, f), "rb") as fh:
                        if fh.read() != want[rel][0] or (st.st_mode & 0o7777) != want[rel][1]:
                            same = False
                except OSError:
                    same = False
        if same and seen == set(want):
            return False
    else:
        old = None
    ts = "..%s.%06d" % (time.strftime("%Y_%m_%d_%H_%M_%S", time.gmtime()),
                        int(time.time() * 1e6) % 1000000)
    new = os.path.join(voldir, ts)
    os.mkdir(new, 0o755)
    for rel, (b, mode) in want.items():
        p = os.path.join(new, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "wb") as f:
            f.write(b)
        os.chmod(p, mode)
    tmp = os.path.join(voldir, "..data_tmp")
    if os.path.lexists(tmp):
        os.unlink(tmp)
    os.symlink(ts, tmp)
    os.replace(tmp, cur)
    tops = {rel.split("/", 1)[0] for rel in want}
    for t in tops:
        link = os.path.join(voldir, t)
        if not os.path.lexists(link):
            os.symlink(os.path.join("..data", t), link)
    for e in os.listdir(voldir):
        if e.startswith(".."):
            continue
        if e not in tops:
            os.unlink(os.path.join(voldir, e))
    if old and os.path.isdir(old):
        shutil.rmtree(old, ignore_errors=True)
    return True
