#!/usr/bin/env bash
# timeout: 240
# No create is sent twice when its answer is lost (issue #40): kubesim commits the first create
# of each of the operator's kinds but answers 504 Timeout (fault lose-create-answer), and its
# watches lag 3 s (watch_delay), as a loaded API server's: the operator must read the name back
# (GET) instead of POSTing it again in the next sync, before its informer delivers the object.
# Counted in kubesim's request log: one POST per object of the job (1 launcher, 2 workers;
# the pods stay Pending by a nodeSelector no node has), and a GET of each lost one's name.
set -u
. "$(dirname "$0")/controller_common.bash"
ctl_cluster
KINDS="configmaps serviceaccounts roles.rbac.authorization.k8s.io rolebindings.rbac.authorization.k8s.io
  services secrets jobs.batch pods"
for k in $KINDS; do ks_fault lose-create-answer "$k" 1 || ks_fail "fault lose-create-answer $k"; done
ks_fault set watch_delay=3 || ks_fail "fault set watch_delay"
ctl_start a --leader-elect=false -v 1
# pods that stay Pending: nothing runs, only the operator's objects are made
mpijob_yaml lost --slots 1 --names l,w --command '[mpirun, hostname]' --pod 'nodeSelector: {mpik8s.io/nowhere: "true"}' | kc create -f - >/dev/null || ks_fail "create the MPIJob"
log=$KS_DIR/apiserver.log
ks_wait_for 'kc get job lost-launcher' 60 || ks_fail "no launcher Job: $(tail -n 20 $KS_DIR/op-a.log)"
sleep 8 # the syncs that a lost answer could make POST again (after the watch's lag)
# POSTs per object: path -> count, the operator's (the admin's kubectl creates only the MPIJob)
posts() { grep -oE " POST /api[^ ?]*/namespaces/default/$1 [0-9]+" "$log" | grep -c .; }
fail=0
for k in configmaps serviceaccounts roles rolebindings services secrets jobs; do
  n=$(posts "$k")
  echo "POST $k: $n"
  [ "$n" -eq 1 ] || fail=1
done
n=$(posts pods)
echo "POST pods (2 workers): $n"
[ "$n" -eq 2 ] || fail=1
echo "answers lost (504): $(grep -cE ' POST /api[^ ]* 504 ' "$log"); read back: $(grep -cE ' GET /api[^ ]*/namespaces/default/[a-z.]+/lost-[a-z0-9-]+ 200 ' "$log")"
[ "$fail" = 0 ] || { grep -E ' (POST|GET) /api[^ ]*/namespaces/default/' "$log" | grep -v mpijobs | tail -n 40
  ks_fail "a create was sent twice after its answer was lost"; }
grep -q "create configmaps lost-config answered Timeout; read back: it exists" "$KS_DIR/op-a.log" ||
  ks_fail "the lost ConfigMap create was not read back: $(grep lost-config $KS_DIR/op-a.log | tail -5)"
echo "PASS: every object of the job POSTed once, the lost answers read back by name"
