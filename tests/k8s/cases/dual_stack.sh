#!/usr/bin/env bash
# timeout: 300
# Issue #39 on a dual-stack real cluster (`tests/k8s/k8s up --ip-family dual`: every pod has an
# IPv4 and an IPv6 address, IPv4 first). Two MPIJobs of upstream's pi shape over exec, 2 workers:
#   dfam4  no annotation: the cluster's primary family. The headless Service is single-stack
#          IPv4 (the API server's default), so the hostfile's names resolve to A records only,
#          and the agent's pod-network watch and rank map use each pod's primary IP (IPv4).
#   dfam6  annotation mpi-k8s.io/ip-family: IPv6: the Service is SingleStack [IPv6], the names
#          resolve to AAAA only (getent in the launcher), and the agent uses the IPv6 pod IPs.
# Both succeed. Case 24 and 27 (the pod-network partition) run on dual stack too
# (tests/e2e/partition_lib.sh). The cluster is removed on exit, pass or fail.
set -u
export KUBE_BACKEND=k8s
. "$(dirname "$0")/../../integration/controller_common.bash"
IMG=mpik8s/mpi-pi:latest
ctl_cluster --ip-family dual
# AGENT_IMAGE: a launcher init image other than the default (a branch's own mpi-agent build)
ctl_start a --leader-elect=false --monitoring-port 18190 ${AGENT_IMAGE:+--agent-image "$AGENT_IMAGE"}
mk() {  # NAME [FAMILY]
  mpijob_yaml "$1" --ann mpi-k8s.io/transport=exec --ann mpi-k8s.io/worker-timeout=120 \
    ${2:+--ann "mpi-k8s.io/ip-family=$2"} --slots 1 --run-policy '{cleanPodPolicy: None, backoffLimit: 0}' --image "$IMG" \
    --command "[sh, -c, 'getent ahosts $1-worker-0.$1.default.svc | head -n 1; exec mpirun --allow-run-as-root -n 2 /home/mpiuser/pi']" \
    --worker-command '[sleep, "600"]' --container 'resources: {limits: {cpu: 250m, memory: 512Mi}}' |
    kc create -f - >/dev/null || ks_fail "create $1"
}
mk dfam4
mk dfam6 IPv6
for j in dfam4 dfam6; do
  wait_cond "$j" Succeeded True 180
done
check() {  # JOB FAMILY ADDRESS-REGEX
  local fams log
  fams=$(kc get svc "$1" -o jsonpath='{.spec.ipFamilies}')
  [ "$fams" = "[\"$2\"]" ] || ks_fail "$1: Service ipFamilies $fams, want [\"$2\"]"
  log=$(kc logs "$(kc get pods -l "mpi_job_name=$1,mpi_role_type=launcher" -o name | tail -1)" --tail=-1)
  echo "$log" | grep -q 'pi is approximately 3.14' || ks_fail "$1: no pi in the launcher's log"
  # the worker's name, as the launcher resolves it: that family only
  echo "$log" | grep -Eq "^$3 +STREAM $1-worker-0\\.$1\\.default\\.svc" ||
    ks_fail "$1: $1-worker-0's name does not resolve to $2 first: $(echo "$log" | grep STREAM)"
  # the agent's rank map: the pod IP of that family
  echo "$log" | grep -Eq "rank 0 -> pod $1-worker-0 \\(node [^,]+, IP $3\\)" ||
    ks_fail "$1: the agent's rank map does not use the $2 pod IP: $(echo "$log" | grep 'rank 0 ->')"
  echo "$1: $2 ($(echo "$log" | grep 'rank 0 ->' | sed 's/.*INFO //'))"
}
check dfam4 IPv4 '10\.244\.[0-9.]+'
check dfam6 IPv6 'fd00:10:244:[0-9a-f:]+'
# the cluster's default stays single-stack: the Service of dfam4 has no IPv6 address
[ "$(kc get svc dfam4 -o jsonpath='{.spec.ipFamilyPolicy}')" = SingleStack ] || ks_fail "dfam4: Service not SingleStack"
echo ok
