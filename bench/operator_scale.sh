#!/usr/bin/env bash
# bench/operator_scale.sh - the operator with one large MPIJob (issue #18): one v2beta1 MPIJob
# of N workers (default 256; slotsPerWorker 1; each worker runs `sleep`), on kubesim with
# several nodes (BENCH_NODES, default 4) whose pods run as real processes. The launcher
# carries a nodeSelector no node has, so it stays Pending (Blocked) and no MPI runs: what is
# measured is the operator creating and following N worker pods. Reported in one run:
#   - time from the start of `kubectl create` to all N worker pods created, and to all N
#     Running (seen by a `kubectl get --watch` opened before the create);
#   - the operator's writes for the job from the create until all workers ran and 5 s passed:
#     MPIJob status writes (PUT .../status), Events posted, pod creates, ConfigMap patches
#     (counted in kubesim's request log, apiserver.log, by the operator's user);
#   - the operator's syncs (mpi_operator_reconcile_duration_seconds_count) and CPU seconds.
# Usage: bench/operator_scale.sh [N]. Needs root (kubesim network namespaces). Bounded: every
# wait has a deadline (BENCH_TIMEOUT, default 600 s); the trap stops the operator and kubesim.
# Env: BENCH_NODES, BENCH_TIMEOUT, BENCH_KEEP=1 (keep the temp dir), BENCH_PORT (metrics, 18192).
set -euo pipefail
ROOT=${ROOT:-$(cd "$(dirname "$0")/.." && pwd)}
BINDIR=${BINDIR:-$ROOT/bin}
KS=$ROOT/tests/kubesim/kubesim
N=${1:-${BENCH_N:-256}}
NODES=${BENCH_NODES:-4}
LIMIT=${BENCH_TIMEOUT:-600}
PORT=${BENCH_PORT:-18192}
[ "$(id -u)" -eq 0 ] || { echo "bench/operator_scale.sh: needs root (kubesim network namespaces)"; exit 0; }
[ -x "$BINDIR/mpi-operator" ] || { echo "bench/operator_scale.sh: no $BINDIR/mpi-operator (make)"; exit 1; }
D=$(mktemp -d "${BENCH_DIR_PREFIX:-/tmp/operator-scale}-XXXXXX")
OP= W1=
cleanup() {
  [ -n "$W1" ] && kill "$W1" 2>/dev/null || true
  [ -n "$OP" ] && { kill "$OP" 2>/dev/null && sleep 1; kill -KILL "$OP" 2>/dev/null || true; }
  timeout 120 "$KS" down --dir "$D" >/dev/null 2>&1 || true
  if [ "${BENCH_KEEP:-0}" = 1 ]; then echo "kept $D"; else rm -rf "$D"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
deadline=$(( $(date +%s) + LIMIT ))
timeout 60 "$KS" up --dir "$D" --nodes "$NODES" >/dev/null
k() { timeout -k 5 120 "$KS" run --dir "$D" -- kubectl "$@"; }
k create -f "$ROOT/manifests/base/namespace.yaml" -f "$ROOT/manifests/base/crd.yaml" -f "$ROOT/manifests/base/rbac.yaml" >/dev/null
until k get mpijobs >/dev/null 2>&1; do [ "$(date +%s)" -lt $deadline ] || exit 1; sleep 0.2; done
cat >"$D/job.yaml" <<EOF
apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata: {name: big, namespace: default}
spec:
  slotsPerWorker: 1
  mpiReplicaSpecs:
    Launcher:
      replicas: 1
      template:
        spec:
          nodeSelector: {bench: unschedulable}
          containers: [{name: l, image: mpik8s/openmpi, command: [mpirun, hostname]}]
    Worker:
      replicas: $N
      template:
        spec:
          containers: [{name: w, image: busybox, command: [sleep, "3600"]}]
EOF
# writes the epoch ns at which N distinct worker names were seen (with WANT among the words)
cat >"$D/count.py" <<'PY'
import sys, time
n, pre = int(sys.argv[1]), sys.argv[2]
created = set(); running = set(); t = {}
for line in sys.stdin:
    w = line.split()
    if not w or "worker" not in w[0]:
        continue
    created.add(w[0])
    if "Running" in w[1:]:
        running.add(w[0])
    for what, s in (("created", created), ("running", running)):
        if what not in t and len(s) >= n:
            t[what] = time.time_ns()
            open(pre + what, "w").write("%d\n" % t[what])
    if len(t) == 2:
        break
PY
setsid "$KS" run --dir "$D" -- "$BINDIR/mpi-operator" --kubeconfig "$D/kubeconfig" --leader-elect=false \
  --monitoring-port "$PORT" >"$D/operator.log" 2>&1 &
OP=$!
until "$KS" run --dir "$D" -- curl -sf -m 5 "http://127.0.0.1:$PORT/readyz" >/dev/null 2>&1; do
  [ "$(date +%s)" -lt $deadline ] || { echo "operator not ready"; exit 1; }; sleep 0.2
done
( k get pods -l training.kubeflow.org/job-name=big --watch -o jsonpath='{.metadata.name}{" "}{.status.phase}{"\n"}' \
    2>/dev/null | python3 "$D/count.py" "$N" "$D/t_" ) &
W1=$!
sleep 3 # the watch is open
cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }
tck=$(getconf CLK_TCK)
op_cpu0=$(cpu "$OP"); req0=$(wc -l <"$D/apiserver.log")
t0=$(date +%s%N)
k create -f "$D/job.yaml" >/dev/null
for f in t_created t_running; do
  until [ -s "$D/$f" ]; do
    [ "$(date +%s)" -lt $deadline ] || { echo "bench/operator_scale.sh: $f not reached within ${LIMIT}s"; exit 1; }
    sleep 0.2
  done
done
sleep 5 # writes that follow the last worker's Running
op_cpu=$(( $(cpu "$OP") - op_cpu0 ))
tail -n +"$((req0 + 1))" "$D/apiserver.log" >"$D/requests.log"
status_writes=$(grep -cE "PUT /apis/kubeflow.org/v[0-9a-z]+/namespaces/default/mpijobs/big/status " "$D/requests.log" || true)
events=$(grep -cE "POST /api/v1/namespaces/default/events " "$D/requests.log" || true)
pod_creates=$(grep -cE "POST /api/v1/namespaces/default/pods " "$D/requests.log" || true)
cm_patches=$(grep -cE "PATCH /api/v1/namespaces/default/configmaps/big-config " "$D/requests.log" || true)
m=$("$KS" run --dir "$D" -- curl -sf -m 30 "http://127.0.0.1:$PORT/metrics")
syncs=$(echo "$m" | awk '$1 == "mpi_operator_reconcile_duration_seconds_count" {print $2}')
ms() { echo $(( ($(cat "$D/$1") - t0) / 1000000 )); }
# from kubesim's log: the MPIJob's POST to the last worker pod's POST (the API server's clock)
logms() { awk '{split($1, t, ":"); printf "%d\n", (t[1] * 3600 + t[2] * 60 + t[3]) * 1000}' <<<"$1"; }
first=$(grep -m1 -E "POST /apis/kubeflow.org/v2beta1/namespaces/default/mpijobs[? ]" "$D/requests.log")
last=$(grep -E "POST /api/v1/namespaces/default/pods " "$D/requests.log" | tail -1)
api_created=$(( $(logms "$last") - $(logms "$first") ))
echo "(measured at load average $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores)"
printf '\n== bench/operator_scale.sh: one MPIJob, %d workers, %d kubesim nodes\n' "$N" "$NODES"
printf '%-58s %12s\n' "measure" "value"
printf '%-58s %9d ms\n' "MPIJob created -> last worker pod created (API server log)" "$api_created"
printf '%-58s %9d ms\n' "kubectl create -> all worker pods seen by a watch" "$(ms t_created)"
printf '%-58s %9d ms\n' "kubectl create -> all worker pods Running" "$(ms t_running)"
printf '%-58s %12s\n' "MPIJob status writes (PUT status)" "$status_writes"
printf '%-58s %12s\n' "Events posted" "$events"
printf '%-58s %12s\n' "pod creates (POST pods)" "$pod_creates"
printf '%-58s %12s\n' "ConfigMap patches" "$cm_patches"
printf '%-58s %12s\n' "syncs of the job" "$syncs"
printf '%-58s %12s\n' "operator CPU time (s)" "$(echo "scale=2; $op_cpu / $tck" | bc)"
