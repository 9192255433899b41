#!/usr/bin/env bash
# timeout: 420
# The shipped RBAC under real RBAC (kube-apiserver --authorization-mode=Node,RBAC):
# manifests/base's ClusterRole is enough for the operator (it creates every object of two
# jobs, Roles and RoleBindings included: escalation prevention would refuse a grant the
# operator does not hold), and each job's launcher ServiceAccount can exec into its own
# job's workers and into no other pod, as checked by real `kubectl exec` under
# impersonation and by `kubectl auth can-i`.
set -u
export KUBE_BACKEND=k8s
. "$(dirname "$0")/../../integration/controller_common.bash"
ctl_cluster
# the operator as a process with a ServiceAccount token bound to the shipped ClusterRole
# (not the admin kubeconfig): what it may do is exactly what manifests/base grants
kc -n mpi-operator create token mpi-operator --duration=1h >"$KS_DIR/op.token" || ks_fail "kubectl create token"
python3 - "$KS_DIR/kubeconfig" "$KS_DIR/op.kubeconfig" "$KS_DIR/op.token" <<'PY' || ks_fail "operator kubeconfig"
import sys, yaml
kc = yaml.safe_load(open(sys.argv[1]))
kc["users"] = [{"name": "op", "user": {"token": open(sys.argv[3]).read().strip()}}]
kc["contexts"] = [{"name": "op", "context": {"cluster": kc["clusters"][0]["name"], "user": "op"}}]
kc["current-context"] = "op"
yaml.safe_dump(kc, open(sys.argv[2], "w"))
PY
setsid "$KUBESIM" run --dir "$KS_DIR" -- "$BINDIR/mpi-operator" --kubeconfig "$KS_DIR/op.kubeconfig" \
  --leader-elect=false >>"$KS_DIR/op-a.log" 2>&1 &
echo $! >"$KS_DIR/op-a.pid"
ks_on_exit "ctl_stop a TERM"

for j in alpha beta; do
  mpijob_yaml "$j" --ann mpi-k8s.io/transport=exec --slots 1 --workers 1 --image mpik8s/openmpi:latest \
    --command '[sleep, "600"]' --worker-command '[sleep, "600"]' | kc create -f - >/dev/null || ks_fail "create MPIJob $j"
done
for j in alpha beta; do
  ks_wait_for "kc get pod $j-worker-0 -o jsonpath='{.status.phase}' | grep -q Running" 120 ||
    ks_fail "$j-worker-0 not Running: $(kc get pods -o wide; tail -20 "$KS_DIR/op-a.log")"
done
sa=$(kc get pods -l mpi_job_name=alpha,mpi_role_type=launcher -o jsonpath='{.items[0].spec.serviceAccountName}')
[ -n "$sa" ] || ks_fail "alpha's launcher pod has no serviceAccountName"
as="--as=system:serviceaccount:default:$sa"
out=$(kc exec "$as" alpha-worker-0 -- echo own-worker 2>&1) || ks_fail "alpha's launcher account cannot exec into alpha-worker-0: $out"
[ "$out" = own-worker ] || ks_fail "exec output: $out"
if out=$(kc exec "$as" beta-worker-0 -- echo other 2>&1); then ks_fail "alpha's launcher account could exec into beta-worker-0"; fi
echo "$out" | grep -q 'Forbidden\|forbidden' || ks_fail "exec into beta-worker-0: not Forbidden: $out"
if out=$(kc -n mpi-operator exec "$as" deploy/none -- true 2>&1); then ks_fail "exec outside the namespace allowed"; fi
[ "$(kc auth can-i create pods --subresource=exec "$as" -n kube-system 2>/dev/null)" = no ] || ks_fail "auth can-i: exec in kube-system"
[ "$(kc auth can-i delete pods "$as" 2>/dev/null)" = no ] || ks_fail "auth can-i: the launcher account may delete pods"
echo ok
