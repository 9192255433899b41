#!/usr/bin/env bash
# timeout: 420
# The namespaced install (manifests/overlays/namespaced) for clusters where no ClusterRole
# may be created: its kustomize output holds no cluster-scoped object; with the CRD installed
# by an admin, `kubectl apply -k` into namespace mpi-jobs (labelled Pod Security restricted)
# runs the operator under a Role only (--namespace): a compliant MPIJob there runs to
# Succeeded, one in another namespace is left alone, and kubesim's access log shows no
# cluster-scoped request by the operator's ServiceAccount.
set -u
. "$(dirname "$0")/controller_common.bash"
ks_skip_unless_root
ks_up
OV=$ROOT/manifests/overlays/namespaced
kc kustomize "$OV" >"$KS_DIR/ns.yaml" || ks_fail "kubectl kustomize $OV"
kinds=$(python3 -c 'import sys,yaml; print(" ".join(sorted(set(d["kind"] for d in yaml.safe_load_all(open(sys.argv[1])) if d))))' "$KS_DIR/ns.yaml")
[ "$kinds" = "Deployment Role RoleBinding ServiceAccount" ] || ks_fail "overlay kinds: $kinds"
python3 -c 'import sys,yaml; assert all(d["metadata"].get("namespace") == "mpi-jobs" for d in yaml.safe_load_all(open(sys.argv[1])) if d)' \
  "$KS_DIR/ns.yaml" || ks_fail "an object outside namespace mpi-jobs"

# the admin's part: the CRD and the namespace (restricted)
kc create -f "$ROOT/manifests/base/crd.yaml" >/dev/null || ks_fail "create CRD"
kc create namespace mpi-jobs >/dev/null && kc label namespace mpi-jobs pod-security.kubernetes.io/enforce=restricted >/dev/null \
  || ks_fail "create namespace mpi-jobs"
ks_wait_for "kc get mpijobs -n mpi-jobs" 20 || ks_fail "mpijobs not served"
kc apply -k "$OV" >/dev/null || ks_fail "kubectl apply -k manifests/overlays/namespaced"
ks_wait_for "kc get pods -n mpi-jobs -l app=mpi-operator -o jsonpath='{.items[0].status.conditions[?(@.type==\"Ready\")].status}' | grep -q True" 90 \
  || ks_fail "operator not Ready: $(kc get pods -n mpi-jobs -o wide; kc logs -n mpi-jobs -l app=mpi-operator --tail 20)"

job() { # job NAMESPACE
  mpijob_yaml pi --ann mpi-k8s.io/transport=exec --ann mpi-k8s.io/worker-timeout=120 --restart Never \
    --image mpik8s/nccl-benchmarks:latest --names pi,pi --pod 'securityContext: {runAsNonRoot: true, runAsUser: 1000, seccompProfile: {type: RuntimeDefault}}' \
    --container 'securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}' \
    --command '[mpirun, -np, "2", -x, PATH, -mca, pml, ob1, -mca, btl, "^openib", mpi-pi]' |
    kc create -n "$1" -f - >/dev/null || ks_fail "create MPIJob in $1"
}
job mpi-jobs
job default
ks_wait_for "[ \"\$(kc get mpijob -n mpi-jobs pi -o jsonpath='{.status.conditions[?(@.type==\"Succeeded\")].status}')\" = True ]" 240 || {
  kc get pods -n mpi-jobs -o wide >&2; kc logs -n mpi-jobs -l app=mpi-operator --tail 20 >&2
  ks_fail "MPIJob mpi-jobs/pi did not succeed: $(kc get mpijob -n mpi-jobs pi -o jsonpath='{.status.conditions}')"
}
[ -z "$(kc get mpijob -n default pi -o jsonpath='{.status}')" ] || ks_fail "the operator touched default/pi"
[ "$(kc get pods -n default -l mpi_job_name=pi -o name | wc -l)" -eq 0 ] || ks_fail "pods created for default/pi"
# no request of the operator's account reached beyond its namespace (kubesim's access log names the user)
grep 'system:serviceaccount:mpi-jobs:mpi-operator' "$KS_DIR/apiserver.log" >"$KS_DIR/op-requests.log" || true
[ -s "$KS_DIR/op-requests.log" ] || ks_fail "no request of the operator's account in the access log"
# (the RBAC probe's SelfSubjectAccessReviews, for namespace mpi-jobs, are cluster-scoped by path
# and need no grant: every authenticated user may create them, system:basic-user)
if grep -vE ' /apis?/[^ ]*/namespaces/mpi-jobs/| /(version|api|apis)(/[^/ ]+(/v[^/ ]+)?)?[ ?]' "$KS_DIR/op-requests.log" |
   grep -vE ' POST /apis/authorization.k8s.io/v1/selfsubjectaccessreviews 201 ' | grep -E ' (GET|POST|PUT|PATCH|DELETE) ' >&2; then
  ks_fail "the operator made cluster-scoped requests (above)"
fi
echo PASS
