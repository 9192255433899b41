#!/usr/bin/python3
"""Regenerates sim/pbschema.py (field numbers of the Kubernetes protobuf wire format for the
kinds kubectl's typed clients send) from the generated.proto files of k8s.io/api and
k8s.io/apimachinery. Usage: copy apps, autoscaling, core, batch, rbac, authorization,
authentication, coordination (v1) and meta/v1, runtime, intstr, resource generated.proto
into the current directory as <name>.proto, then: gen_pbschema.py > sim/pbschema.py"""
import json  # noqa: F401
import re
import sys
PK = {"k8s.io.api.core.v1": "core.v1", "k8s.io.api.batch.v1": "batch.v1", "k8s.io.api.rbac.v1": "rbac.v1",
      "k8s.io.api.authorization.v1": "authorization.v1", "k8s.io.api.authentication.v1": "authentication.v1",
      "k8s.io.api.coordination.v1": "coordination.v1", "k8s.io.api.apps.v1": "apps.v1", "k8s.io.api.autoscaling.v1": "autoscaling.v1", "k8s.io.apimachinery.pkg.apis.meta.v1": "meta.v1",
      "k8s.io.apimachinery.pkg.runtime": "runtime", "k8s.io.apimachinery.pkg.util.intstr": "intstr",
      "k8s.io.apimachinery.pkg.api.resource": "resource"}
msgs = {}
for f in ["apps","autoscaling","core","batch","rbac","authorization","authentication","coordination","meta","runtime","intstr","resource"]:
    t = open(f + ".proto").read()
    t = re.sub(r"//[^\n]*", "", t)
    pkg = PK[re.search(r"^package ([\w.]+);", t, re.M).group(1)]
    for m in re.finditer(r"message (\w+) \{(.*?)\n\}", t, re.S):
        fields = {}
        for fm in re.finditer(r"(optional|repeated)\s+([\w.]+)\s+(\w+)\s*=\s*(\d+)|map<\s*(\w+)\s*,\s*([\w.]+)\s*>\s+(\w+)\s*=\s*(\d+)", m.group(2)):
            if fm.group(1):
                lab, typ, name, num = fm.group(1), fm.group(2), fm.group(3), int(fm.group(4))
                mp = None
            else:
                lab, typ, name, num = "map", fm.group(6), fm.group(7), int(fm.group(8))
            if typ in ("string","int32","int64","bool","bytes","double","float"):
                ty = typ
            else:
                typ = typ.lstrip(".")
                if "." in typ:
                    p, _, n = typ.rpartition(".")
                    ty = PK.get(p, p) + "." + n
                else:
                    ty = pkg + "." + typ
            fields[num] = [name, ty, lab[0]]   # o / r / m
        msgs[pkg + "." + m.group(1)] = fields
roots = {("v1","ConfigMap"):"core.v1.ConfigMap", ("v1","Secret"):"core.v1.Secret", ("v1","Namespace"):"core.v1.Namespace",
 ("v1","ServiceAccount"):"core.v1.ServiceAccount", ("v1","Service"):"core.v1.Service", ("v1","Pod"):"core.v1.Pod",
 ("v1","Endpoints"):"core.v1.Endpoints", ("v1","Event"):"core.v1.Event", ("v1","Binding"):"core.v1.Binding",
 ("batch/v1","Job"):"batch.v1.Job",
 ("rbac.authorization.k8s.io/v1","Role"):"rbac.v1.Role", ("rbac.authorization.k8s.io/v1","RoleBinding"):"rbac.v1.RoleBinding",
 ("rbac.authorization.k8s.io/v1","ClusterRole"):"rbac.v1.ClusterRole", ("rbac.authorization.k8s.io/v1","ClusterRoleBinding"):"rbac.v1.ClusterRoleBinding",
 ("authorization.k8s.io/v1","SelfSubjectAccessReview"):"authorization.v1.SelfSubjectAccessReview",
 ("authorization.k8s.io/v1","SelfSubjectRulesReview"):"authorization.v1.SelfSubjectRulesReview",
 ("authorization.k8s.io/v1","SubjectAccessReview"):"authorization.v1.SubjectAccessReview",
 ("authentication.k8s.io/v1","TokenRequest"):"authentication.v1.TokenRequest",
 ("authentication.k8s.io/v1","SelfSubjectReview"):"authentication.v1.SelfSubjectReview",
 ("authentication.k8s.io/v1","TokenReview"):"authentication.v1.TokenReview",
 ("coordination.k8s.io/v1","Lease"):"coordination.v1.Lease",
 ("meta.k8s.io/v1","DeleteOptions"):"meta.v1.DeleteOptions", ("v1","DeleteOptions"):"meta.v1.DeleteOptions",
 ("apps/v1","Deployment"):"apps.v1.Deployment", ("apps/v1","ReplicaSet"):"apps.v1.ReplicaSet",
 ("autoscaling/v1","Scale"):"autoscaling.v1.Scale"}
SPECIAL = {"meta.v1.Time","meta.v1.MicroTime","resource.Quantity","intstr.IntOrString","meta.v1.FieldsV1","runtime.RawExtension","meta.v1.Duration"}
need, todo = set(), list(roots.values())
while todo:
    m = todo.pop()
    if m in need: continue
    need.add(m)
    if m in SPECIAL: continue
    if m not in msgs: print("missing", m, file=sys.stderr); continue
    for num, (n, ty, lab) in msgs[m].items():
        if ty in msgs or ty in SPECIAL or "." in ty: todo.append(ty)
out = {m: msgs[m] for m in sorted(need) if m in msgs and m not in SPECIAL}
print("# Kubernetes protobuf wire schema (field number -> [json name, type, o|r|m]) for the")
print("# kinds kubectl sends as application/vnd.kubernetes.protobuf. Generated from the field")
print("# numbers of the k8s.io/api and k8s.io/apimachinery wire format.")
print("ROOTS = %r" % {"%s|%s" % k: v for k, v in roots.items()})
print("MESSAGES = {")
for m, fs in out.items():
    print("    %r: {%s}," % (m, ", ".join("%d: %r" % (k, tuple(v)) for k, v in sorted(fs.items()))))
print("}")
