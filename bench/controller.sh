#!/usr/bin/env bash
# bench/controller.sh - the operator at scale on kubesim: N MPIJobs (default
# 1,000) of 2 workers created at once with one `kubectl create -f`. kubesim runs
# with `--set run_pods=false` and the pods carry a nodeSelector no node matches,
# so they stay Pending and kubesim runs
# no processes: what is measured is the operator (caches, queue, API calls).
# Reported in one run:
#   - the anchor: kubectl creating the N MPIJobs (wall time, kubectl peak RSS);
#   - time from the start of that create until every launcher Job exists
#     (and until every MPIJob has its Created condition), and the ratio to the anchor;
#   - reconcile latency p50/p90/p99 (one sync of one MPIJob incl. its API calls,
#     from the operator's mpi_operator_reconcile_duration_seconds summary);
#   - the operator's peak RSS: its own memory (RssAnon, sampled) and VmHWM, which
#     also counts the ~10 MB of shared library pages (libcrypto alone ~4 MB).
#     Targets: RSS <= 10 MB, p99 <= 50 ms.
# Usage: bench/controller.sh [N]. Needs root (kubesim network namespaces).
set -euo pipefail
ROOT=${ROOT:-$(cd "$(dirname "$0")/.." && pwd)}
BINDIR=${BINDIR:-$ROOT/bin}
KS=$ROOT/tests/kubesim/kubesim
N=${1:-${BENCH_N:-1000}}
[ "$(id -u)" -eq 0 ] || { echo "bench/controller.sh: needs root (kubesim network namespaces)"; exit 0; }
D=$(mktemp -d /tmp/controller-bench-XXXXXX)
OP=
cleanup() {
  [ -n "$OP" ] && kill "$OP" 2>/dev/null && sleep 1
  timeout 60 "$KS" down --dir "$D" >/dev/null 2>&1 || true
  rm -rf "$D"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
timeout 60 "$KS" up --dir "$D" --set run_pods=false >/dev/null
k() { timeout -k 5 600 "$KS" run --dir "$D" -- kubectl "$@"; }
k create -f "$ROOT/manifests/base/namespace.yaml" -f "$ROOT/manifests/base/crd.yaml" -f "$ROOT/manifests/base/rbac.yaml" >/dev/null
until k get mpijobs >/dev/null 2>&1; do sleep 0.2; done
python3 - "$N" >"$D/jobs.yaml" <<'PY'
import sys
n = int(sys.argv[1])
tmpl = """apiVersion: kubeflow.org/v1alpha2
kind: MPIJob
metadata: {name: bench-%(i)d}
spec:
  slotsPerWorker: 1
  cleanPodPolicy: Running
  mpiReplicaSpecs:
    Launcher:
      replicas: 1
      template:
        spec:
          nodeSelector: {bench: unschedulable}
          containers: [{name: l, image: mpik8s/openmpi, command: [mpirun, -np, "2", hostname]}]
    Worker:
      replicas: 2
      template:
        spec:
          nodeSelector: {bench: unschedulable}
          containers: [{name: w, image: mpik8s/openmpi}]
"""
print("---\n".join(tmpl % {"i": i} for i in range(n)))
PY
setsid "$KS" run --dir "$D" -- "$BINDIR/mpi-operator" --kubeconfig "$D/kubeconfig" --leader-elect=false \
  --monitoring-port 18190 >"$D/operator.log" 2>&1 &
OP=$!
until "$KS" run --dir "$D" -- curl -sf -m 5 http://127.0.0.1:18190/readyz >/dev/null 2>&1; do sleep 0.2; done
rss0=$(awk '/VmRSS/ {print $2}' /proc/$OP/status)
count_jobs() { k get jobs -l training.kubeflow.org/operator-name=mpi-operator --no-headers 2>/dev/null | wc -l; }
# peak anonymous RSS (heap, stacks: the operator's own memory; VmHWM adds shared library pages)
anon_peak=0
( while kill -0 $OP 2>/dev/null; do a=$(awk '/RssAnon/ {print $2}' /proc/$OP/status 2>/dev/null); echo "${a:-0}"; sleep 0.2; done ) \
  >"$D/anon.samples" 2>/dev/null &
SAMPLER=$!
t0=$(date +%s%N)
/usr/bin/time -f "%e %M" -o "$D/kubectl.time" "$KS" run --dir "$D" -- kubectl create -f "$D/jobs.yaml" >/dev/null
t_create=$(( ($(date +%s%N) - t0) / 1000000 ))
deadline=$(( $(date +%s) + 900 ))
while [ "$(count_jobs)" -lt "$N" ]; do
  [ "$(date +%s)" -lt $deadline ] || { echo "bench/controller.sh: launcher Jobs incomplete after 900 s"; exit 1; }
  sleep 0.5
done
t_jobs=$(( ($(date +%s%N) - t0) / 1000000 ))
created() { local n; n=$(k get mpijobs -o jsonpath='{range .items[*]}{.status.conditions[0].type}{"\n"}{end}' 2>/dev/null | grep -c '^Created$'); echo "${n:-0}"; }
while [ "$(created)" -lt "$N" ]; do
  [ "$(date +%s)" -lt $deadline ] || { echo "bench/controller.sh: Created conditions incomplete after 900 s"; exit 1; }
  sleep 0.5
done
t_created=$(( ($(date +%s%N) - t0) / 1000000 ))
sleep 2
m=$("$KS" run --dir "$D" -- curl -sf -m 30 http://127.0.0.1:18190/metrics)
q() { echo "$m" | awk -v q="$1" '$1 == "mpi_operator_reconcile_duration_seconds{quantile=\""q"\"}" {printf "%.1f", $2 * 1000}'; }
syncs=$(echo "$m" | awk '$1 == "mpi_operator_reconcile_duration_seconds_count" {print $2}')
hwm=$(awk '/VmHWM/ {print $2}' /proc/$OP/status)
kill $SAMPLER 2>/dev/null || true
anon_peak=$(sort -n "$D/anon.samples" | tail -1)
file_now=$(awk '/RssFile/ {print $2}' /proc/$OP/status)
read -r k_s k_rss <"$D/kubectl.time"
pods=$(k get pods --no-headers 2>/dev/null | wc -l || echo "?")
echo "(measured at load average $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores)"
printf '\n== bench/controller.sh: %d MPIJobs x 2 workers created at once (kubesim, pods kept Pending)\n' "$N"
printf '%-58s %12s\n' "measure" "value"
printf '%-58s %10d ms\n' "anchor: kubectl create -f (N MPIJobs), wall" "$t_create"
printf '%-58s %10d MB\n' "anchor: kubectl peak RSS" "$(( k_rss / 1024 ))"
printf '%-58s %10d ms\n' "every launcher Job exists (from the start of the create)" "$t_jobs"
printf '%-58s %10d ms\n' "every MPIJob has its Created condition" "$t_created"
printf '%-58s %12.2f\n' "ratio: launcher Jobs done / kubectl create done" "$(echo "$t_jobs / $t_create" | bc -l)"
printf '%-58s %10s ms\n' "reconcile latency p50" "$(q 0.5)"
printf '%-58s %10s ms\n' "reconcile latency p90" "$(q 0.9)"
printf '%-58s %10s ms   (target <= 50)\n' "reconcile latency p99 (last 8192 syncs)" "$(q 0.99)"
printf '%-58s %12s\n' "syncs" "$syncs"
printf '%-58s %10d MB   (target <= 10)\n' "operator peak anonymous RSS (heap + stacks, sampled 5/s)" "$(( (anon_peak + 512) / 1024 ))"
printf '%-58s %10d MB\n' "operator peak RSS incl. shared libraries (VmHWM)" "$(( (hwm + 512) / 1024 ))"
printf '%-58s %10d MB\n' "  of which shared library pages (RssFile, at the end)" "$(( (file_now + 512) / 1024 ))"
printf '%-58s %10d MB\n' "operator RSS before the jobs (idle, caches synced)" "$(( (rss0 + 512) / 1024 ))"
printf '%-58s %12s\n' "pods created (workers + launchers, Pending)" "$pods"
