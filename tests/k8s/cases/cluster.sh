#!/usr/bin/env bash
# timeout: 420
# The real cluster itself (tests/k8s/k8s): kubectl version shows a real kube-apiserver of
# the pinned version; one node Ready, on containerd; cluster DNS (CoreDNS behind kube-proxy)
# answers from a pod; exec and logs go through kube-apiserver -> kubelet -> containerd;
# `k8s down` leaves no process, mount, cgroup or network namespace behind.
set -u
export KUBE_BACKEND=k8s
. "$(dirname "$0")/../../lib/kubesim.sh"
. "$ROOT/tests/k8s/versions.env"
ks_skip_unless_root
ks_up
kc() { ks_kubectl "$@"; }

kc version | tee "$KS_DIR/version.txt"
grep -qx "Server Version: v$K8S_VERSION" "$KS_DIR/version.txt" || ks_fail "kubectl version: no Server Version v$K8S_VERSION"
kc get nodes -o wide | tee "$KS_DIR/nodes.txt"
[ "$(kc get nodes -o name | wc -l)" = 1 ] || ks_fail "expected one node"
grep -q ' Ready ' "$KS_DIR/nodes.txt" || ks_fail "the node is not Ready"
grep -q "containerd://$CONTAINERD_VERSION" "$KS_DIR/nodes.txt" || ks_fail "the node's runtime is not containerd $CONTAINERD_VERSION"

# a pod resolves the kubernetes Service through CoreDNS and reaches it through kube-proxy
kc run dnscheck --image=mpik8s/openmpi:latest --restart=Never --command -- \
  bash -c 'getent hosts kubernetes.default.svc.cluster.local && exec 3<>/dev/tcp/kubernetes.default/443 && echo tcp-ok; sleep 300' \
  >/dev/null || ks_fail "kubectl run"
ks_wait_for "kc logs dnscheck | grep -q tcp-ok" 90 || ks_fail "DNS/Service from a pod: $(kc describe pod dnscheck | tail -15; kc logs dnscheck)"
kc logs dnscheck | grep -q "^10.96.0.1 .*kubernetes.default.svc.cluster.local" || ks_fail "kubernetes.default.svc did not resolve to 10.96.0.1: $(kc logs dnscheck)"
# exec through the API server and the kubelet, with the exit status
out=$(kc exec dnscheck -- sh -c 'echo exec-ok; exit 3'); rc=$?
[ "$out" = exec-ok ] && [ $rc = 3 ] || ks_fail "kubectl exec: output '$out' rc $rc (expected exec-ok, 3)"

# down leaves nothing
dir=$KS_DIR ns=$(cat "$KS_DIR/state/netns")
ks_down
[ ! -e "/run/netns/$ns" ] || ks_fail "network namespace $ns left"
[ -z "$(find /sys/fs/cgroup -maxdepth 2 -name "$ns" 2>/dev/null)" ] || ks_fail "cgroups $ns left"
[ -z "$(findmnt -rn -o TARGET | grep -F "$dir/")" ] || ks_fail "mounts under $dir left"
[ -z "$(pgrep -f -- "$dir/")" ] || ks_fail "processes of $dir left: $(pgrep -af -- "$dir/")"
echo "ok"
