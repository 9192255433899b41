#!/usr/bin/env python3
"""Writes manifests/base/crd.yaml, the MPIJob CRD with a full structural schema for both
served versions (v1alpha2, v2beta1): the MPIJob fields from the compact description below,
the pod templates from the Kubernetes core/v1 field table kubesim already carries
(tests/kubesim/sim/pbschema.py: every PodTemplateSpec field, its type, list or map).
Also writes manifests/v1alpha2/crd.yaml, the CRD of deploy/v1alpha2 as upstream's v1alpha2
install had it: v1alpha2 alone, served and stored, with v1alpha2's fields only.
Usage: manifests/gen-crd.py [--check]  (--check: exit 1 when a file is stale)."""
import json
import os
import sys

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "kubesim"))
from sim.pbschema import MESSAGES  # noqa: E402

OUT = os.path.join(ROOT, "manifests", "base", "crd.yaml")
OUT_V1ALPHA2 = os.path.join(ROOT, "manifests", "v1alpha2", "crd.yaml")
# Spec fields v1alpha2 never had (upstream's v1alpha2 MPIJobSpec): left out of the schema
# of a CRD that serves v1alpha2 alone, so that strict validation refuses them there.
V2BETA1_ONLY = ("launcherCreationPolicy", "mpiImplementation", "runLauncherAsWorker",
                "sshAuthMountPath")
# Go structs embedded inline in JSON (the protobuf table names them as fields).
INLINE = {"localObjectReference", "ephemeralContainerCommon", "volumeSource", "handler"}  # handler: Probe embeds ProbeHandler
# Fields the API types mark required (the apiserver refuses their absence).
REQUIRED = {
    "core.v1.Container": ["name"], "core.v1.EphemeralContainerCommon": ["name"],
    "core.v1.PodSpec": ["containers"], "core.v1.EnvVar": ["name"],
    "core.v1.VolumeMount": ["mountPath", "name"], "core.v1.Volume": ["name"],
    "core.v1.ContainerPort": ["containerPort"], "core.v1.KeyToPath": ["key", "path"],
    "core.v1.NodeSelectorRequirement": ["key", "operator"],
    "core.v1.NodeSelector": ["nodeSelectorTerms"],
    "core.v1.TopologySpreadConstraint": ["maxSkew", "topologyKey", "whenUnsatisfiable"],
    "core.v1.PodAffinityTerm": ["topologyKey"],
    "core.v1.WeightedPodAffinityTerm": ["podAffinityTerm", "weight"],
    "core.v1.PreferredSchedulingTerm": ["preference", "weight"],
    "core.v1.PodSchedulingGate": ["name"], "core.v1.HostAlias": ["ip"],
    "core.v1.PodReadinessGate": ["conditionType"], "core.v1.ContainerResizePolicy":
    ["resourceName", "restartPolicy"], "core.v1.ConfigMapKeySelector": ["key"],
    "core.v1.SecretKeySelector": ["key"], "core.v1.ObjectFieldSelector": ["fieldPath"],
    "core.v1.ResourceFieldSelector": ["resource"], "core.v1.HTTPHeader": ["name", "value"],
    "core.v1.HTTPGetAction": ["port"], "core.v1.TCPSocketAction": ["port"],
    "core.v1.GRPCAction": ["port"], "core.v1.SeccompProfile": ["type"],
    "core.v1.AppArmorProfile": ["type"], "core.v1.PodResourceClaim": ["name"],
    "core.v1.ResourceClaim": ["name"], "core.v1.Sysctl": ["name", "value"],
    "meta.v1.LabelSelectorRequirement": ["key", "operator"],
}
QUANTITY = {"anyOf": [{"type": "integer"}, {"type": "string"}],
            "pattern": r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|"
                       r"([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$",
            "x-kubernetes-int-or-string": True}
SCALARS = {
    "string": {"type": "string"}, "bool": {"type": "boolean"},
    "int32": {"type": "integer", "format": "int32"},
    "int64": {"type": "integer", "format": "int64"},
    "double": {"type": "number"}, "float": {"type": "number"},
    "bytes": {"type": "string", "format": "byte"},
    "meta.v1.Time": {"type": "string", "format": "date-time"},
    "intstr.IntOrString": {"anyOf": [{"type": "integer"}, {"type": "string"}],
                           "x-kubernetes-int-or-string": True},
    "resource.Quantity": QUANTITY,
}
# A pod template's metadata: what the apiserver keeps of an embedded ObjectMeta.
TEMPLATE_META = {"type": "object", "properties": {
    "annotations": {"type": "object", "additionalProperties": {"type": "string"}},
    "finalizers": {"type": "array", "items": {"type": "string"}},
    "labels": {"type": "object", "additionalProperties": {"type": "string"}},
    "name": {"type": "string"}, "namespace": {"type": "string"}}}


def type_schema(ty):
    """Schema of one protobuf type name (scalar, special or message)."""
    if ty in SCALARS:
        return dict(SCALARS[ty])
    if ty == "meta.v1.ObjectMeta":
        return TEMPLATE_META
    return message_schema(ty)


def add_fields(ty, props):
    for _num, (name, fty, label) in sorted(MESSAGES[ty].items()):
        if name in INLINE:
            add_fields(fty, props)
            continue
        sub = type_schema(fty)
        if label == "r":
            sub = {"type": "array", "items": sub}
        elif label == "m":
            sub = {"type": "object", "additionalProperties": sub}
        props[name] = sub


def message_schema(ty):
    props = {}
    add_fields(ty, props)
    s = {"type": "object", "properties": dict(sorted(props.items()))}
    if ty in REQUIRED:
        s["required"] = REQUIRED[ty]
    return s


def d(text, schema):
    """Schema with a description (what kubectl explain prints)."""
    return dict({"description": text}, **schema)


def replica_spec(role, replicas):
    return d("The %s pods." % role, {"type": "object", "properties": {
        "replicas": d("Number of %s pods." % role.lower(), replicas),
        "restartPolicy": d("Restart policy of the %s pods: Never, OnFailure (, Always for "
                           "workers)." % role.lower(), {"type": "string"}),
        "template": d("Pod template of the %s (core/v1 PodTemplateSpec)." % role.lower(),
                      type_schema("core.v1.PodTemplateSpec"))}})


def spec_schema(version, alone=False):
    """MPIJob spec: the union of both versions' fields (conversion None keeps them), or
    with alone (a CRD serving v1alpha2 only) v1alpha2's own fields."""
    i32 = {"type": "integer", "format": "int32"}
    clean = {"type": "string", "enum": ["None", "Running", "All"]}
    top_clean = dict(clean, default="None") if version == "v1alpha2" else clean
    sched = {"type": "object", "properties": {
        "minAvailable": d("Pods that must be schedulable together (gang size).", i32),
        "minResources": d("Resources the gang needs at least.", {
            "type": "object", "additionalProperties": QUANTITY}),
        "priorityClass": d("PriorityClass of the PodGroup.", {"type": "string"}),
        "queue": d("Scheduler queue of the PodGroup (Volcano).", {"type": "string"}),
        "scheduleTimeoutSeconds": d("How long the gang may wait to be scheduled.", i32)}}
    run_policy = {"type": "object", "properties": {
        "activeDeadlineSeconds": d("Seconds the job may be active before it is failed.",
                                   {"type": "integer", "format": "int64", "minimum": 1}),
        "backoffLimit": d("Launcher retries before the job fails.",
                          dict(i32, minimum=0)),
        "cleanPodPolicy": d("Pods deleted when the job ends: None, Running or All.", clean),
        "managedBy": d("Controller of this job: kubeflow.org/mpi-operator or "
                       "kueue.x-k8s.io/multikueue.", {"type": "string"}),
        "schedulingPolicy": d("Gang scheduling settings (with --gang-scheduling).", sched),
        "suspend": d("Suspended: no pods run; false resumes.",
                     {"type": "boolean", "default": False}),
        "ttlSecondsAfterFinished": d("Seconds after the end before the job is deleted.",
                                     dict(i32, minimum=0))}}
    props = {
        "activeDeadlineSeconds": d("v1alpha2: see runPolicy.activeDeadlineSeconds.",
                                   {"type": "integer", "format": "int64", "minimum": 1}),
        "backoffLimit": d("v1alpha2: see runPolicy.backoffLimit.", dict(i32, minimum=0)),
        "cleanPodPolicy": d("v1alpha2: see runPolicy.cleanPodPolicy.", top_clean),
        "launcherCreationPolicy": d("When the launcher is created: AtStartup or "
                                    "WaitForWorkersReady.", {
                                        "type": "string", "default": "AtStartup",
                                        "enum": ["AtStartup", "WaitForWorkersReady"]}),
        "mainContainer": d("v1alpha2: the workers' MPI container (default the first).",
                           {"type": "string"}),
        "mpiDistribution": d("v1alpha2: OpenMPI, IntelMPI or MPICH.", {
            "type": "string", "enum": ["OpenMPI", "IntelMPI", "MPICH"]}),
        "mpiImplementation": d("MPI implementation: OpenMPI (when unset), Intel or MPICH.", {
            "type": "string", "enum": ["OpenMPI", "Intel", "MPICH"]}),
        "mpiReplicaSpecs": d("The Launcher (exactly one) and the Workers.", {
            "type": "object", "properties": {
                "Launcher": replica_spec("Launcher", dict(i32, minimum=1, maximum=1)),
                "Worker": replica_spec("Worker", dict(i32, minimum=1))}}),
        "runLauncherAsWorker": d("The launcher also runs ranks (it is in the hostfile).",
                                 {"type": "boolean", "default": False}),
        "runPolicy": d("Policies of the job's run.", run_policy),
        "slotsPerWorker": d("MPI slots (ranks) per worker.",
                            dict(i32, minimum=1, default=1)),
        "sshAuthMountPath": d("Where the SSH Secret is mounted in the pods.",
                              {"type": "string", "default": "/root/.ssh"}),
    }
    if alone:
        for k in V2BETA1_ONLY:
            del props[k]
    return d("The MPIJob's specification.", {"type": "object", "properties": props,
                                              "required": ["mpiReplicaSpecs"]})


def version(name, storage, alone=False):
    schema = {"description": "MPIJob runs an MPI program: one launcher, N workers.",
              "type": "object", "properties": {
                  "apiVersion": {"type": "string"}, "kind": {"type": "string"},
                  "metadata": {"type": "object"},
                  "spec": spec_schema(name, alone),
                  "status": d("Written by the operator: conditions, replicaStatuses, "
                              "launchPhases, times.", {
                                  "type": "object",
                                  "x-kubernetes-preserve-unknown-fields": True})}}
    cols = [{"name": "State", "type": "string", "jsonPath": ".status.conditions[-1:].type"},
            {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}]
    return {"name": name, "served": True, "storage": storage, "subresources": {"status": {}},
            "additionalPrinterColumns": cols, "schema": {"openAPIV3Schema": schema}}


HEADER = """\
# GENERATED by manifests/gen-crd.py: edit that script, not this file.
# MPIJob: both API versions are served with no conversion webhook (strategy None).
# v2beta1 is the storage version; the controller (API discovery prefers v2beta1) reads
# every MPIJob through the v2beta1 endpoint and normalises both shapes
# (controller/mpijob_normalize.c; deploy/v1alpha2 serves v1alpha2 alone): a
# spec with v1alpha2's top-level cleanPodPolicy/backoffLimit/activeDeadlineSeconds/
# mpiDistribution/mainContainer is read as v1alpha2. The v1alpha2 schema defaults
# cleanPodPolicy to None (as upstream), which also marks objects created as v1alpha2.
# Both versions carry the full structural schema of the union of both versions' fields
# (pod templates included), so the API server prunes and, with kubectl's default
# --validate=strict, refuses unknown fields (`strict decoding error: unknown field
# "spec.slotPerWorker"`), while writing through one version never prunes the other
# version's fields. mpiImplementation has no schema default: the API server applies the
# storage version's defaults when it reads objects, and a default there would override
# a v1alpha2 object's mpiDistribution.
"""

HEADER_V1ALPHA2 = """\
# GENERATED by manifests/gen-crd.py: edit that script, not this file.
# MPIJob for deploy/v1alpha2, as upstream's v1alpha2 install: kubeflow.org/v1alpha2 is
# the one version, served and stored, so `kubectl get -o yaml mpijobs` shows
# apiVersion: kubeflow.org/v1alpha2. The operator finds by API discovery at start which
# version the cluster serves (v2beta1 preferred) and lists, watches and writes status
# through it. The schema has v1alpha2's fields only, pod templates included.
"""


class _Dumper(yaml.SafeDumper):
    """No anchors/aliases: the schema shares Python objects, the YAML must not."""

    def ignore_aliases(self, data):
        return True


def render(alone=False):
    versions = [version("v1alpha2", True, alone=True)] if alone else \
        [version("v2beta1", True), version("v1alpha2", False)]
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "mpijobs.kubeflow.org"},
           "spec": {"group": "kubeflow.org", "scope": "Namespaced",
                    "names": {"plural": "mpijobs", "singular": "mpijob", "kind": "MPIJob",
                              "listKind": "MPIJobList", "shortNames": ["mj", "mpij"]},
                    "conversion": {"strategy": "None"},
                    "versions": versions}}
    return (HEADER_V1ALPHA2 if alone else HEADER) + yaml.dump(crd, Dumper=_Dumper, sort_keys=False, width=100,
                              default_flow_style=None)


# kubectl apply (client-side) stores the object as JSON in an annotation, and the API
# server refuses annotations over 256 KiB in all: the CRD must stay below that.
APPLY_LIMIT = 262144 - 4096


def main():
    rc = 0
    for out, alone in ((OUT, False), (OUT_V1ALPHA2, True)):
        text = render(alone)
        size = len(json.dumps(yaml.safe_load(text), separators=(",", ":")))
        if size > APPLY_LIMIT:
            print("%s is %d bytes as JSON: too large for kubectl apply's last-applied "
                  "annotation (%d)" % (out, size, APPLY_LIMIT), file=sys.stderr)
            return 1
        if sys.argv[1:] == ["--check"]:
            try:
                with open(out) as f:
                    stale = f.read() != text
            except FileNotFoundError:
                stale = True
            if stale:
                print("%s is stale: run manifests/gen-crd.py" % os.path.relpath(out, ROOT),
                      file=sys.stderr)
                rc = 1
            continue
        os.makedirs(os.path.dirname(out), exist_ok=True)
        with open(out, "w") as f:
            f.write(text)
    return rc


if __name__ == "__main__":
    sys.exit(main())
