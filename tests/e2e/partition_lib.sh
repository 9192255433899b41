# tests/e2e/partition_lib.sh - what cases 24 (the pod-network watch on) and 27 (the watch off)
# share: the cluster, the job up to rank-up, its pod IPs. On the real cluster
# (KUBE_BACKEND=k8s) two nodes, dual stack (`k8s up --ip-family dual`: every pod has an IPv4 and
# an IPv6 address, IPv4 first; K8S_IP_FAMILY=ipv4|ipv6 picks one family instead), the launcher
# on k8s-node-1, both workers on k8s-node-2; the partition cuts every family. Under
# kubesim one node, the partition an nftables rule on its pods' bridge (kubesim fault
# partition). Exec transport; backoffLimit 0, launcher restartPolicy Never; each rank prints
# rank-up and sleeps 60 s. Sourced after lib.sh.

# partition_up: the case's cluster and its operator (sets LN and WN, the nodes of the launcher
# and of the workers on the real cluster)
partition_up() {
  LN= WN=
  if [ "$KUBE_BACKEND" = k8s ]; then
    e2e_up --nodes 2 --ip-family "${K8S_IP_FAMILY:-dual}"
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
  read -r -a LIPS <<<"$(kc get pod "$(launcher_pod "$1")" -o jsonpath='{.status.podIPs[*].ip}')"
  read -r -a WIPS <<<"$(kc get pod "$1-worker-1" -o jsonpath='{.status.podIPs[*].ip}')"
  [ "${#LIPS[@]}" = "${#WIPS[@]}" ] || e2e_fail "$1: pod IPs of the launcher (${LIPS[*]}) and worker-1 (${WIPS[*]}) differ in families"
  [ "$KUBE_BACKEND" != k8s ] || [ "${K8S_IP_FAMILY:-dual}" != dual ] || [ "${#LIPS[@]}" = 2 ] ||
    e2e_fail "$1: dual stack, yet the launcher has the pod IPs ${LIPS[*]}"
  e2e_log "$1: launcher ${LIPS[*]}, worker-1 ${WIPS[*]} (node $WNODE)"
}

# partition_cut / partition_heal: the launcher and worker-1 apart (again together) in every
# family they have addresses in (on kubesim, the one)
partition_cut() {
  local k
  for k in "${!LIPS[@]}"; do e2e_fault partition "${LIPS[$k]}" "${WIPS[$k]}"; done
}
partition_heal() {
  local k
  for k in "${!LIPS[@]}"; do e2e_fault heal "${LIPS[$k]}" "${WIPS[$k]}"; done
}
