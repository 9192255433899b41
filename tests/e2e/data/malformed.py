#!/usr/bin/env python3
"""Writes the e2e malformed MPIJobs (ones tests/integration/controller_api.sh does not
already cover) into DIR: NAME.json per job and cases.tsv lines "NAME<TAB>KIND<TAB>WANT"
where KIND is `api` (the API server's CRD schema must refuse it, naming the field) or
`ctl` (accepted; the controller must mark it Failed with a message naming WANT)."""
import copy
import json
import os
import sys

out = sys.argv[1]
W = {"replicas": 1, "template": {"spec": {"containers": [{"name": "w", "image": "mpik8s/openmpi"}]}}}
L = {"replicas": 1, "template": {"spec": {"containers": [
    {"name": "l", "image": "mpik8s/openmpi", "command": ["mpirun", "true"]}]}}}
cases = []


def job(name, kind, want, spec=None, mutate=None, api="v2beta1", meta=None):
    s = {"mpiReplicaSpecs": {"Launcher": copy.deepcopy(L), "Worker": copy.deepcopy(W)}}
    if spec is not None:
        s = spec
    if mutate:
        mutate(s)
    obj = {"apiVersion": "kubeflow.org/" + api, "kind": "MPIJob",
           "metadata": dict({"name": name}, **(meta or {}))}
    if s != "omit":
        obj["spec"] = s
    cases.append((name, kind, want, obj))


def wk(s):
    return s["mpiReplicaSpecs"]["Worker"]


def wc(s):
    return wk(s)["template"]["spec"]["containers"][0]


# --- refused by the CRD schema (structural minimums/enums/types) ---
job("m-neg-replicas", "api", "spec.mpiReplicaSpecs.Worker.replicas", mutate=lambda s: wk(s).update(replicas=-1))
job("m-two-launchers", "api", "spec.mpiReplicaSpecs.Launcher.replicas",
    mutate=lambda s: s["mpiReplicaSpecs"]["Launcher"].update(replicas=2))
job("m-zero-launchers", "api", "spec.mpiReplicaSpecs.Launcher.replicas",
    mutate=lambda s: s["mpiReplicaSpecs"]["Launcher"].update(replicas=0))
job("m-flavour", "api", "spec.mpiImplementation", mutate=lambda s: s.update(mpiImplementation="OpenMPI5"))
job("m-flavour-v1", "api", "spec.mpiDistribution", api="v1alpha2",
    mutate=lambda s: s.update(mpiDistribution="LAM"))
job("m-slots-string", "api", "spec.slotsPerWorker", mutate=lambda s: s.update(slotsPerWorker="4"))
job("m-replicas-string", "api", "spec.mpiReplicaSpecs.Worker.replicas", mutate=lambda s: wk(s).update(replicas="2"))
job("m-deadline-zero", "api", "spec.runPolicy.activeDeadlineSeconds",
    mutate=lambda s: s.update(runPolicy={"activeDeadlineSeconds": 0}))
job("m-clean-policy", "api", "spec.runPolicy.cleanPodPolicy",
    mutate=lambda s: s.update(runPolicy={"cleanPodPolicy": "Sometimes"}))
job("m-ttl-negative", "api", "spec.runPolicy.ttlSecondsAfterFinished",
    mutate=lambda s: s.update(runPolicy={"ttlSecondsAfterFinished": -5}))
job("m-suspend-string", "api", "spec.runPolicy.suspend", mutate=lambda s: s.update(runPolicy={"suspend": "yes"}))
job("m-launch-policy", "api", "spec.launcherCreationPolicy",
    mutate=lambda s: s.update(launcherCreationPolicy="Later"))
job("m-specs-list", "api", "spec.mpiReplicaSpecs", mutate=lambda s: s.update(mpiReplicaSpecs=[W, L]))
# --- accepted by the schema, judged by the controller ---
job("m-huge-slots", "ctl", "spec.slotsPerWorker", mutate=lambda s: s.update(slotsPerWorker=100000000))
job("dot.ted", "ctl", "metadata.name")
job("9lives", "ctl", "metadata.name")
job("m-empty-image", "ctl", "spec.mpiReplicaSpecs.Worker.template.spec.containers[0].image",
    mutate=lambda s: wc(s).update(image=""))
job("m-spec-list", "api", "spec.mpiReplicaSpecs.Worker.template.spec",
    mutate=lambda s: wk(s)["template"].update(spec=[]))
job("m-containers-object", "api", "spec.mpiReplicaSpecs.Worker.template.spec.containers",
    mutate=lambda s: wk(s)["template"]["spec"].update(containers={"name": "w", "image": "x"}))
job("m-launcher-nocontainers", "api", "spec.mpiReplicaSpecs.Launcher.template.spec.containers",
    mutate=lambda s: s["mpiReplicaSpecs"]["Launcher"]["template"].update(spec={}))
job("m-cname-number", "api", "spec.mpiReplicaSpecs.Worker.template.spec.containers[0].name",
    mutate=lambda s: wc(s).update(name=5))
job("m-empty-specs", "ctl", "spec.mpiReplicaSpecs.Launcher", mutate=lambda s: s.update(mpiReplicaSpecs={}))
job("m-no-spec", "ctl", "spec", spec="omit")
job("m-image-number", "api", "spec.mpiReplicaSpecs.Launcher.template.spec.containers[0].image",
    mutate=lambda s: s["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0].update(image=7))
os.makedirs(out, exist_ok=True)
with open(os.path.join(out, "cases.tsv"), "w") as f:
    for name, kind, want, obj in cases:
        with open(os.path.join(out, name + ".json"), "w") as j:
            json.dump(obj, j)
        f.write("%s\t%s\t%s\n" % (name, kind, want))
print(len(cases))
