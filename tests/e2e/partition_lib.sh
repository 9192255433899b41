# tests/e2e/partition_lib.sh - what cases 24 (the pod-network watch on) and 27 (the watch off)
# share: the cluster, the job up to rank-up, its pod IPs. On the real cluster
# (KUBE_BACKEND=k8s) two nodes, the launcher on k8s-node-1, both workers on k8s-node-2; under
# kubesim one node, the partition an nftables rule on its pods' bridge (kubesim fault
# partition). Exec transport; backoffLimit 0, launcher restartPolicy Never; each rank prints
# rank-up and sleeps 60 s. Sourced after lib.sh.

# partition_up: the case's cluster and its operator (sets LN and WN, the nodes of the launcher
# and of the workers on the real cluster)
partition_up() {
  LN= WN=
  if [ "$KUBE_BACKEND" = k8s ]; then
    e2e_up --nodes 2
    LN=k8s-node-1 WN=k8s-node-2
  else
    e2e_up
  fi
  e2e_op_start a
}

# partition_start JOB NETWORK_TIMEOUT: the job, up to rank-up on both ranks; sets T_UP, LIP
# and WIP (the launcher's and worker-1's pod IPs) and WNODE (worker-1's node)
partition_start() {
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
