#!/usr/bin/env bash
# agent_wait: `mpi-agent init` waiting on the real watch API of kubesim, with
# worker pods whose status the test sets (bound to a node no kubelet runs):
# success right after the last worker turns Ready, fail-at-once on a restart
# loop, timeout with per-worker reasons, workers found by label and by count,
# an API server restart during the wait, and the termination message.
# timeout: 180
set -euo pipefail
. "$(dirname "$0")/../lib/agent_jobs.sh"
ks_up
export MPI_AGENT_TERMINATION_LOG=$KS_DIR/term
hf=$KS_DIR/hostfile
printf 'w-worker-0.w-worker.default.svc slots=2\nw-worker-1:2\nw-launcher\n' > "$hf"
for i in 0 1; do ghost_pod w $i; echo ---; done | ks_kubectl create -f - >/dev/null

ks_log "1. wait succeeds as soon as the last worker is Ready"
ks_run "$AGENT" init --no-deliver --no-reach-check --hostfile "$hf" --timeout 30s \
  >"$KS_DIR/o1" 2>&1 & BG_PIDS+=($!); pid=$!
sleep 1.5
set_ready w-worker-0
sleep 1
kill -0 $pid || ks_fail "agent ended before the last worker was Ready"
set_ready w-worker-1; t0=$(now_ms)   # t0: the PATCH has been applied (kubectl returned)
wait $pid || { cat "$KS_DIR/o1" >&2; ks_fail "init did not succeed"; }
dt=$(( $(now_ms) - t0 ))
ks_log "   agent exited $dt ms after the last worker's Ready PATCH returned"
[ $dt -lt 5000 ] || ks_fail "agent took $dt ms to notice readiness"
expect_in "$KS_DIR/o1" "1/2 workers ready; waiting for w-worker-1" "2/2 workers ready"
expect_in "$KS_DIR/term" "init: 2 worker(s) ready and reachable" 'phases: {"workersReady":"' '"workersReachable":"'
# progress lines are rate-limited: never more than one per 2 s
n=$(grep -c 'workers ready; waiting' "$KS_DIR/o1"); [ "$n" -le 2 ] || ks_fail "$n progress lines in 2.5 s"

ks_log "2. a worker in a restart loop fails the wait at once"
set_status w-worker-1 '{"phase":"Running","conditions":[{"type":"Ready","status":"False","reason":"ContainersNotReady"}],"containerStatuses":[{"name":"worker","restartCount":4,"state":{"waiting":{"reason":"CrashLoopBackOff","message":"back-off 40s"}},"lastState":{"terminated":{"exitCode":3}}}]}'
t0=$(now_ms)
rc=0; ks_run "$AGENT" init --no-deliver --no-reach-check --hostfile "$hf" --timeout 60s >"$KS_DIR/o2" 2>&1 || rc=$?
dt=$(( $(now_ms) - t0 ))
[ $rc -ne 0 ] || ks_fail "init succeeded with a crash-looping worker"
[ $dt -lt 10000 ] || ks_fail "init took $dt ms to fail on CrashLoopBackOff (timeout was 60 s)"
expect_in "$KS_DIR/o2" "worker failed while waiting (1/2 ready)" "w-worker-1: phase Running: container worker: CrashLoopBackOff (restarted 4 times, last exit code 3)"
expect_in "$KS_DIR/term" "init failed: worker failed while waiting" "phases: {}"

ks_log "3. timeout names each unready worker with the scheduler's reason"
set_status w-worker-1 '{"phase":"Pending","conditions":[{"type":"PodScheduled","status":"False","reason":"Unschedulable","message":"0/1 nodes are available: 1 Insufficient nvidia.com/gpu."}],"containerStatuses":null}'
t0=$(now_ms)
rc=0; ks_run "$AGENT" init --no-deliver --no-reach-check --hostfile "$hf" --timeout 2s >"$KS_DIR/o3" 2>&1 || rc=$?
dt=$(( $(now_ms) - t0 ))
[ $rc -ne 0 ] || ks_fail "init succeeded with an unschedulable worker"
[ $dt -lt 12000 ] || ks_fail "a 2 s timeout took $dt ms"
expect_in "$KS_DIR/o3" "timed out after 2 s waiting for workers (1/2 ready)" \
  "w-worker-1: phase Pending: Unschedulable: 0/1 nodes are available: 1 Insufficient nvidia.com/gpu."

ks_log "4. workers by label (MPI_JOB_NAME) and by count (MPI_JOB_WORKERS); API server restarted mid-wait"
set_status w-worker-1 '{"phase":"Pending","conditions":[],"containerStatuses":null}'
MPI_JOB_NAME=w ks_run "$AGENT" init --no-deliver --no-reach-check --hostfile /nonexistent \
  --timeout 60s >"$KS_DIR/o4" 2>&1 && ks_fail "--hostfile given but missing must fail"
expect_in "$KS_DIR/o4" "/nonexistent"
MPI_JOB_NAME=w MPI_JOB_WORKERS=2 ks_run "$AGENT" init --no-deliver --no-reach-check \
  --timeout 60s >"$KS_DIR/o4" 2>&1 & BG_PIDS+=($!); pid=$!
sleep 1.5
ks_fault restart-apiserver >/dev/null
ks_log "   API server restarted"
sleep 1
set_ready w-worker-1
wait $pid || { cat "$KS_DIR/o4" >&2; ks_fail "init did not survive an API server restart"; }
expect_in "$KS_DIR/o4" "2/2 workers ready"
MPI_JOB_NAME=w ks_run "$AGENT" init --no-deliver --no-reach-check --timeout 20s >"$KS_DIR/o5" 2>&1 \
  || { cat "$KS_DIR/o5" >&2; ks_fail "init by label"; }

ks_log "5. hostfile and discover-hosts"
MPI_JOB_NAME=w ks_run "$AGENT" hostfile --slots 2 > "$KS_DIR/h1"
printf 'w-worker-0.w-worker.default.svc slots=2\nw-worker-1.w-worker.default.svc slots=2\n' | diff - "$KS_DIR/h1"
MPI_JOB_NAME=w ks_run "$AGENT" hostfile --hostfile "$hf" --mpi mpich > "$KS_DIR/h2"
printf 'w-worker-0.w-worker.default.svc:2\nw-worker-1:2\n' | diff - "$KS_DIR/h2"
set_status w-worker-0 '{"phase":"Running","conditions":[{"type":"Ready","status":"False"}]}'
MPI_JOB_NAME=w ks_run "$AGENT" discover-hosts > "$KS_DIR/h3"
printf 'w-worker-1.w-worker.default.svc\n' | diff - "$KS_DIR/h3"
ks_log "PASS"
