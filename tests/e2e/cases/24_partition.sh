#!/usr/bin/env bash
# 24: the pod network between the launcher and one worker partitioned
# while mpirun runs, both kubelets healthy (tests/k8s/k8s fault partition: packets between
# the two pod IPs dropped both ways inside the cluster's namespaces; node, API server and
# kubelet traffic untouched, so exec streams and every pod's Ready stay). On the real cluster
# (KUBE_BACKEND=k8s) two nodes, the launcher on k8s-node-1, both workers on k8s-node-2; under
# kubesim one node, the partition an nftables rule on its pods' bridge (kubesim fault
# partition). Exec transport; backoffLimit 0, launcher restartPolicy Never. Each rank prints rank-up and sleeps 60 s.
# Run 1, annotation mpi-k8s.io/network-timeout "20": launcher <-> worker-1 partitioned after
# rank-up; the agent's pod-network watch stops mpirun and the MPIJob ends Failed naming
# j24-worker-1, its IP and node within 20 + 30 s of the partition; after heal, no leftovers.
# Run 2, annotation "0" (no watch), same partition: the ranks' sleep ends 60 s after rank-up,
# yet 90 s after the partition the MPIJob is still Running and the launcher pod too: mpirun
# waits on worker-1's daemon, whose messages the partition drops (TCP retransmits for ~15
# min). Then heal and delete: nothing left. docs/reliability.md records the measurements.
# timeout: 600
# needs: exclusive (its bound is the cluster's timing: 30-50 s after the fault, not a loaded machine's)
. "$(dirname "$0")/../lib.sh"
e2e_begin
LN= WN=
if [ "$KUBE_BACKEND" = k8s ]; then
  e2e_up --nodes 2
  LN=k8s-node-1 WN=k8s-node-2
else
  e2e_up
fi
e2e_op_start a

# start JOB NETWORK_TIMEOUT: the job, up to rank-up on both ranks; sets LIP and WIP (the
# launcher's and worker-1's pod IPs) and WNODE (worker-1's node)
start() {
  BACKOFF=0 LAUNCHER_RESTART=Never LAUNCHER_NODE=$LN WORKER_NODE=$WN NETWORK_TIMEOUT=$2 \
    PROG='[timeout, "400", mpirun, -np, "2", --bind-to, none, sh, -c, "echo rank-up; sleep 60"]' e2e_create "$1"
  e2e_wait_log "$1" '^rank-up' 2 180
  T_UP=$(e2e_now_ms)
  WNODE=$(kc get pod "$1-worker-1" -o jsonpath='{.spec.nodeName}')
  [ -z "$WN" ] || [ "$WNODE" = "$WN" ] || e2e_fail "$1: worker 1 on $WNODE, not on $WN"
  LIP=$(kc get pod "$(launcher_pod "$1")" -o jsonpath='{.status.podIP}')
  WIP=$(kc get pod "$1-worker-1" -o jsonpath='{.status.podIP}')
  [ -n "$LIP" ] && [ -n "$WIP" ] || e2e_fail "$1: no pod IPs (launcher '$LIP', worker-1 '$WIP')"
  e2e_log "$1: launcher $LIP, worker-1 $WIP (node $WNODE)"
}

# ---- run 1: the watch on, bound 20 s
start j24 20
t0=$(e2e_now_ms)
e2e_fault partition "$LIP" "$WIP"
# the exec path (API server, kubelet) is not the pod network: it works through the partition
kc exec j24-worker-1 -c worker -- true || e2e_fail "j24: exec into worker-1 failed during the partition"
e2e_final j24 110 || true
# every launcher pod of the job and its log (a Job replacement would show here)
kc get pods -l mpi_job_name=j24 -o wide >&2 || true
for p in $(kc get pods -l mpi_job_name=j24,mpi_role_type=launcher -o name); do
  kc logs "$p" --all-containers 2>/dev/null | grep -vE '^rank-up' | tail -n 12 | sed "s#^#$p: #" >&2
done
e2e_expect j24 Failed '.+' "j24-worker-1 \\($WIP, node $WNODE\\): no answer over the pod network for [0-9]+ s" "$t0" 50
e2e_note "detected=${E2E_SECS}s-after-partition(bound-20s)"
launcher_log j24 | grep -E 'pod network|stopping the command|grace period' | tail -n 5 | sed 's/^/j24 launcher: /' >&2
e2e_fault heal "$LIP" "$WIP"
e2e_no_leftovers j24 60

# ---- run 2: the watch off: what mpirun does alone
start j24b 0
t0=$(e2e_now_ms)
e2e_fault partition "$LIP" "$WIP"
sleep 90
t_check=$(e2e_now_ms)
fin=$(kc get mpijob j24b -o jsonpath='{range .status.conditions[?(@.status=="True")]}{.type} {end}')
phase=$(kc get pod "$(launcher_pod j24b)" -o jsonpath='{.status.phase}')
since_up=$(( (t_check - T_UP) / 1000 ))
e2e_log "j24b: $(( (t_check - t0) / 1000 )) s after the partition (${since_up} s after rank-up, the ranks' sleep 60 long over): conditions True: $fin; launcher $phase"
case " $fin " in *" Succeeded "*|*" Failed "*) e2e_fail "j24b: ended ($fin) without the watch: the case no longer shows the hang" ;; esac
[ "$phase" = Running ] || e2e_fail "j24b: launcher pod $phase, want Running (hung)"
# worker-1's rank is gone, its daemon waits on mpirun (exec still works)
left=$(kc exec j24b-worker-1 -c worker -- sh -c 'for p in /proc/[0-9]*; do tr "\0" " " <$p/cmdline; echo; done' 2>/dev/null |
  grep -cE "(^|/)(orted|prted) " || true)
e2e_note "no-watch=Running-after-90s orted-on-worker-1=$left"
e2e_fault heal "$LIP" "$WIP"
kc delete mpijob j24b --wait=false >/dev/null || e2e_fail "delete mpijob j24b"
e2e_wait_for "[ -z \"\$(kc get pods -l mpi_job_name=j24b -o name)\" ]" 90 ||
  e2e_fail "j24b: pods left after delete: $(kc get pods -l mpi_job_name=j24b --no-headers | tr '\n' ';')"
e2e_note "leftovers-j24b=0"
e2e_pass
