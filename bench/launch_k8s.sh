#!/usr/bin/env bash
# bench/launch_k8s.sh - the launch path on the real cluster (tests/k8s, issue 27 item 1): N
# one-slot worker pods (mpik8s/openmpi running mpi-sshd, so every way reaches the same pods),
# then for N = 4, 8, 16 and each way, `mpirun -np N hostname` from the cluster's network
# namespace (where a launcher pod's mpirun would reach the same API server and pod network):
#   nsenter  the floor: enter the container's namespaces directly (host pid from containerd's
#            `ctr tasks ls`): no API server, no kubelet, no CRI
#   crictl   the CRI floor: `crictl exec` straight to containerd's streaming server (only
#            when tests/k8s/build.sh crictl has built it): no API server, no kubelet
#   holder   ours: mpi-rsh under mpi-rsh-holder, as `mpi-agent run` starts mpirun (exec
#            API through the real kube-apiserver and kubelet, one held connection)
#   ssh      upstream v2beta1's way: OpenSSH's ssh to sshd in the workers (port 2222)
#   kubexec  the seed's v1alpha2 way: `kubectl exec` as the rsh agent (kubexec.sh)
# Each: ms until every rank has printed and until mpirun exits (median of BENCH_REPS runs, in
# the order above, interleaved), the CPU seconds of mpirun and its transport processes, the CPU
# seconds the API server and the kubelets (all nodes together) spent during the run, and the
# ratios of the last-rank time to the floor (nsenter) and to ours (holder). After the timed
# rounds, one more run per way whose ranks stay up 3 s (`hostname; sleep 3`): the Pss of the
# live transport processes (tsrun.py's TRANSPORTS) once every rank has printed, per stream (N).
# BENCH_NODES=3 spreads the workers over a 3-node cluster (`k8s up --nodes 3`; every pod
# requests BENCH_POD_CPU, default 10m, so that the scheduler places N of them on 2 shared cores).
# The medians also go to bench/results/launch_k8s.tsv (bench/results_lib.bash; bench/plot.sh
# draws docs/img/launch_k8s.png from it).
# Usage: bench/launch_k8s.sh [N...]   (default 4 8 16; BENCH_REPS=3; BENCH_PATHS="nsenter
# crictl holder ssh kubexec"; BENCH_NODES=1). Needs root and the real cluster's components (tests/k8s/build.sh)
# and images (make docker-images). One cluster, torn down on exit, even after a failure.
set -euo pipefail
ROOT=${ROOT:-$(cd "$(dirname "$0")/.." && pwd)}
BINDIR=${BINDIR:-$ROOT/bin}
KS=$ROOT/tests/k8s/k8s
NS_LIST=${*:-4 8 16}
REPS=${BENCH_REPS:-3}
PATHS=${BENCH_PATHS:-nsenter crictl holder ssh kubexec}
NODES=${BENCH_NODES:-1}
POD_CPU=${BENCH_POD_CPU:-10m}
export OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,tcp OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
[ "$(id -u)" -eq 0 ] || { echo "bench/launch_k8s.sh: needs root (the real cluster's namespaces)"; exit 0; }
docker image inspect mpik8s/openmpi:latest >/dev/null 2>&1 ||
  { echo "bench/launch_k8s.sh: mpik8s/openmpi:latest missing (make docker-images)"; exit 0; }
[ -x "$("$ROOT/tests/k8s/build.sh" --bindir kube)/kube-apiserver" ] ||
  { echo "bench/launch_k8s.sh: the real cluster is not built (tests/k8s/build.sh)"; exit 0; }
CTR=$("$ROOT/tests/k8s/build.sh" --bindir containerd)/ctr
CRICTL=$("$ROOT/tests/k8s/build.sh" --bindir crictl)/crictl
[ -x "$CRICTL" ] || { PATHS=${PATHS//crictl/}; echo "(no crictl: tests/k8s/build.sh crictl builds it; its row is left out)"; }
D=$(mktemp -d /tmp/launch-k8s-XXXXXX)
cleanup() {
  mkdir -p "$ROOT/build/bench-logs/launch_k8s" && cp "$D"/out-* "$ROOT/build/bench-logs/launch_k8s/" 2>/dev/null
  timeout 180 "$KS" down --dir "$D" >/dev/null 2>&1 || true; rm -rf "$D"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
t0=$SECONDS
timeout 300 "$KS" up --dir "$D" --nodes "$NODES" >"$D/up.log" 2>&1 || { tail -n 20 "$D/up.log"; exit 1; }
timeout 300 "$KS" load --dir "$D" mpik8s/openmpi:latest >>"$D/up.log" 2>&1 || { tail -n 20 "$D/up.log"; exit 1; }
echo "== the real cluster up ($NODES node(s)), image loaded in $((SECONDS - t0)) s (load $(cut -d' ' -f1-3 /proc/loadavg))"
ksrun() { timeout -k 5 "${KT:-600}" "$KS" run --dir "$D" -- "$@"; }
k() { ksrun kubectl "$@"; }
med() { sort -n | awk '{a[NR]=$1} END {if (NR==0) print "nan"; else if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }

. "$ROOT/bench/launch_lib.bash"
bench_launch_tools
ssh-keygen -q -t ed25519 -N '' -f "$D/id" -C launch-k8s
k create secret generic sc-ssh --from-file=ssh-privatekey="$D/id" --from-file=ssh-publickey="$D/id.pub" >/dev/null
cat > "$D/ssh.sh" <<SH
#!/bin/sh
# upstream's way: OpenSSH to the worker's sshd (mpi-sshd, port 2222), the pod's IP
exec ssh -p 2222 -i $D/id -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR \
  -o BatchMode=yes "\$@"
SH
cat > "$D/crictl.sh" <<SH
#!/bin/sh
# the CRI floor: crictl exec to its node's containerd (container id from the pod's status), from
# that node's network namespace (containerd's streaming server listens on the node's loopback)
pod=\$1; shift
set -- "\$*" \$(awk -v p="\${pod%%.*}" '\$1 == p {print \$2, \$4, \$5}' $D/podmap)
exec nsenter --net=/proc/\$4/ns/net -- $CRICTL --runtime-endpoint "unix://\$3" exec "\$2" /bin/sh -c "\$1"
SH
chmod +x "$D/ssh.sh" "$D/crictl.sh"

maxn=0; for n in $NS_LIST; do [ "$n" -gt $maxn ] && maxn=$n; done
t0=$SECONDS
for ((i = 0; i < maxn; i++)); do cat <<YAML
apiVersion: v1
kind: Pod
metadata: {name: sc-worker-$i, labels: {mpi_job_name: sc}}
spec:
  terminationGracePeriodSeconds: 1
  volumes: [{name: ssh, secret: {secretName: sc-ssh}}]
  containers:
  - name: worker
    image: mpik8s/openmpi:latest
    command: [mpi-sshd]
    resources: {requests: {cpu: $POD_CPU, memory: 16Mi}}
    env: [{name: MPI_JOB_SSH_DIR, value: /etc/mpi-ssh}]
    volumeMounts: [{name: ssh, mountPath: /etc/mpi-ssh}]
---
YAML
done > "$D/pods.yaml"
k create -f "$D/pods.yaml" >/dev/null
KT=1200 k wait --for=condition=Ready pod -l mpi_job_name=sc --timeout=1100s >/dev/null ||
  { k get pods -o wide; echo "not all $maxn pods Ready within 1100 s"; exit 1; }
echo "== $maxn worker pods Ready in $((SECONDS - t0)) s, per node: $(k get pods -l mpi_job_name=sc \
  -o 'jsonpath={range .items[*]}{.spec.nodeName}{"\n"}{end}' | sort | uniq -c | awk '{printf "%s %s; ", $2, $1}')"
# pod -> container id and its node's containerd socket (crictl), host pid of its main process (nsenter)
k get pods -l mpi_job_name=sc -o 'jsonpath={range .items[*]}{.metadata.name} {.status.containerStatuses[0].containerID}{"\n"}{end}' |
  sed 's#containerd://##' >"$D/podcids"
: >"$D/tasks"
for ((i = 1; i <= NODES; i++)); do
  sock=$D/containerd/containerd.sock cpid=$(cat "$D/pids/containerd.pid")
  [ "$i" = 1 ] || { sock=$D/nodes/k8s-node-$i/containerd/containerd.sock cpid=$(cat "$D/pids/containerd.$i.pid"); }
  "$CTR" --address "$sock" -n k8s.io tasks ls | awk -v s="$sock" -v c="$cpid" 'NR > 1 {print $1, $2, s, c}' >>"$D/tasks"
done
# POD CONTAINER-ID HOST-PID CONTAINERD-SOCKET CONTAINERD-PID (its node's network namespace)
awk 'NR == FNR {pid[$1] = $2; sock[$1] = $3; cp[$1] = $4; next} ($2 in pid) {print $1, $2, pid[$2], sock[$2], cp[$2]}' \
  "$D/tasks" "$D/podcids" >"$D/podmap"
awk '{print $1, $3}' "$D/podmap" >"$D/podpids"
[ "$(wc -l <"$D/podpids")" -eq "$maxn" ] || { echo "only $(wc -l <"$D/podpids") of $maxn pods mapped to host pids"; exit 1; }
# comp_cpu: CPU seconds so far of the API server and of the kubelets (every node), "API KUBELETS"
comp_cpu() {
  local f api=0 kl=0 t
  for f in "$D"/pids/apiserver.pid "$D"/pids/kubelet*.pid; do
    t=$(awk '{print $14 + $15}' "/proc/$(cat "$f")/stat" 2>/dev/null) || t=0
    case $f in */apiserver.pid) api=$((api + t)) ;; *) kl=$((kl + t)) ;; esac
  done
  awk -v a="$api" -v k="$kl" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.2f %.2f", a / hz, k / hz }'
}
k get pods -l mpi_job_name=sc -o 'jsonpath={range .items[*]}{.metadata.name} {.status.podIP}{"\n"}{end}' >"$D/podips"

agent_of() {
  case $1 in nsenter) echo "$D/nsenter.sh" ;; crictl) echo "$D/crictl.sh" ;; holder) echo "$BINDIR/mpi-rsh" ;;
    ssh) echo "$D/ssh.sh" ;; kubexec) echo "$D/kubexec.sh" ;; esac
}
wrap_of() { case $1 in holder) echo "$BINDIR/mpi-rsh-holder --" ;; *) echo env ;; esac; }
# hostfile N PATH: pod names (every exec way) or pod IPs (ssh: sshd is reached over the pod network)
hostfile() {
  head -n "$1" "$D/podips" | sort -V | while read -r pod ip; do
    if [ "$2" = ssh ]; then echo "$ip slots=1"; else echo "$pod slots=1"; fi
  done >"$D/hf-$2-$1"
}
declare -A RES PSS
# launch WAY N RUN CMD...: mpirun -np N CMD through WAY, timed by tsrun.py (its output line)
launch() {
  local path=$1 n=$2 r=$3; shift 3
  local MA=(--hostfile "$D/hf-$path-$n" -np "$n" --map-by node --bind-to none -mca plm_rsh_agent "$(agent_of "$path") : false"
    -mca plm_rsh_no_tree_spawn 1 -mca orte_leave_session_attached 1 -mca plm_rsh_num_concurrent "$n"
    -mca oob_tcp_listen_mode listen_thread)
  # shellcheck disable=SC2046
  TSRUN_LOG=$D/out-$path-$n-$r MPI_JOB_NAMESPACE=default MPI_JOB_WORKER_CONTAINER=worker ksrun \
    python3 "$D/tsrun.py" timeout 300 $(wrap_of "$path") mpirun "${MA[@]}" "$@" 2>/dev/null || echo "nan nan 0 1 nan nan 0"
}
for n in $NS_LIST; do
  for path in $PATHS; do hostfile "$n" "$path"; done
  for ((r = 1; r <= REPS; r++)); do
    for path in $PATHS; do
      c0=$(comp_cpu)
      out=$(launch "$path" "$n" "$r" hostname)
      c1=$(comp_cpu)
      set -- $out
      if [ "$4" != 0 ] || [ "$3" -lt "$n" ]; then
        echo "   N=$n $path run $r: mpirun failed (rc $4, $3 lines); its last lines:"; tail -n 8 "$D/out-$path-$n-$r" | sed 's/^/     | /'
        continue
      fi
      # shellcheck disable=SC2086
      comp=$(echo $c0 $c1 | awk '{printf "%.2f %.2f", $3 - $1, $4 - $2}')
      RES[$path,$n]+="$1 $2 $3 $4 $5 $comp"$'\n'
      echo "   N=$n $path run $r: last rank $1 ms, exit $2 ms, cpu $5 s, API server / kubelets cpu ${comp/ / \/ } s"
    done
  done
  # the live streams' memory: ranks that stay up 3 s, the transport's Pss once all have printed
  for path in $PATHS; do
    # shellcheck disable=SC2046
    set -- $(TSRUN_PSS_AT=$n launch "$path" "$n" pss sh -c 'hostname; sleep 3')
    if [ "$4" = 0 ] && [ "$3" -ge "$n" ] && [ "$7" -gt 0 ]; then
      PSS[$path,$n]=$(awk -v p="$6" -v n="$n" 'BEGIN { printf "%.0f", p / n }')
      echo "   N=$n $path: $7 transport processes, Pss $6 KiB: ${PSS[$path,$n]} KiB per stream"
    else
      echo "   N=$n $path: no transport process to measure (rc $4, $3 lines, $7 processes)"
    fi
  done
done

echo
echo "== summary: mpirun -np N hostname, medians of $REPS (ms to the last rank's line / to mpirun's exit); x-floor, x-cri and x-ours: last-rank ratios to nsenter, crictl and holder; api-s, kubelet-s: CPU seconds during the launch; pss: KiB per live stream"
printf '   %-4s %-8s %10s %10s %8s %8s %8s %8s %8s %9s %8s\n' N way last-rank exit cpu-s x-floor x-cri x-ours api-s kubelet-s pss
col() { printf '%s' "${RES[$1,$2]:-}" | awk -v c="$3" 'NF {print $c}' | med; }
# the same medians for bench/plot.sh (bench/results/launch_k8s.tsv; launch_k8s-nodes3.tsv on 3 nodes)
. "$ROOT/bench/results_lib.bash"
tsv=launch_k8s
[ "$NODES" = 1 ] || tsv=launch_k8s-nodes$NODES
bench_tsv_begin "$tsv" "bench/launch_k8s.sh: mpirun -np N hostname on the real cluster ($NODES node(s)), medians of $REPS interleaved runs (nsenter and crictl: the floors; holder: ours; ssh: upstream v2beta1; kubexec: the seed)" \
  "BENCH_REPS=$REPS BENCH_NODES=$NODES BENCH_PATHS=\"$PATHS\" bench/launch_k8s.sh $NS_LIST" N way last_rank_ms exit_ms cpu_s apiserver_cpu_s kubelet_cpu_s pss_kib_per_stream
for n in $NS_LIST; do
  f=$(col nsenter "$n" 1); c=$(col crictl "$n" 1); o=$(col holder "$n" 1)
  for path in $PATHS; do
    l=$(col "$path" "$n" 1)
    ratio() { awk -v a="$l" -v b="$1" 'BEGIN { if (a != "nan" && b != "nan" && b + 0 > 0) printf "%.2f", a / b; else print "-" }'; }
    printf '   %-4s %-8s %10s %10s %8s %8s %8s %8s %8s %9s %8s\n' "$n" "$path" "$l" "$(col "$path" "$n" 2)" "$(col "$path" "$n" 5)" \
      "$(ratio "$f")" "$(ratio "$c")" "$(ratio "$o")" "$(col "$path" "$n" 6)" "$(col "$path" "$n" 7)" "${PSS[$path,$n]:--}"
    bench_tsv_row "$n" "$path" "$l" "$(col "$path" "$n" 2)" "$(col "$path" "$n" 5)" "$(col "$path" "$n" 6)" "$(col "$path" "$n" 7)" "${PSS[$path,$n]:-nan}"
  done
done
echo "   (load at the end: $(cut -d' ' -f1-3 /proc/loadavg); logs: build/bench-logs/launch_k8s/)"
bench_tsv_end
