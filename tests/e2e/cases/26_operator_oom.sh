#!/usr/bin/env bash
# 26 (real cluster only): the operator OOM-killed by the kernel under a 200-job burst. Our
# operator runs as its Deployment (deploy/v2beta1, as users install it) with a memory limit
# (OOM_LIMIT, 5Mi) below what a burst of N (200) MPIJobs needs (peak anonymous RSS about 6.6 MB,
# docs/controller.md); the MPIJobs' pods stay Pending (a nodeSelector no node has). Asserts:
# the container ends OOMKilled and the kubelet restarts it; once the limit is raised to 64Mi
# every one of the N jobs gets exactly one launcher Job, ConfigMap, Secret, Service,
# ServiceAccount, Role and RoleBinding and its Created condition within 120 s, nothing
# duplicated or lost. The cluster is removed on exit (ks_up). Not in CI (about 2.5 min).
# timeout: 600
set -u
ROOT=${ROOT:-$(cd "$(dirname "$0")/../../.." && pwd)}
[ "${KUBE_BACKEND:-}" = k8s ] || { echo "E2E-RESULT: SKIP real cluster only (KUBE_BACKEND=k8s)"; exit 77; }
. "$ROOT/tests/integration/controller_common.bash"
. "$ROOT/bench/peer_lib.bash"
ks_skip_unless_root
N=${N:-200} LIMIT=${OOM_LIMIT:-5Mi} OPNS=mpi-operator-ours
DETAIL=()
fail() { echo "E2E-RESULT: FAIL $* ${DETAIL[*]:-}"; exit 1; }
peer_image
eval "$(sed -n '/^jobs_yaml() {/,/^}/p; /^count_jobs() {/,/^}/p' "$ROOT/bench/peer_operator.sh")"
ms() { date +%s%3N; }
op_state() {  # restarts and last termination reason of the operator's newest pod
  kc -n $OPNS get pods -o json | jq -r '[.items[] | .status.containerStatuses[0]? // empty |
    "\(.restartCount) \(.lastState.terminated.reason // "-")"] | last // "0 -"'
}
ks_up
W=$KS_DIR/w; mkdir -p "$W"
peer_install_crd
peer_install_ours bench
peer_owner_refs_ready bench $OPNS $OPNS
kc -n $OPNS set resources deployment/$OPNS --limits=memory="$LIMIT" --requests=memory="$LIMIT" >/dev/null ||
  fail "set the operator's memory limit"
kc -n $OPNS rollout status deployment/$OPNS --timeout=120s >/dev/null || fail "the limited operator did not start"
jobs_yaml >"$W/jobs.yaml"
t0=$(ms)
kc create -f "$W/jobs.yaml" >/dev/null || fail "kubectl create of $N MPIJobs"
oom=""
for _ in $(seq 1 60); do
  read -r restarts reason <<<"$(op_state)"
  [ "$reason" = OOMKilled ] && [ "${restarts:-0}" -ge 1 ] && { oom=$(( ($(ms) - t0) / 1000 )); break; }
  sleep 1
done
[ -n "$oom" ] || fail "the operator was not OOM-killed under $LIMIT within 60 s (restarts ${restarts:-?}, last ${reason:-?})"
DETAIL+=("oom-killed=${oom}s-after-create(limit-$LIMIT) jobs-then=$(count_jobs)")
t1=$(ms)
kc -n $OPNS set resources deployment/$OPNS --limits=memory=64Mi --requests=memory=64Mi >/dev/null || fail "raise the limit"
while [ "$(count_jobs)" -lt "$N" ] && [ $(( ($(ms) - t1) / 1000 )) -lt 120 ]; do sleep 2; done
done_s=$(( ($(ms) - t1) / 1000 ))
[ "$(count_jobs)" -eq "$N" ] || fail "$(count_jobs) of $N launcher Jobs 120 s after the limit was raised"
DETAIL+=("converged=${done_s}s-after-raise")
sleep 5 # late duplicates would show now
for k in jobs.batch configmaps secrets services serviceaccounts roles.rbac.authorization.k8s.io rolebindings.rbac.authorization.k8s.io; do
  n=$(kc -n bench get "$k" -o json | jq '[.items[] | select(.metadata.ownerReferences[0].kind == "MPIJob")] | length')
  [ "$n" -eq "$N" ] || fail "$k owned by MPIJobs: $n, want $N"
  d=$(kc -n bench get "$k" -o json | jq '[.items[] | select(.metadata.ownerReferences[0].kind == "MPIJob") | .metadata.ownerReferences[0].name] | group_by(.) | map(select(length > 1)) | length')
  [ "$d" -eq 0 ] || fail "$k: $d MPIJobs own more than one"
done
c=$(kc -n bench get mpijobs -o json | jq '[.items[] | select((.status.conditions // []) | map(.type) | index("Created"))] | length')
[ "$c" -eq "$N" ] || fail "$c of $N MPIJobs have the Created condition"
p=$(kc -n bench get pods -o name | wc -l)
[ "$p" -eq $((N * 3)) ] || fail "$p pods, want $((N * 3))"
echo "E2E-RESULT: PASS ${DETAIL[*]} objects=1-of-each-per-job pods=$p"
