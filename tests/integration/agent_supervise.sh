#!/usr/bin/env bash
# agent_supervise: `mpi-agent run` supervising a command while the workers are
# watched on kubesim (worker status set by the test): exit code and output
# passed through byte for byte, a worker deleted mid-run stops the command at
# once naming the pod, SIGTERM forwarded and escalated to SIGKILL, the silence
# watchdog, an API server restart that must not stop a healthy run, phases.
# timeout: 180
. "$(dirname "$0")/agent_lib.bash"
ks_up
export MPI_AGENT_TERMINATION_LOG=$D/term MPI_JOB_NAME=s MPI_JOB_WORKERS=2
for i in 0 1; do ghost_pod s $i; echo ---; done | k create -f - >/dev/null
set_ready s-worker-0; set_ready s-worker-1
RUN=("$AGENT" run --no-reach-check --timeout 20s --dest "$D/nokube")
mark=agentmark$$

agent_pid() { # pid of the agent whose command line carries $1
  local p; for _ in $(seq 50); do p=$(pgrep -f -- "mpi-agent run .*$1" | head -1); [ -n "$p" ] && { echo "$p"; return; }; sleep 0.1; done
  fail "agent with $1 not found"
}

log "1. exit code and output pass through unchanged"
head -c 3000000 /dev/urandom > "$D/blob"
rc=0; ksrun "${RUN[@]}" -- sh -c "cat $D/blob; echo to-stderr >&2; exit 7" >"$D/out1" 2>"$D/o1" || rc=$?
[ $rc -eq 7 ] || fail "exit code $rc, want 7"
cmp "$D/blob" "$D/out1" || fail "stdout altered"
expect_in "$D/o1" "to-stderr" "rank 0 -> pod s-worker-0" "rank 1 -> pod s-worker-1" "command exited 7"
expect_in "$D/term" "command exited 7" '"mpirunStarted":"' '"firstOutput":"' '"finished":"'
ksrun "${RUN[@]}" -- true 2>"$D/o1b" || fail "run -- true failed"
grep -q "$D/mpi-agent-hostfile\|mpi-agent-hostfile" "$D/o1b" || true

log "2. a worker deleted mid-run stops the command at once, naming the pod"
ksrun "${RUN[@]}" -- sh -c "echo started; exec sleep 60.$$1" >"$D/o2" 2>&1 & BG_PIDS+=($!); pid=$!
sleep 2
kill -0 $pid || fail "run ended early"
t0=$(now_ms); k delete pod s-worker-1 --wait=false >/dev/null
rc=0; wait $pid || rc=$?
dt=$(( $(now_ms) - t0 ))
log "   run exited $rc, $dt ms after the delete"
[ $rc -ne 0 ] || fail "run exited 0 after a worker was deleted"
[ $dt -lt 5000 ] || fail "took $dt ms to stop after the worker was deleted"
expect_in "$D/o2" "worker s-worker-1" "stopping the command"
grep -qE "worker s-worker-1: (being deleted|deleted)" "$D/term" || { cat "$D/term"; fail "termination message lacks the worker"; }
pgrep -f "sleep 60.$$1" >/dev/null && fail "the command's sleep outlived the agent"
k delete pod s-worker-1 --grace-period=0 --force >/dev/null 2>&1 || true
ghost_pod s 1 | k create -f - >/dev/null; set_ready s-worker-1

log "2b. a worker that goes just after the command failed is its cause (mpirun saw its daemon lost first)"
ksrun "${RUN[@]}" -- sh -c "echo started; sleep 0.5; exit 205" >"$D/o2b" 2>&1 & BG_PIDS+=($!); pid=$!
for _ in $(seq 100); do grep -q '^started' "$D/o2b" 2>/dev/null && break; sleep 0.1; done
sleep 1.2 # the command has exited; the agent waits for the pod watcher
grep -q "command exited\|stopping the command" "$D/o2b" && fail "the run ended before the worker went: $(cat "$D/o2b")"
k delete pod s-worker-1 --wait=false >/dev/null
rc=0; wait $pid || rc=$?
[ $rc -eq 205 ] || fail "run exited $rc, want the command's 205"
expect_in "$D/o2b" "the command had failed already"
grep -qE "worker s-worker-1: (being deleted|deleted)" "$D/term" || { cat "$D/term"; fail "termination message lacks the worker"; }
k delete pod s-worker-1 --grace-period=0 --force >/dev/null 2>&1 || true
ghost_pod s 1 | k create -f - >/dev/null; set_ready s-worker-1

log "3. SIGTERM is forwarded; a command that ignores it is killed after --grace"
ksrun "${RUN[@]}" -- sh -c "trap 'echo got-TERM; exit 42' TERM; sleep 30 & wait" "$mark-a" >"$D/o3" 2>&1 & BG_PIDS+=($!); pid=$!
sleep 1.5; kill -TERM "$(agent_pid "$mark-a")"
rc=0; wait $pid || rc=$?
[ $rc -eq 42 ] || fail "SIGTERM: exit $rc, want the command's 42"
expect_in "$D/o3" "got-TERM" "received Terminated"
ksrun "${RUN[@]}" --grace 1s -- sh -c "trap '' TERM; echo ignoring; sleep 30; true" "$mark-b" >"$D/o4" 2>&1 & BG_PIDS+=($!); pid=$!
sleep 1.5; t0=$(now_ms); kill -TERM "$(agent_pid "$mark-b")"
rc=0; wait $pid || rc=$?
dt=$(( $(now_ms) - t0 ))
[ $rc -eq 137 ] || fail "escalation: exit $rc, want 137 (SIGKILL)"
[ $dt -lt 4000 ] || fail "escalation took $dt ms with --grace 1s"
expect_in "$D/o4" "grace period over: SIGKILL"

log "4. silence watchdog"
t0=$(now_ms)
rc=0; ksrun "${RUN[@]}" --progress-timeout 2s -- sh -c "echo start; exec sleep 60.$$2" >"$D/o5" 2>&1 || rc=$?
dt=$(( $(now_ms) - t0 ))
[ $rc -ne 0 ] || fail "watchdog: exit 0"
[ $dt -lt 12000 ] || fail "watchdog took $dt ms"
expect_in "$D/o5" "no progress for 2 s" "s-worker-0"
expect_in "$D/term" "no progress for 2 s"

log "5. an API server restart during a healthy run changes nothing"
ksrun "${RUN[@]}" -- sh -c "sleep 4; echo finished-ok" >"$D/o6" 2>&1 & BG_PIDS+=($!); pid=$!
sleep 1.5; timeout 60 "$KS" fault --dir "$D" restart-apiserver >/dev/null
wait $pid || fail "run failed across an API server restart"
expect_in "$D/o6" "finished-ok" "command exited 0"
log "6. --no-wait (init already waited): still watches; CLI basics"
ksrun "${RUN[@]}" --no-wait -- sh -c 'echo nowait-ok' >"$D/o7" 2>&1 || fail "run --no-wait failed"
expect_in "$D/o7" "nowait-ok" "command exited 0"
grep -q "workers ready" "$D/o7" && fail "--no-wait waited"
"$AGENT" --help | grep -q "discover-hosts" || fail "--help lacks a command"
rc=0; "$AGENT" bogus >/dev/null 2>&1 || rc=$?; [ $rc -eq 2 ] || fail "unknown command: rc $rc"
rc=0; "$AGENT" run --timeout soon -- true 2>"$D/o8" || rc=$?; [ $rc -eq 2 ] || fail "bad --timeout: rc $rc"
expect_in "$D/o8" "--timeout: expected a duration"
rc=0; "$AGENT" run 2>"$D/o9" || rc=$?; [ $rc -eq 2 ] || fail "run without CMD: rc $rc"
log "PASS"
