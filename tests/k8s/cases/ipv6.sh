#!/usr/bin/env bash
# timeout: 1250
# Issue #39 on the real cluster: the seed's journey (tests/integration/controller_journey.sh: our
# operator deployed as users install it, the seed's v1alpha2 pi over the exec transport, the
# metrics endpoint) and upstream's install with its pi example over SSH
# (tests/k8s/cases/upstream_ssh.sh: the operator in a pod, its in-cluster client on the API
# server's IPv6 ClusterIP; mpirun's ssh to the workers' DNS names) on a single-stack IPv6
# cluster (`tests/k8s/k8s up --ip-family ipv6`: node, pods, Services and cluster DNS all in
# fd00::/8; K8S_IP_FAMILY=ipv6 makes each case's cluster so, checked after up). The two run one
# after the other, each on its own cluster (the suite counts this case as one cluster: side by
# side they timed out beside the suite's others at load 11); a failure names the case and shows
# its last lines.
set -u
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
out=$(mktemp -d /tmp/ipv6.XXXXXX) || exit 1
pids=()
trap 'for p in "${pids[@]}"; do kill -TERM -- "-$p" 2>/dev/null; done; wait; rm -rf "$out"' EXIT
for c in tests/integration/controller_journey.sh tests/k8s/cases/upstream_ssh.sh; do
  n=$(basename "$c" .sh)
  setsid bash -c "s=\$SECONDS; if K8S_IP_FAMILY=ipv6 KUBE_BACKEND=k8s timeout -k 100 500 bash '$ROOT/$c' >'$out/$n.log' 2>&1;
    then echo \"$n on IPv6: passed (\$((SECONDS - s)) s)\"; else tail -n 40 '$out/$n.log'; echo \"FAIL: $n on IPv6 (\$((SECONDS - s)) s)\"; fi" \
    >"$out/$n.txt" 2>&1 &
  pids=($!)
  wait "${pids[0]}"
  pids=()
done
cat "$out"/*.txt
# a failure names itself last, for failed.txt
! grep -qh '^FAIL:' "$out"/*.txt || { grep -h '^FAIL:' "$out"/*.txt | tail -n 1; exit 1; }
