#!/usr/bin/env bash
# timeout: 300
# The CRD under the real kube-apiserver: the shipped deploy installs (kubectl create -f
# deploy/v2beta1/mpi-operator.yaml: every object is accepted, as written); an MPIJob with a
# typo is refused by the server's strict field validation, naming the field, and nothing is
# created; a wrong type is refused by the CRD's schema; `kubectl explain` documents the
# fields of both served versions.
set -u
export KUBE_BACKEND=k8s
. "$(dirname "$0")/../../lib/kubesim.sh"
ks_skip_unless_root
ks_up
kc() { ks_kubectl "$@"; }

kc create -f "$ROOT/deploy/v2beta1/mpi-operator.yaml" >"$KS_DIR/create.txt" 2>&1 ||
  ks_fail "kubectl create -f deploy/v2beta1/mpi-operator.yaml: $(cat "$KS_DIR/create.txt")"
ks_wait_for "kc get mpijobs" 30 || ks_fail "mpijobs not served"

job() {  # job NAME SPEC-LINE: a v2beta1 MPIJob with one extra line under spec
  mpijob_yaml "$1" --spec "$2" --workers 1 --image mpik8s/openmpi:latest --command '[mpirun, hostname]'
}
# a typo: strict field validation (kubectl's default --validate=strict, done by the server)
job typo 'slotPerWorker: 1' >"$KS_DIR/typo.yaml"
if kc create -f "$KS_DIR/typo.yaml" >"$KS_DIR/typo.out" 2>&1; then ks_fail "an MPIJob with spec.slotPerWorker was accepted"; fi
cat "$KS_DIR/typo.out"
grep -q 'unknown field "spec.slotPerWorker"' "$KS_DIR/typo.out" || ks_fail "the refusal does not name spec.slotPerWorker"
kc get mpijob typo >/dev/null 2>&1 && ks_fail "the refused MPIJob exists"
# a wrong type: the CRD's OpenAPI schema
job badtype 'slotsPerWorker: "two"' >"$KS_DIR/badtype.yaml"
if kc create -f "$KS_DIR/badtype.yaml" >"$KS_DIR/badtype.out" 2>&1; then ks_fail "slotsPerWorker: \"two\" was accepted"; fi
grep -q 'spec.slotsPerWorker' "$KS_DIR/badtype.out" || ks_fail "the schema refusal does not name spec.slotsPerWorker: $(cat "$KS_DIR/badtype.out")"
# the good one is accepted
job good 'slotsPerWorker: 1' | kc create -f - || ks_fail "a valid v2beta1 MPIJob was refused"
# kubectl explain of both versions
kc explain mpijobs.spec.slotsPerWorker --api-version=kubeflow.org/v2beta1 | tee "$KS_DIR/explain.txt"
grep -q 'FIELD: *slotsPerWorker' "$KS_DIR/explain.txt" || ks_fail "kubectl explain mpijobs.spec.slotsPerWorker (v2beta1)"
kc explain mpijobs.spec.runPolicy --api-version=kubeflow.org/v2beta1 >/dev/null || ks_fail "kubectl explain mpijobs.spec.runPolicy"
kc explain mpijobs.spec.cleanPodPolicy --api-version=kubeflow.org/v1alpha2 >/dev/null || ks_fail "kubectl explain (v1alpha2) mpijobs.spec.cleanPodPolicy"
echo ok
