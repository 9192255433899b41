#!/usr/bin/env bash
# timeout: 240
# The concurrent creates of one sync (controller/apply.c): the operator runs with its own
# ServiceAccount's token under the ClusterRole of manifests/base, then (once it started in the
# full RBAC mode) minus `create` on
# services/serviceaccounts/secrets and rolebindings, so that 2 of the 4 object creates of a
# new job's concurrent run fail (403: the ServiceAccount and the Service) while the ConfigMap
# and the Role go through; the launcher's RoleBinding, created alone after that run (the real
# API server refuses it while its Role is unknown), is not even sent. Checked: each failure is
# logged, the sync stops before the RoleBinding, the pods and the launcher Job and is retried
# with backoff; the creates that succeeded are never sent again (the caches' write-through);
# once the permission is back everything exists exactly once (one POST per object, one
# Created Event) and the job gets its Created condition.
set -u
. "$(dirname "$0")/controller_common.bash"
ctl_cluster --set run_pods=false
W=$KS_DIR/cc
mkdir -p "$W"

# the ClusterRole without the creates named above, and back
kc get clusterrole mpi-operator -o json >"$W/role.json" || ks_fail "get the ClusterRole"
python3 - "$W/role.json" "$W/role-cut.json" <<'PY' || ks_fail "editing the ClusterRole"
import json, sys
r = json.load(open(sys.argv[1]))
cut = 0
for rule in r["rules"]:
    if {"services", "rolebindings"} & set(rule.get("resources", [])):
        rule["verbs"] = [v for v in rule["verbs"] if v != "create"]
        cut += 1
assert cut == 2, "expected the services and rolebindings rules, found %d" % cut
for k in ("resourceVersion", "uid", "creationTimestamp", "managedFields"):
    r["metadata"].pop(k, None)
json.dump(r, open(sys.argv[2], "w"))
PY

# the operator with its ServiceAccount's token
tok=$(kc create token mpi-operator -n mpi-operator) || ks_fail "create token"
cp "$KS_DIR/kubeconfig" "$W/kubeconfig"
kubectl --kubeconfig "$W/kubeconfig" config set-credentials admin --token="$tok" >/dev/null || ks_fail "set-credentials"
setsid "$KUBESIM" run --dir "$KS_DIR" -- "$BINDIR/mpi-operator" --kubeconfig "$W/kubeconfig" --leader-elect=false \
  -v 1 >"$KS_DIR/op-cc.log" 2>&1 &
echo $! >"$KS_DIR/op-cc.pid"
ks_on_exit "ctl_stop cc TERM"
ks_wait_for "grep -q 'controller started' $KS_DIR/op-cc.log" 30 || ks_fail "operator did not start: $(ctl_log cc)"
# cut only now: at start the RBAC probe (controller/access.c) would see the missing creates and
# choose the limited mode; here the permission goes away under a running full-mode operator
grep -q 'RBAC: full mode' "$KS_DIR/op-cc.log" || ks_fail "the operator did not start in the full RBAC mode: $(ctl_log cc)"
kc replace -f "$W/role-cut.json" >/dev/null || ks_fail "replace the ClusterRole"

mpijob_yaml cc1 --api v1alpha2 --command '[mpirun, hostname]' | kc create -f - >/dev/null || ks_fail "create cc1"

# the first sync: 2 of its 4 concurrent object creates failed; the retries send only those 2 again
fails() { grep -c "default/cc1: $1 concurrent writes failed; the sync is retried" "$KS_DIR/op-cc.log"; }
ks_wait_for '[ "$(fails "2 of 2")" -ge 1 ]' 30 || ks_fail "no retried concurrent failure in the log: $(ctl_log cc)"
[ "$(fails "2 of 4")" = 1 ] || ks_fail "expected one first sync with 2 of 4 writes failed: $(ctl_log cc)"
for what in "create serviceaccounts cc1-launcher" "create services cc1-worker"; do
  n=$(grep -c "default/cc1: $what: .*" "$KS_DIR/op-cc.log")
  [ "$n" -ge 2 ] || ks_fail "'$what' logged $n times, expected one per failed sync (>= 2): $(ctl_log cc)"
done
# the sync stopped before the pods and the launcher Job
[ -z "$(kc get pods -l training.kubeflow.org/job-name=cc1 -o name)" ] || ks_fail "pods created although the objects failed"
[ -z "$(kc get jobs -l training.kubeflow.org/job-name=cc1 -o name)" ] || ks_fail "launcher Job created although the objects failed"

posts() { # posts RESOURCE [CODE]: POSTs of RESOURCE by the operator's ServiceAccount (with that status)
  grep -E "POST /apis?/[^ ]*/namespaces/default/$1 ${2:-[0-9]+} .*system:serviceaccount:mpi-operator:mpi-operator" \
    "$KS_DIR/apiserver.log" | wc -l
}
[ "$(posts configmaps)" = 1 ] || ks_fail "the ConfigMap was POSTed $(posts configmaps) times during the retries"
[ "$(posts roles)" = 1 ] || ks_fail "the Role was POSTed $(posts roles) times during the retries"
[ "$(posts rolebindings)" = 0 ] || ks_fail "the RoleBinding was POSTed $(posts rolebindings) times before the run with its Role succeeded"

kc replace -f "$W/role.json" >/dev/null 2>&1 || {
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); [r["metadata"].pop(k,None) for k in ("resourceVersion","uid")]; json.dump(r,open(sys.argv[1],"w"))' "$W/role.json"
  kc replace -f "$W/role.json" >/dev/null || ks_fail "restore the ClusterRole"
}
wait_cond cc1 Created True 60
ks_wait_for "kc get job cc1-launcher" 30 || ks_fail "no launcher Job after the permission came back: $(ctl_log cc)"
sleep 2   # a late duplicate would show now
for r in configmaps serviceaccounts roles rolebindings services pods jobs; do
  want=1; [ $r = pods ] && want=2
  sel=training.kubeflow.org/job-name=cc1; [ $r = pods ] && sel=$sel,training.kubeflow.org/job-role=worker
  n=$(kc get "$r" -l "$sel" -o name | wc -l)
  [ "$n" = "$want" ] || ks_fail "$r of cc1: $n, expected $want"
done
for r in configmaps serviceaccounts roles rolebindings services jobs; do
  [ "$(posts $r 201)" = 1 ] || ks_fail "$r: $(posts $r 201) successful POSTs, expected 1"
done
[ "$(posts pods 201)" = 2 ] || ks_fail "pods: $(posts pods 201) successful POSTs, expected 2"
[ "$(posts configmaps)" = 1 ] || ks_fail "the ConfigMap was POSTed $(posts configmaps) times"
ks_wait_for "[ \"\$(kc get events --field-selector reason=MPIJobCreated -o name | wc -l)\" = 1 ]" 10 ||
  ks_fail "MPIJobCreated Events: $(kc get events --field-selector reason=MPIJobCreated -o name | wc -l), expected 1"
echo "concurrent creates: 2/4 refused -> logged, retried (the RoleBinding after them), nothing duplicated, converged"
