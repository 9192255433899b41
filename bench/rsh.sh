#!/usr/bin/env bash
# bench/rsh.sh - mpi-rsh against its anchors, measured in one run on kubesim over HTTPS
# with a bearer token, or with KUBE_BACKEND=k8s on the real cluster (tests/k8s: a real
# kube-apiserver, kubelet and containerd; its own kubectl, client certificate):
# `mpi-rsh POD true` vs `kubectl exec POD -- true` (same pod, same
# command; kubectl called directly, warm discovery cache) vs OpenSSH `ssh` and
# mpi-rsh's SSH transport to the same worker's sshd: hyperfine mean ± sd, peak RSS
# (/usr/bin/time %M), CPU-seconds per GB of stdout, and binary / bundle sizes.
# mpi-rsh is measured twice: as it usually runs (resuming the TLS session an earlier call
# left in MPI_RSH_TLS_CACHE_DIR) and as a first call (full handshake); the floor every client
# pays is the same command run in the pod's namespaces without any API server or kubelet
# (nsenter into the pod's pid 1 + /bin/sh -c true). Client instruction counts come from callgrind (stable on a noisy machine).
# Prints a Markdown table. BENCH_RUNS (default 30), BENCH_MB (default 512).
set -u
ROOT=${ROOT:-$(cd "$(dirname "$0")/.." && pwd)}
BINDIR=${BINDIR:-$ROOT/bin}
RUNS=${BENCH_RUNS:-30}
MB=${BENCH_MB:-512}
. "$ROOT/tests/lib/kubesim.sh"
ks_skip_unless_root
for t in hyperfine /usr/bin/time /usr/sbin/sshd ssh-keygen; do command -v $t >/dev/null || { echo "bench/rsh.sh: $t missing"; exit 1; }; done
RSH=$BINDIR/mpi-rsh
ks_up
if [ "$KUBE_BACKEND" = k8s ]; then
  KUBECTL=$KS_DIR/bin/kubectl   # the cluster's own (tests/k8s/k8s run links it)
  ks_run true && [ -x "$KUBECTL" ] || ks_fail "no kubectl in $KS_DIR/bin"
  IMAGE=mpik8s/openmpi:latest WHERE="the real cluster (tests/k8s), HTTPS + client certificate"
else
  KUBECTL=$(command -v kubectl.1.32 || ls /usr/lib/google-cloud-sdk/bin/kubectl.1.32 2>/dev/null || command -v kubectl)
  IMAGE=debian WHERE="kubesim HTTPS + token"
fi
M=$(mktemp -d "$ROOT/build/bench-rsh.XXXXXX")
ks_on_exit 'rm -rf "$M"'
NETNS=$(cat "$KS_DIR/state/netns")
export KUBECONFIG=$KS_DIR/kubeconfig KUBECACHEDIR=$M/kube-cache
unset MPI_JOB_NAMESPACE MPI_JOB_WORKER_CONTAINER MPI_JOB_TRANSPORT
IN() { nsenter --net=/run/netns/$NETNS -- "$@"; }
grep -q 'server: https://' "$KUBECONFIG" || ks_fail "kubeconfig is not HTTPS"
[ "$KUBE_BACKEND" = k8s ] || grep -q 'token:' "$KUBECONFIG" || ks_fail "kubeconfig is not HTTPS + token"

K=$M/ssh; mkdir -p "$K" /run/sshd
ssh-keygen -q -t ed25519 -N '' -C bench -f "$K/id"
cp "$K/id" "$K/ssh-privatekey"; cp "$K/id.pub" "$K/ssh-publickey"; cp "$K/id.pub" "$K/authorized_keys"
printf 'Port 2222\nHostKey %s/ssh-privatekey\nAuthorizedKeysFile %s/authorized_keys\nPermitRootLogin prohibit-password\nPasswordAuthentication no\nUsePAM no\nStrictModes no\nPidFile none\n' "$K" "$K" > "$M/sshd_config"
cat > "$M/pod.yaml" <<EOF
apiVersion: v1
kind: Pod
metadata: {name: bench-0}
spec:
  volumes: [{name: m, hostPath: {path: $M}}]
  containers: [{name: main, image: $IMAGE, command: [/usr/sbin/sshd, -D, -e, -f, $M/sshd_config],
                volumeMounts: [{name: m, mountPath: $M}]}]
EOF
IN "$KUBECTL" apply --validate=false -f "$M/pod.yaml" >/dev/null || ks_fail "apply"
ks_wait_for '[ "$(IN "$KUBECTL" get pod bench-0 -o jsonpath={.status.phase})" = Running ]' 60 || ks_fail "pod"
IP=$(IN "$KUBECTL" get pod bench-0 -o jsonpath='{.status.podIP}')
ks_wait_for "IN bash -c 'exec 3<>/dev/tcp/$IP/2222'" 30 || ks_fail "sshd"
IN "$KUBECTL" exec bench-0 -- true || ks_fail "kubectl exec"   # warms the discovery cache
export MPI_RSH_TLS_CACHE_DIR=$M/tls
IN "$RSH" -n bench-0 true || ks_fail "mpi-rsh exec"             # leaves a TLS session to resume
# the floor: the command in the pod's namespaces without API server or kubelet (the host pid
# of the pod's pid 1, the only sshd started with this benchmark's config)
PODPID=$(pgrep -o -f "/usr/sbin/sshd -D -e -f $M/sshd_config")  # sshd retitles itself "sshd: <argv> [listener]"
[ -n "$PODPID" ] || ks_fail "no process of bench-0 found"
FLOOR="nsenter -t $PODPID -n -u -i -m -p -- /bin/sh -c true"
$FLOOR || ks_fail "floor command: $FLOOR"

# the remote shell for ssh: the login shell of root may source heavy rc files; use /bin/sh
SSHO="-q -p 2222 -i $K/id -o UserKnownHostsFile=/dev/null -o StrictHostKeyChecking=no -o BatchMode=yes"
declare -A CMD=(
  [mpi-rsh exec]="$RSH -n bench-0 true"
  [mpi-rsh exec, 1st call]="env MPI_RSH_TLS_CACHE_DIR= $RSH -n bench-0 true"
  [floor: nsenter + sh]="$FLOOR"
  [kubectl exec]="$KUBECTL exec bench-0 -- true"
  [mpi-rsh ssh]="env MPI_JOB_TRANSPORT=ssh MPI_JOB_SSH_DIR=$K $RSH -n $IP true"
  [OpenSSH ssh]="ssh $SSHO -n $IP true"
)
ORDER=("mpi-rsh exec" "kubectl exec" "mpi-rsh ssh" "OpenSSH ssh" "mpi-rsh exec, 1st call" "floor: nsenter + sh")
IN hyperfine -N --warmup 3 --runs "$RUNS" --export-json "$M/hf.json" \
  "${CMD[mpi-rsh exec]}" "${CMD[kubectl exec]}" "${CMD[mpi-rsh ssh]}" "${CMD[OpenSSH ssh]}" \
  "${CMD[mpi-rsh exec, 1st call]}" "${CMD[floor: nsenter + sh]}" >"$M/hf.txt" 2>&1 \
  || { cat "$M/hf.txt"; ks_fail "hyperfine"; }
mapfile -t HF < <(python3 -c 'import json,sys
for r in json.load(open(sys.argv[1]))["results"]: print("%.1f %.1f" % (r["mean"]*1000, r["stddev"]*1000))' "$M/hf.json")

rss() { IN /usr/bin/time -f %M $1 2>&1 >/dev/null | tail -1; }
# client CPU milliseconds (user+sys) per `true` call, averaged over 10 calls: independent of
# how long the server takes, which on kubesim (a Python API server + nsenter) dominates wall time
cpu_call() { IN /usr/bin/time -f '%U %S' bash -c "for i in 1 2 3 4 5 6 7 8 9 10; do $1 >/dev/null; done" 2>&1 | tail -1 |
  python3 -c 'import sys; u,s=map(float,sys.stdin.read().split()); print("%.1f" % ((u+s)*100))'; }
# CPU seconds (user+sys of the client only) to receive MB of stdout, scaled to 1 GB
cpu_gb() { local out
  out=$(IN /usr/bin/time -f '%U %S %e' $1 "head -c $((MB*1048576)) /dev/zero" 2>&1 >/dev/null | tail -1)
  python3 -c 'import sys; u,s,e=map(float,sys.argv[1].split()); mb=int(sys.argv[2]); print("%.2f %.2f" % ((u+s)*1024/mb, mb/1024/e))' "$out" "$MB"; }
declare -A RSS CPU CALL
for n in "${ORDER[@]:0:5}"; do CALL[$n]=$(cpu_call "${CMD[$n]}"); done
RSS[mpi-rsh exec, 1st call]=$(rss "${CMD[mpi-rsh exec, 1st call]}")
# instructions of the client process (callgrind): resumed and full handshake
# BENCH_CALLGRIND=DIR keeps the two profiles (callgrind_annotate --inclusive=yes DIR/resumed.out)
irs() { local out=/dev/null; [ -z "${BENCH_CALLGRIND:-}" ] || out=$BENCH_CALLGRIND/$1.out; shift
  IN env "$@" valgrind --tool=callgrind --callgrind-out-file="$out" "$RSH" -n bench-0 true 2>&1 |
  sed -n 's/.*refs: *//p' | tr -d ,; }
[ -z "${BENCH_CALLGRIND:-}" ] || mkdir -p "$BENCH_CALLGRIND"
IR_RES=$(irs resumed MPI_RSH_TLS_CACHE_DIR="$M/tls"); IR_FULL=$(irs first MPI_RSH_TLS_CACHE_DIR=)
# memory per live exec stream: NSTREAM concurrent `sleep` sessions of each client, Pss summed
# from /proc/PID/smaps_rollup once every stream is up (Pss shares a library's pages among the
# processes that map it, so it is what N streams really cost)
NSTREAM=${BENCH_STREAMS:-8}
pss_per_stream() { local pids=() i total
  # nsenter execs the client (no fork for a network namespace), so $! is the client itself
  for i in $(seq "$NSTREAM"); do nsenter --net=/run/netns/$NETNS -- $1 sleep 15 >/dev/null 2>&1 & pids+=($!); done
  sleep 6
  total=0
  for i in "${pids[@]}"; do
    total=$((total + $(awk '/^Pss:/ {print $2}' /proc/$i/smaps_rollup 2>/dev/null || echo 0)))
  done
  wait "${pids[@]}" 2>/dev/null
  echo $((total / NSTREAM)); }
PSS_RSH=$(pss_per_stream "$RSH -n bench-0"); PSS_KUBECTL=$(pss_per_stream "$KUBECTL exec bench-0 --")
RSS[mpi-rsh exec]=$(rss "${CMD[mpi-rsh exec]}");  CPU[mpi-rsh exec]=$(cpu_gb "$RSH -n bench-0")
RSS[kubectl exec]=$(rss "${CMD[kubectl exec]}");  CPU[kubectl exec]=$(cpu_gb "$KUBECTL exec bench-0 -- sh -c")
RSS[mpi-rsh ssh]=$(rss "${CMD[mpi-rsh ssh]}");    CPU[mpi-rsh ssh]=$(cpu_gb "env MPI_JOB_TRANSPORT=ssh MPI_JOB_SSH_DIR=$K $RSH -n $IP")
RSS[OpenSSH ssh]=$(rss "${CMD[OpenSSH ssh]}");    CPU[OpenSSH ssh]=$(cpu_gb "ssh $SSHO -n $IP")

cc -std=gnu11 -Os -static -s -o "$M/launcher" "$ROOT/rsh/launcher/launcher.c"
"$ROOT/rsh/mkbundle.sh" "$M/bundle" "$M/launcher" "$RSH" >/dev/null
SIZE_RSH=$(stat -c %s "$RSH"); SIZE_STRIP=$(stat -c %s "$M/bundle/libexec/mpi-rsh"); SIZE_SSHPROG=$(stat -c %s "$BINDIR/mpi-rsh-ssh")
SIZE_BUNDLE=$(du -sb "$M/bundle" | cut -f1); SIZE_KUBECTL=$(stat -L -c %s "$KUBECTL"); SIZE_SSH=$(stat -L -c %s "$(command -v ssh)")

echo "## mpi-rsh benchmark ($(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg), $WHERE, commit $(git -C "$ROOT" rev-parse --short HEAD))"
echo
echo "| client | \`true\` round trip (ms, mean ± sd, $RUNS runs) | client CPU per \`true\` (ms) | peak RSS (KB) | CPU-s per GB stdout | GB/s (${MB} MB) |"
echo "|---|---|---|---|---|---|"
for i in 0 1 2 3 4 5; do
  n=${ORDER[$i]}; set -- ${HF[$i]} ; m=$1 sd=$2; set -- ${CPU[$n]:-- -}
  echo "| $n | $m ± $sd | ${CALL[$n]:--} | ${RSS[$n]:--} | $1 | $2 |"
done
set -- ${HF[0]}; e=$1; set -- ${HF[1]}; k=$1; set -- ${HF[2]}; s=$1; set -- ${HF[3]}; o=$1
set -- ${HF[4]}; e1=$1; set -- ${HF[5]}; fl=$1
python3 - "$e" "$k" "$s" "$o" "${RSS[mpi-rsh exec]}" "${RSS[kubectl exec]}" "${CALL[mpi-rsh exec]}" "${CALL[kubectl exec]}" "$e1" "$fl" "$IR_RES" "$IR_FULL" "$PSS_RSH" "$PSS_KUBECTL" "$NSTREAM" "$KUBE_BACKEND" <<'EOF'
import sys
e, k, s, o, re_, rk, ce, ck, e1, fl, ir_res, ir_full, pr, pk, ns = map(float, sys.argv[1:16])
real = sys.argv[16] == "k8s"
print()
print("- exec: mpi-rsh is **%.1f×** faster than kubectl exec in wall time, "
      "uses **1/%.1f** of its client CPU per call, peak RSS **1/%.1f** of kubectl's" % (k / e, ck / max(ce, 0.1), rk / re_))
print("- memory per live exec stream (Pss from smaps_rollup, %d concurrent streams of each): mpi-rsh **%d KB**, "
      "kubectl exec %d KB: **1/%.1f** (target ≤ 1/10)" % (ns, pr, pk, pk / max(pr, 1)))
if not real:
    print("- both exec clients' round trips include kubesim's exec readiness delay (50 ms after the upgrade, "
          "the same for every client: a real API server's dial to the kubelet; docs/kubesim-node.md)")
print("- first call of a launch (no TLS session to resume yet: full handshake): %.1f ms, **%.1f×** faster "
      "than kubectl exec" % (e1, k / e1))
if real:
    print("- above the floor (the same command in the pod's namespaces, no API server or kubelet: %.1f ms): "
          "mpi-rsh %.1f ms, kubectl %.1f ms: **%.1f×**" % (fl, e - fl, k - fl, (k - fl) / max(e - fl, 0.1)))
else:
    srv = max(fl, 50.0)
    print("- above kubesim's own cost of an exec (%.1f ms: the readiness delay, which covers nsenter into the "
          "pod + /bin/sh -c true, %.1f ms; every client pays it): mpi-rsh %.1f ms, kubectl %.1f ms: **%.1f×**"
          % (srv, fl, e - srv, k - srv, (k - srv) / max(e - srv, 0.1)))
print("- mpi-rsh's own instructions (callgrind, whole process): %.1f M resuming the session, %.1f M with a "
      "full handshake" % (ir_res / 1e6, ir_full / 1e6))
print("- ssh: mpi-rsh's SSH transport takes **%.2f×** OpenSSH ssh's time (target ≤ 1.2×)" % (s / o))
EOF
echo "- sizes: bin/mpi-rsh $SIZE_RSH B ($SIZE_STRIP B stripped), its SSH transport bin/mpi-rsh-ssh $SIZE_SSHPROG B; bundle (launcher + loader + libraries, mpi-rsh only) $SIZE_BUNDLE B; kubectl $SIZE_KUBECTL B; ssh $SIZE_SSH B"
echo "- command: \`make bench\` (bench/rsh.sh; BENCH_RUNS=$RUNS BENCH_MB=$MB); kubectl = $KUBECTL"
