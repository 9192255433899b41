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
#     both seen by `kubectl get --watch` streams opened before the create (no polling
#     of 1,000-object lists, which would load the API server being measured);
#   - reconcile latency p50/p90/p99 (one sync of one MPIJob incl. its API calls,
#     from the operator's mpi_operator_reconcile_duration_seconds summary);
#   - the operator's peak RSS: its own memory (RssAnon, sampled) and VmHWM, which
#     also counts the ~10 MB of shared library pages (libcrypto alone ~4 MB);
#   - CPU seconds used by the operator and by kubesim, and the API requests served;
#   - then the operator is restarted over the N existing jobs: time until it has synced
#     all of them, the latency of those syncs (nothing to change: no API call, so this
#     is the operator's own share of a sync), the requests it made, its peak RSS.
#     Targets: RSS <= 10 MB, p99 <= 50 ms.
# Usage: bench/controller.sh [N]. Needs root (kubesim network namespaces).
# Env: BENCH_N (N), BENCH_DIR_PREFIX (temp dir prefix, default /tmp/controller-bench),
# BENCH_THREADINESS (operator --threadiness, default: the operator's default),
# BENCH_KEEP=1 (keep the temp dir: operator.log, apiserver.log).
set -euo pipefail
ROOT=${ROOT:-$(cd "$(dirname "$0")/.." && pwd)}
BINDIR=${BINDIR:-$ROOT/bin}
KS=$ROOT/tests/kubesim/kubesim
N=${1:-${BENCH_N:-1000}}
[ "$(id -u)" -eq 0 ] || { echo "bench/controller.sh: needs root (kubesim network namespaces)"; exit 0; }
D=$(mktemp -d "${BENCH_DIR_PREFIX:-/tmp/controller-bench}-XXXXXX")
OP= OP2= SAMPLER= W1= W2=
cleanup() {
  for p in $W1 $W2 $SAMPLER; do kill "$p" 2>/dev/null || true; done
  for p in $OP $OP2; do kill "$p" 2>/dev/null && sleep 1; done
  timeout 60 "$KS" down --dir "$D" >/dev/null 2>&1 || true
  if [ "${BENCH_KEEP:-0}" = 1 ]; then echo "kept $D"; else rm -rf "$D"; fi
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
# counts distinct names on stdin lines "NAME [WORD...]" (those with WANT among the words
# when WANT is given) and writes the epoch ns at which the count reaches N to FILE
cat >"$D/count.py" <<'PY'
import sys, time
n, out, want = int(sys.argv[1]), sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else ""
seen = set()
for line in sys.stdin:
    w = line.split()
    if not w or (want and want not in w[1:]):
        continue
    seen.add(w[0])
    if len(seen) >= n:
        with open(out, "w") as f:
            f.write("%d\n" % time.time_ns())
        break
PY
THR=()
[ -n "${BENCH_THREADINESS:-}" ] && THR=(--threadiness "$BENCH_THREADINESS")
setsid "$KS" run --dir "$D" -- "$BINDIR/mpi-operator" --kubeconfig "$D/kubeconfig" --leader-elect=false \
  --monitoring-port 18190 "${THR[@]}" >"$D/operator.log" 2>&1 &
OP=$!
until "$KS" run --dir "$D" -- curl -sf -m 5 http://127.0.0.1:18190/readyz >/dev/null 2>&1; do sleep 0.2; done
rss0=$(awk '/VmRSS/ {print $2}' /proc/$OP/status)
anon0=$(awk '/RssAnon/ {print $2}' /proc/$OP/status)
# the watches: launcher Jobs by name; MPIJobs with their condition types
( k get jobs -l training.kubeflow.org/operator-name=mpi-operator --watch -o name 2>/dev/null |
  python3 "$D/count.py" "$N" "$D/t_jobs" ) &
W1=$!
( k get mpijobs --watch -o jsonpath='{.metadata.name}{" "}{.status.conditions[*].type}{"\n"}' 2>/dev/null |
  python3 "$D/count.py" "$N" "$D/t_created" Created ) &
W2=$!
sleep 3   # the watches are open (kubectl start-up)
# peak anonymous RSS (heap, stacks: the operator's own memory; VmHWM adds shared library pages)
( while kill -0 $OP 2>/dev/null; do a=$(awk '/RssAnon/ {print $2}' /proc/$OP/status 2>/dev/null); echo "${a:-0}"; sleep 0.2; done ) \
  >"$D/anon.samples" 2>/dev/null &
SAMPLER=$!
ks_pid=$(cat "$D/kubesim.pid")
cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }   # utime + stime, clock ticks
tck=$(getconf CLK_TCK)
op_cpu0=$(cpu "$OP"); ks_cpu0=$(cpu "$ks_pid"); req0=$(wc -l <"$D/apiserver.log")
t0=$(date +%s%N)
/usr/bin/time -f "%e %M" -o "$D/kubectl.time" "$KS" run --dir "$D" -- kubectl create -f "$D/jobs.yaml" >/dev/null
t_create=$(( ($(date +%s%N) - t0) / 1000000 ))
deadline=$(( $(date +%s) + 900 ))
for f in t_jobs t_created; do
  until [ -s "$D/$f" ]; do
    [ "$(date +%s)" -lt $deadline ] || { echo "bench/controller.sh: $f incomplete after 900 s"; exit 1; }
    sleep 0.2
  done
done
t_jobs=$(( ($(cat "$D/t_jobs") - t0) / 1000000 ))
t_created=$(( ($(cat "$D/t_created") - t0) / 1000000 ))
op_cpu=$(( $(cpu "$OP") - op_cpu0 )); ks_cpu=$(( $(cpu "$ks_pid") - ks_cpu0 ))
reqs=$(( $(wc -l <"$D/apiserver.log") - req0 ))
sleep 2
m=$("$KS" run --dir "$D" -- curl -sf -m 30 http://127.0.0.1:18190/metrics)
q() { echo "$m" | awk -v q="$1" '$1 == "mpi_operator_reconcile_duration_seconds{quantile=\""q"\"}" {printf "%.1f", $2 * 1000}'; }
syncs=$(echo "$m" | awk '$1 == "mpi_operator_reconcile_duration_seconds_count" {print $2}')
hwm=$(awk '/VmHWM/ {print $2}' /proc/$OP/status)
anon_idle=$(awk '/RssAnon/ {print $2}' /proc/$OP/status)
kill $SAMPLER 2>/dev/null || true
anon_peak=$(sort -n "$D/anon.samples" | tail -1)
file_now=$(awk '/RssFile/ {print $2}' /proc/$OP/status)
read -r k_s k_rss <"$D/kubectl.time"
pods=$(k get pods --no-headers 2>/dev/null | wc -l || echo "?")
# ---- restart over the N existing jobs
kill "$OP"; wait "$OP" 2>/dev/null || true; OP=
req1=$(wc -l <"$D/apiserver.log")
t1=$(date +%s%N)
setsid "$KS" run --dir "$D" -- "$BINDIR/mpi-operator" --kubeconfig "$D/kubeconfig" --leader-elect=false \
  --monitoring-port 18191 "${THR[@]}" >"$D/operator2.log" 2>&1 &
OP2=$!
m2=
until [ "$(echo "$m2" | awk '$1 == "mpi_operator_reconcile_duration_seconds_count" {print $2}')" -ge "$N" ] 2>/dev/null; do
  [ "$(date +%s)" -lt $deadline ] || { echo "bench/controller.sh: restarted operator did not sync $N jobs"; exit 1; }
  sleep 0.5
  m2=$("$KS" run --dir "$D" -- curl -sf -m 5 http://127.0.0.1:18191/metrics 2>/dev/null || true)
done
t_restart=$(( ($(date +%s%N) - t1) / 1000000 ))
sleep 2
m2=$("$KS" run --dir "$D" -- curl -sf -m 30 http://127.0.0.1:18191/metrics)
req_restart=$(( $(wc -l <"$D/apiserver.log") - req1 ))
hwm2=$(awk '/VmHWM/ {print $2}' /proc/$OP2/status)
anon2=$(awk '/RssAnon/ {print $2}' /proc/$OP2/status)
pss2=$(awk '/^Pss:/ {print $2}' /proc/$OP2/smaps_rollup 2>/dev/null || echo 0)
q2() { echo "$m2" | awk -v q="$1" '$1 == "mpi_operator_reconcile_duration_seconds{quantile=\""q"\"}" {printf "%.2f", $2 * 1000}'; }
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
mb() { echo "scale=1; $1 / 1024" | bc; }
printf '%-58s %10s MB   (target <= 10)\n' "operator peak anonymous RSS (heap + stacks, sampled 5/s)" "$(mb "$anon_peak")"
printf '%-58s %10s MB\n' "operator peak RSS incl. shared libraries (VmHWM)" "$(mb "$hwm")"
printf '%-58s %10s MB\n' "  of which shared library pages (RssFile, at the end)" "$(mb "$file_now")"
printf '%-58s %10s MB\n' "operator RSS before the jobs (idle, caches synced)" "$(mb "$rss0")"
printf '%-58s %10s MB\n' "operator anonymous RSS before the jobs" "$(mb "$anon0")"
printf '%-58s %10s MB\n' "operator anonymous RSS after the jobs (2 s idle)" "$(mb "$anon_idle")"
printf '%-58s %12s\n' "operator CPU time until Created (s)" "$(echo "scale=1; $op_cpu / $tck" | bc)"
printf '%-58s %12s\n' "kubesim CPU time until Created (s)" "$(echo "scale=1; $ks_cpu / $tck" | bc)"
printf '%-58s %12s\n' "API requests served until Created (all clients)" "$reqs"
printf '%-58s %12s\n' "pods created (workers + launchers, Pending)" "$pods"
printf '%-58s %10d ms\n' "restart over N jobs: until all synced (incl. start, lists)" "$t_restart"
printf '%-58s %10s ms\n' "  no-op reconcile latency p50" "$(q2 0.5)"
printf '%-58s %10s ms\n' "  no-op reconcile latency p99" "$(q2 0.99)"
printf '%-58s %12s\n' "  API requests in the restart (lists, watches, writes)" "$req_restart"
printf '%-58s %10s MB\n' "  operator anonymous RSS after syncing N jobs" "$(mb "$anon2")"
printf '%-58s %10s MB\n' "  operator peak RSS (VmHWM)" "$(mb "$hwm2")"
printf '%-58s %10s MB\n' "  operator PSS (shared pages split among their users)" "$(mb "$pss2")"
