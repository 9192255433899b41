#!/usr/bin/env bash
# timeout: 420
# Three nodes (tests/k8s/k8s up --nodes 3): each a kubelet with its own containerd and
# kube-proxy in a network namespace of its own, joined to node 1's. All three Ready with
# their own addresses; a pod pinned to each (nodeName) gets an address of its node's range;
# pod-to-pod TCP across nodes; cluster DNS and a Service from node 3; exec and logs of a pod
# on node 2 go through kube-apiserver to that node's kubelet; each kubelet is its own
# system:node:<name> and NodeRestriction keeps it to its own Node; `k8s down` leaves no
# process, mount, cgroup or network namespace of any node.
set -u
export KUBE_BACKEND=k8s
. "$(dirname "$0")/../../lib/kubesim.sh"
ks_skip_unless_root
ks_up --nodes 3
kc() { ks_kubectl "$@"; }

kc get nodes -o wide | tee "$KS_DIR/nodes.txt"
[ "$(grep -c ' Ready ' "$KS_DIR/nodes.txt")" = 3 ] || ks_fail "expected 3 Ready nodes"
for i in 1 2 3; do
  [ "$(kc get node "k8s-node-$i" -o 'jsonpath={.status.addresses[?(@.type=="InternalIP")].address}')" = "10.245.0.$i" ] ||
    ks_fail "k8s-node-$i: InternalIP is not 10.245.0.$i"
  # CPU requests kept small: the three kubelets share the machine's cores
  kc run "p$i" --image=mpik8s/openmpi:latest --restart=Never --override-type=strategic \
    --overrides="{\"spec\":{\"nodeName\":\"k8s-node-$i\",\"containers\":[{\"name\":\"p$i\",\"image\":\"mpik8s/openmpi:latest\",\"resources\":{\"requests\":{\"cpu\":\"10m\"}}}]}}" \
    --command -- sh -c "echo log-of-p$i; sleep 600" >/dev/null || ks_fail "kubectl run p$i"
done
for i in 1 2 3; do
  ks_wait_for "[ \"\$(kc get pod p$i -o jsonpath='{.status.phase}')\" = Running ]" 120 ||
    ks_fail "p$i not Running: $(kc describe pod "p$i" | tail -15)"
done
kc get pods -o wide
for i in 1 2 3; do
  ip=$(kc get pod "p$i" -o jsonpath='{.status.podIP}')
  [[ $ip == 10.244.$((i - 1)).* ]] || ks_fail "p$i on k8s-node-$i has address $ip, not in 10.244.$((i - 1)).0/24"
  eval "ip$i=$ip"
done

# pod-to-pod TCP across nodes: a listener on node 2, clients on node 1 and node 3
kc exec p2 -- perl -MIO::Socket::INET -e \
  '$s=IO::Socket::INET->new(LocalPort=>7777,Listen=>5,ReuseAddr=>1) or die; while($c=$s->accept){print $c "pong-from-p2\n"; close $c}' \
  >/dev/null 2>&1 &
lpid=$!
ks_on_exit "kill $lpid 2>/dev/null"
for i in 1 3; do
  # shellcheck disable=SC2154
  ks_wait_for "kc exec p$i -- timeout 5 bash -c 'exec 3<>/dev/tcp/$ip2/7777 && cat <&3' | grep -q pong-from-p2" 30 ||
    ks_fail "p$i (k8s-node-$i) cannot reach p2 (k8s-node-2) at $ip2:7777"
done
# DNS and a Service (kube-proxy of node 3) from node 3
out=$(kc exec p3 -- getent hosts kubernetes.default.svc.cluster.local) || ks_fail "DNS from node 3: $out"
[[ $out == "10.96.0.1 "* ]] || ks_fail "DNS from node 3: $out"
kc exec p3 -- timeout 5 bash -c 'exec 3<>/dev/tcp/kubernetes.default/443' || ks_fail "the kubernetes Service from node 3"
# exec and logs through the API server to node 2's kubelet
out=$(kc exec p2 -- sh -c 'echo exec-on-$(hostname); exit 3'); rc=$?
[ "$out" = exec-on-p2 ] && [ $rc = 3 ] || ks_fail "kubectl exec p2: output '$out' rc $rc (expected exec-on-p2, 3)"
[ "$(kc logs p2)" = log-of-p2 ] || ks_fail "kubectl logs p2: $(kc logs p2 2>&1)"
# each kubelet is its own node user; NodeRestriction holds
who=$(kc --kubeconfig "$KS_DIR/nodes/k8s-node-2/kc/kubelet.kubeconfig" auth whoami -o 'jsonpath={.status.userInfo.username}')
[ "$who" = system:node:k8s-node-2 ] || ks_fail "node 2's kubelet is '$who'"
kc --kubeconfig "$KS_DIR/nodes/k8s-node-2/kc/kubelet.kubeconfig" label node k8s-node-3 x=y >/dev/null 2>&1 &&
  ks_fail "node 2's kubelet could label k8s-node-3 (NodeRestriction)"

# down leaves nothing of any node
dir=$KS_DIR ns=$(cat "$KS_DIR/state/netns")
t0=$SECONDS
ks_down
echo "down: $((SECONDS - t0)) s"
[ -z "$(ip netns list | grep -F "$ns")" ] || ks_fail "network namespaces left: $(ip netns list | grep -F "$ns")"
[ -z "$(find /sys/fs/cgroup -maxdepth 2 -name "$ns" 2>/dev/null)" ] || ks_fail "cgroups $ns left"
[ -z "$(findmnt -rn -o TARGET | grep -F "$dir/")" ] || ks_fail "mounts under $dir left"
[ -z "$(pgrep -f -- "$dir/")" ] || ks_fail "processes of $dir left: $(pgrep -af -- "$dir/")"
echo "ok"
