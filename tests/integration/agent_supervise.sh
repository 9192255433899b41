#!/usr/bin/env bash
# agent_supervise: `mpi-agent run` supervising a command while the workers are
# watched on kubesim (worker status set by the test): exit code and output
# passed through byte for byte, a worker deleted mid-run stops the command at
# once naming the pod, SIGTERM forwarded and escalated to SIGKILL, the silence
# watchdog, an API server restart that must not stop a healthy run, phases.
# timeout: 180
set -euo pipefail
. "$(dirname "$0")/../lib/agent_jobs.sh"
ks_up
export MPI_AGENT_TERMINATION_LOG=$KS_DIR/term MPI_JOB_NAME=s MPI_JOB_WORKERS=2
for i in 0 1; do ghost_pod s $i; echo ---; done | ks_kubectl create -f - >/dev/null
set_ready s-worker-0; set_ready s-worker-1
RUN=("$AGENT" run --no-reach-check --timeout 20s --dest "$KS_DIR/nokube")
mark=agentmark$$

agent_pid() { # pid of the agent whose command line carries $1
  local p; for _ in $(seq 50); do p=$(pgrep -f -- "mpi-agent run .*$1" | head -1); [ -n "$p" ] && { echo "$p"; return; }; sleep 0.1; done
  ks_fail "agent with $1 not found"
}

ks_log "1. exit code and output pass through unchanged"
head -c 3000000 /dev/urandom > "$KS_DIR/blob"
rc=0; ks_run "${RUN[@]}" -- sh -c "cat $KS_DIR/blob; echo to-stderr >&2; exit 7" >"$KS_DIR/out1" 2>"$KS_DIR/o1" || rc=$?
[ $rc -eq 7 ] || ks_fail "exit code $rc, want 7"
cmp "$KS_DIR/blob" "$KS_DIR/out1" || ks_fail "stdout altered"
expect_in "$KS_DIR/o1" "to-stderr" "rank 0 -> pod s-worker-0" "rank 1 -> pod s-worker-1" "command exited 7"
expect_in "$KS_DIR/term" "command exited 7" '"mpirunStarted":"' '"firstOutput":"' '"finished":"'
ks_run "${RUN[@]}" -- true 2>"$KS_DIR/o1b" || ks_fail "run -- true failed"
grep -q "$KS_DIR/mpi-agent-hostfile\|mpi-agent-hostfile" "$KS_DIR/o1b" || true

ks_log "2. a worker deleted mid-run stops the command at once, naming the pod"
ks_run "${RUN[@]}" -- sh -c "echo started; exec sleep 60.$$1" >"$KS_DIR/o2" 2>&1 & BG_PIDS+=($!); pid=$!
sleep 2
kill -0 $pid || ks_fail "run ended early"
t0=$(now_ms); ks_kubectl delete pod s-worker-1 --wait=false >/dev/null
rc=0; wait $pid || rc=$?
dt=$(( $(now_ms) - t0 ))
ks_log "   run exited $rc, $dt ms after the delete"
[ $rc -ne 0 ] || ks_fail "run exited 0 after a worker was deleted"
[ $dt -lt 5000 ] || ks_fail "took $dt ms to stop after the worker was deleted"
expect_in "$KS_DIR/o2" "worker s-worker-1" "stopping the command"
grep -qE "worker s-worker-1: (being deleted|deleted)" "$KS_DIR/term" || { cat "$KS_DIR/term"; ks_fail "termination message lacks the worker"; }
pgrep -f "sleep 60.$$1" >/dev/null && ks_fail "the command's sleep outlived the agent"
ks_kubectl delete pod s-worker-1 --grace-period=0 --force >/dev/null 2>&1 || true
ghost_pod s 1 | ks_kubectl create -f - >/dev/null; set_ready s-worker-1

ks_log "2b. a worker that goes just after the command failed is its cause (mpirun saw its daemon lost first)"
ks_run "${RUN[@]}" -- sh -c "echo started; sleep 0.5; exit 205" >"$KS_DIR/o2b" 2>&1 & BG_PIDS+=($!); pid=$!
for _ in $(seq 100); do grep -q '^started' "$KS_DIR/o2b" 2>/dev/null && break; sleep 0.1; done
sleep 1.2 # the command has exited; the agent waits for the pod watcher
grep -q "command exited\|stopping the command" "$KS_DIR/o2b" && ks_fail "the run ended before the worker went: $(cat "$KS_DIR/o2b")"
ks_kubectl delete pod s-worker-1 --wait=false >/dev/null
rc=0; wait $pid || rc=$?
[ $rc -eq 205 ] || ks_fail "run exited $rc, want the command's 205"
expect_in "$KS_DIR/o2b" "the command had failed already"
grep -qE "worker s-worker-1: (being deleted|deleted)" "$KS_DIR/term" || { cat "$KS_DIR/term"; ks_fail "termination message lacks the worker"; }
ks_kubectl delete pod s-worker-1 --grace-period=0 --force >/dev/null 2>&1 || true
ghost_pod s 1 | ks_kubectl create -f - >/dev/null; set_ready s-worker-1

ks_log "3. SIGTERM is forwarded; a command that ignores it is killed after --grace"
ks_run "${RUN[@]}" -- sh -c "trap 'echo got-TERM; exit 42' TERM; sleep 30 & wait" "$mark-a" >"$KS_DIR/o3" 2>&1 & BG_PIDS+=($!); pid=$!
sleep 1.5; kill -TERM "$(agent_pid "$mark-a")"
rc=0; wait $pid || rc=$?
[ $rc -eq 42 ] || ks_fail "SIGTERM: exit $rc, want the command's 42"
expect_in "$KS_DIR/o3" "got-TERM" "received Terminated"
ks_run "${RUN[@]}" --grace 1s -- sh -c "trap '' TERM; echo ignoring; sleep 30; true" "$mark-b" >"$KS_DIR/o4" 2>&1 & BG_PIDS+=($!); pid=$!
sleep 1.5; t0=$(now_ms); kill -TERM "$(agent_pid "$mark-b")"
rc=0; wait $pid || rc=$?
dt=$(( $(now_ms) - t0 ))
[ $rc -eq 137 ] || ks_fail "escalation: exit $rc, want 137 (SIGKILL)"
[ $dt -lt 4000 ] || ks_fail "escalation took $dt ms with --grace 1s"
expect_in "$KS_DIR/o4" "grace period over: SIGKILL"

ks_log "4. silence watchdog"
t0=$(now_ms)
rc=0; ks_run "${RUN[@]}" --progress-timeout 2s -- sh -c "echo start; exec sleep 60.$$2" >"$KS_DIR/o5" 2>&1 || rc=$?
dt=$(( $(now_ms) - t0 ))
[ $rc -ne 0 ] || ks_fail "watchdog: exit 0"
[ $dt -lt 12000 ] || ks_fail "watchdog took $dt ms"
expect_in "$KS_DIR/o5" "no progress for 2 s" "s-worker-0"
expect_in "$KS_DIR/term" "no progress for 2 s"

ks_log "5. an API server restart during a healthy run changes nothing"
ks_run "${RUN[@]}" -- sh -c "sleep 4; echo finished-ok" >"$KS_DIR/o6" 2>&1 & BG_PIDS+=($!); pid=$!
sleep 1.5; ks_fault restart-apiserver >/dev/null
wait $pid || ks_fail "run failed across an API server restart"
expect_in "$KS_DIR/o6" "finished-ok" "command exited 0"
ks_log "6. --no-wait (init already waited): still watches; CLI basics"
ks_run "${RUN[@]}" --no-wait -- sh -c 'echo nowait-ok' >"$KS_DIR/o7" 2>&1 || ks_fail "run --no-wait failed"
expect_in "$KS_DIR/o7" "nowait-ok" "command exited 0"
grep -q "workers ready" "$KS_DIR/o7" && ks_fail "--no-wait waited"
"$AGENT" --help | grep -q "discover-hosts" || ks_fail "--help lacks a command"
rc=0; "$AGENT" bogus >/dev/null 2>&1 || rc=$?; [ $rc -eq 2 ] || ks_fail "unknown command: rc $rc"
rc=0; "$AGENT" run --timeout soon -- true 2>"$KS_DIR/o8" || rc=$?; [ $rc -eq 2 ] || ks_fail "bad --timeout: rc $rc"
expect_in "$KS_DIR/o8" "--timeout: expected a duration"
rc=0; "$AGENT" run 2>"$KS_DIR/o9" || rc=$?; [ $rc -eq 2 ] || ks_fail "run without CMD: rc $rc"
ks_log "PASS"
