#!/usr/bin/env bash
# bench/operator_scale.sh - the operator with one large MPIJob (issue #18): one v2beta1 MPIJob
# of N workers (default 256; slotsPerWorker 1; each worker runs `sleep`), on kubesim with
# several nodes (BENCH_NODES, default 4) whose pods run as real processes. The launcher
# carries a nodeSelector no node has, so it stays Pending (Blocked) and no MPI runs: what is
# measured is the operator creating and following N worker pods. Reported in one run:
#   - time from the MPIJob's creation to the last of the N worker pods created, and to the
#     last one Running (kubesim's log, the API server's clock);
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
OP=
cleanup() {
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
setsid "$KS" run --dir "$D" -- "$BINDIR/mpi-operator" --kubeconfig "$D/kubeconfig" --leader-elect=false \
  --monitoring-port "$PORT" >"$D/operator.log" 2>&1 &
OP=$!
until "$KS" run --dir "$D" -- curl -sf -m 5 "http://127.0.0.1:$PORT/readyz" >/dev/null 2>&1; do
  [ "$(date +%s)" -lt $deadline ] || { echo "operator not ready"; exit 1; }; sleep 0.2
done
cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }
tck=$(getconf CLK_TCK)
op_cpu0=$(cpu "$OP"); req0=$(wc -l <"$D/apiserver.log")
k create -f "$D/job.yaml" >/dev/null
# progress from kubesim's log (no kubectl watch: at N=256 on a loaded machine it lags by minutes)
count() { tail -n +"$((req0 + 1))" "$D/apiserver.log" | grep -cE "$1" || true; }
until [ "$(count "big-worker-[0-9]+: Pending -> Running")" -ge "$N" ]; do
  [ "$(date +%s)" -lt $deadline ] || { echo "bench/operator_scale.sh: not all $N workers Running within ${LIMIT}s"; exit 1; }
  sleep 1
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
# times from kubesim's log (the API server's clock): the MPIJob's POST, the last worker pod's
# POST, the last worker's Pending -> Running
logms() { awk '{split($1, t, ":"); printf "%d\n", (t[1] * 3600 + t[2] * 60 + t[3]) * 1000}' <<<"$1"; }
first=$(logms "$(grep -m1 -E "POST /apis/kubeflow.org/v2beta1/namespaces/default/mpijobs[? ]" "$D/requests.log")")
created=$(( $(logms "$(grep -E "POST /api/v1/namespaces/default/pods " "$D/requests.log" | tail -1)") - first ))
running=$(( $(logms "$(grep -E "big-worker-[0-9]+: Pending -> Running" "$D/requests.log" | tail -1)") - first ))
echo "(measured at load average $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores)"
printf '\n== bench/operator_scale.sh: one MPIJob, %d workers, %d kubesim nodes\n' "$N" "$NODES"
printf '%-58s %12s\n' "measure" "value"
printf '%-58s %9d ms\n' "MPIJob created -> last worker pod created" "$created"
printf '%-58s %9d ms\n' "MPIJob created -> last worker Running" "$running"
printf '%-58s %12s\n' "MPIJob status writes (PUT status)" "$status_writes"
printf '%-58s %12s\n' "Events posted" "$events"
printf '%-58s %12s\n' "pod creates (POST pods)" "$pod_creates"
printf '%-58s %12s\n' "ConfigMap patches" "$cm_patches"
printf '%-58s %12s\n' "syncs of the job" "$syncs"
printf '%-58s %12s\n' "operator CPU time (s)" "$(echo "scale=2; $op_cpu / $tck" | bc)"
