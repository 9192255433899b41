"""Decoder for Kubernetes' protobuf wire format (application/vnd.kubernetes.protobuf), which
kubectl's typed clients use for request bodies (create configmap/secret/namespace/job/role,
auth can-i, create token...). Responses are always JSON (clients accept both)."""
import base64
import json
import struct

from .errors import bad_request
from .pbschema import MESSAGES, ROOTS
from .rfc3339 import rfc3339

MAGIC = b"k8s\x00"
_ZERO_TIME = -62135596800
# Pointer fields (Go *int/*bool): a zero/false value on the wire is meaningful and kept.
# Other zero/false scalars are dropped, as JSON omitempty would.
KEEP_ZERO = {
    "automountServiceAccountToken", "suspend", "backoffLimit", "parallelism", "completions",
    "activeDeadlineSeconds", "ttlSecondsAfterFinished", "terminationGracePeriodSeconds",
    "deletionGracePeriodSeconds", "immutable", "readOnlyRootFilesystem", "runAsUser",
    "runAsGroup", "runAsNonRoot", "privileged", "allowPrivilegeEscalation", "defaultMode",
    "mode", "optional", "expirationSeconds", "backoffLimitPerIndex", "maxFailedIndexes",
    "replicas", "leaseDurationSeconds", "leaseTransitions", "blockOwnerDeletion", "controller",
    "manualSelector", "shareProcessNamespace", "setHostnameAsFQDN", "enableServiceLinks",
    "hostUsers", "priority", "allowed", "denied", "fsGroup", "gracePeriodSeconds",
    "orphanDependents", "successThreshold", "failureThreshold", "initialDelaySeconds",
    "periodSeconds", "timeoutSeconds", "port", "containerPort", "targetPort", "exitCode",
    "publishNotReadyAddresses", "allocateLoadBalancerNodePorts", "readOnly",
    "revisionHistoryLimit", "progressDeadlineSeconds"}


def _varint(b, i):
    shift = v = 0
    while True:
        if i >= len(b):
            raise ValueError("truncated varint")
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        if not c & 0x80:
            return v, i
        shift += 7
        if shift > 70:
            raise ValueError("varint too long")


def _fields(b):
    """Yields (field number, wire type, value) of one message."""
    i = 0
    while i < len(b):
        key, i = _varint(b, i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, i = _varint(b, i)
        elif wt == 1:
            v = b[i:i + 8]
            i += 8
        elif wt == 2:
            n, i = _varint(b, i)
            v = b[i:i + n]
            if len(v) != n:
                raise ValueError("truncated field %d" % num)
            i += n
        elif wt == 5:
            v = b[i:i + 4]
            i += 4
        else:
            raise ValueError("unsupported wire type %d" % wt)
        yield num, wt, v


def _signed(v):
    return v - (1 << 64) if v >= (1 << 63) else v


def _time(b, micro):
    secs = nanos = 0
    for num, _wt, v in _fields(b):
        if num == 1:
            secs = _signed(v)
        elif num == 2:
            nanos = _signed(v)
    if secs == _ZERO_TIME or (secs == 0 and nanos == 0 and not b):
        return None
    return rfc3339(secs, 6 if micro else 0, nanos)


def _special(typ, b):
    if typ in ("meta.v1.Time", "meta.v1.MicroTime"):
        return True, _time(b, typ == "meta.v1.MicroTime")
    if typ == "resource.Quantity":
        for num, _wt, v in _fields(b):
            if num == 1:
                return True, v.decode()
        return True, "0"
    if typ == "intstr.IntOrString":
        kind, iv, sv = 0, 0, ""
        for num, _wt, v in _fields(b):
            if num == 1:
                kind = v
            elif num == 2:
                iv = _signed(v)
            elif num == 3:
                sv = v.decode()
        return True, (iv if kind == 0 else sv)
    if typ in ("meta.v1.FieldsV1", "runtime.RawExtension"):
        for num, _wt, v in _fields(b):
            if num == 1:
                try:
                    return True, json.loads(v)
                except ValueError:
                    return True, base64.b64encode(v).decode()
        return True, None
    if typ == "meta.v1.Duration":
        for num, _wt, v in _fields(b):
            if num == 1:
                return True, "%gs" % (_signed(v) / 1e9)
        return True, "0s"
    return False, None


def _scalar(typ, wt, v):
    if typ == "string":
        return v.decode("utf-8", errors="replace")
    if typ == "bytes":
        return base64.b64encode(v).decode()
    if typ in ("int32", "int64"):
        return _signed(v)
    if typ == "bool":
        return bool(v)
    if typ == "double":
        return struct.unpack("<d", v)[0]
    if typ == "float":
        return struct.unpack("<f", v)[0]
    return None


def _value(typ, wt, v):
    if typ in ("string", "bytes", "int32", "int64", "bool", "double", "float"):
        return _scalar(typ, wt, v)
    ok, out = _special(typ, v)
    if ok:
        return out
    return decode_message(typ, v)


def decode_message(typ, b):
    schema = MESSAGES.get(typ)
    if schema is None:
        return None
    out = {}
    for num, wt, v in _fields(b):
        f = schema.get(num)
        if f is None:
            continue
        name, ftyp, lab = f
        if lab == "m":
            k = val = None
            for n2, wt2, v2 in _fields(v):
                if n2 == 1:
                    k = v2.decode()
                elif n2 == 2:
                    val = _value(ftyp, wt2, v2)
            if val is None and ftyp == "string":
                val = ""
            out.setdefault(name, {})[k or ""] = val
        elif lab == "r":
            lst = out.setdefault(name, [])
            if wt == 2 and ftyp in ("int32", "int64", "bool"):
                j = 0
                while j < len(v):
                    x, j = _varint(v, j)
                    lst.append(_scalar(ftyp, 0, x))
            else:
                lst.append(_value(ftyp, wt, v))
        else:
            val = _value(ftyp, wt, v)
            if val == "" or val is None:
                continue
            if (val is False or (val == 0 and ftyp in ("int32", "int64"))) and \
                    name not in KEEP_ZERO:
                continue
            out[name] = val
    return out


def decode(body):
    """Envelope-wrapped protobuf object -> JSON-shaped dict with apiVersion and kind."""
    if not body.startswith(MAGIC):
        raise bad_request("protobuf body without the k8s envelope")
    try:
        api_version = kind = ""
        raw = b""
        for num, _wt, v in _fields(body[4:]):
            if num == 1:
                for n2, _w2, v2 in _fields(v):
                    if n2 == 1:
                        api_version = v2.decode()
                    elif n2 == 2:
                        kind = v2.decode()
            elif num == 2:
                raw = v
        root = ROOTS.get("%s|%s" % (api_version, kind))
        if root is None:
            raise bad_request("no protobuf support for %s %s; send JSON" % (api_version, kind))
        obj = decode_message(root, raw) or {}
    except ValueError as e:
        raise bad_request("malformed protobuf body: %s" % e)
    obj["apiVersion"] = api_version
    obj["kind"] = kind
    return obj
