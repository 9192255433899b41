#!/usr/bin/env bash
# 15 (real cluster only): a node lost while mpirun runs. Two nodes; the launcher on
# k8s-node-1, both workers on k8s-node-2; mid-run node 2 is stopped as a machine is lost
# (tests/k8s/k8s fault stop-node: off the network first, so its streams and connections go
# silent rather than reset, then its kubelet, containerd, kube-proxy and containers killed).
# The node lifecycle controller marks it unreachable after the cluster's
# --node-monitor-grace-period (20 s) and its pods not Ready; the agent's watcher stops
# mpirun naming the worker and its node. backoffLimit 0: the MPIJob ends Failed, naming
# k8s-node-2, within 30 s of the node's unreachable taint (bound checked from the taint's
# timeAdded). Then the node comes back (start-node) and nothing is left.
# TRANSPORT (exec, the default, or ssh) picks the transport.
# timeout: 330
# needs: exclusive (its bound is the cluster's timing: 30-50 s after the fault, not a loaded machine's)
. "$(dirname "$0")/../lib.sh"
[ "$KUBE_BACKEND" = k8s ] || e2e_skip "a node lost needs the real cluster (KUBE_BACKEND=k8s)"
e2e_begin
e2e_up --nodes 2
e2e_op_start a
BACKOFF=0 LAUNCHER_NODE=k8s-node-1 WORKER_NODE=k8s-node-2 \
  PROG='[timeout, "200", mpirun, -np, "2", --bind-to, none, sh, -c, "echo rank-up; sleep 150"]' e2e_create j15
e2e_wait_log j15 '^rank-up' 2 180
[ "$(kc get pod j15-worker-0 -o jsonpath='{.spec.nodeName}')" = k8s-node-2 ] || e2e_fail "worker 0 not on k8s-node-2"
t0=$(e2e_now_ms)
e2e_fault stop-node k8s-node-2
taint() { kc get node k8s-node-2 -o 'jsonpath={.spec.taints[?(@.key=="node.kubernetes.io/unreachable")].timeAdded}' | cut -d' ' -f1; }
e2e_wait_for '[ -n "$(taint)" ]' 60 || e2e_fail "k8s-node-2 never tainted unreachable"
e2e_log "k8s-node-2: unreachable taint after $(( ($(e2e_now_ms) - t0) / 1000 )) s"
# the launcher's first run (OnFailure: the kubelet then runs it again, and the last run's
# message is the job's): its log while the pod still exists
p=$(launcher_pod j15)
e2e_wait_for "[ \"\$(kc get pod $p -o jsonpath='{.status.containerStatuses[0].restartCount}')\" -ge 1 ]" 40 || true
kc logs "$p" --previous 2>/dev/null | tail -n 12 | sed 's/^/launcher run 1: /' >&2
e2e_expect j15 Failed '.+' 'k8s-node-2' "$t0" 60
tt=$(taint)
[ -n "$tt" ] || e2e_fail "k8s-node-2 has no unreachable taint: $(kc get node k8s-node-2 -o jsonpath='{.spec.taints}')"
t_taint=$(( $(date -d "$tt" +%s) * 1000 ))
since_taint=$(awk -v a="$T_FINAL" -v b="$t_taint" 'BEGIN { printf "%.0f", (a - b) / 1000 }')
e2e_note "taint=$(( (t_taint - t0) / 1000 ))s-after-stop failed=${since_taint}s-after-taint(±1)"
e2e_log "j15: message: $FINAL_MSG"
[ "$since_taint" -le 30 ] || e2e_fail "j15: Failed ${since_taint} s after the unreachable taint (bound 30 s)"
# what the lost node leaves until it returns: its pods stay as the API last heard of them
e2e_note "pods-on-lost-node=$(kc get pods -l mpi_job_name=j15 --field-selector spec.nodeName=k8s-node-2 --no-headers 2>/dev/null | wc -l)"
e2e_fault start-node k8s-node-2
e2e_wait_for "[ \"\$(kc get node k8s-node-2 -o jsonpath='{.status.conditions[?(@.type==\"Ready\")].status}')\" = True ]" 60 ||
  e2e_fail "k8s-node-2 not Ready again after start-node"
e2e_no_leftovers j15 60
e2e_pass
