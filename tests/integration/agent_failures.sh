#!/usr/bin/env bash
# agent_failures: each way a worker can fail, on kubesim with real pods. Each
# must end the launcher non-zero within seconds of the cause (or of the bound),
# with a message naming the worker pod and Kubernetes' reason, and leave no
# mpirun/orted behind: an image that never starts, an unschedulable worker
# (more nvidia.com/gpu than the node has), a crashing worker (restart loop and
# restartPolicy Never), a worker deleted mid-run, the API server restarted
# during the wait and during the run.
# timeout: 600
set -euo pipefail
. "$(dirname "$0")/../lib/agent_jobs.sh"
ks_up --gpus 1

# expect_fail JOB TEXT...: the launcher pod ends Failed (pods start slowly on a loaded
# machine, so this bound is loose; the agent's own reaction is timed from its log lines)
expect_fail() {
  local job=$1 t0=$SECONDS ph; shift
  ph=$(wait_launcher "$job" 180)
  launcher_logs "$job" > "$KS_DIR/o-$job"
  { term_msg "$job" agent; echo; term_msg "$job" launcher; } > "$KS_DIR/t-$job"
  [ "$ph" = Failed ] || ks_fail "$job: launcher $ph, want Failed"
  expect_in "$KS_DIR/o-$job" "$@"
  ks_log "   $job Failed ($((SECONDS - t0)) s after the check began)"
}

ks_log "1. a worker image that never starts (bounded by MPI_AGENT_TIMEOUT=8)"
LAST_IMAGE=registry.example/does-not-exist:1 AGENT_TIMEOUT=8 job_yaml fimg 2 init | ks_kubectl create -f - >/dev/null
expect_fail fimg "timed out after 8 s waiting for workers (1/2 ready)" "fimg-worker-1: phase Pending: container worker:" "ImagePull"
within 10000 "$(log_ms "$KS_DIR/o-fimg" "waiting up to")" "$(log_ms "$KS_DIR/o-fimg" "timed out after")" "wait start -> failure (bound 8 s)"
grep -q "fimg-worker-1" "$KS_DIR/t-fimg" || ks_fail "termination message lacks the worker"
delete_job fimg

ks_log "2. an unschedulable worker (2 nvidia.com/gpu, the node has 1)"
WORKER_GPUS=2 AGENT_TIMEOUT=6 job_yaml fgpu 2 init | ks_kubectl create -f - >/dev/null
expect_fail fgpu "fgpu-worker-1: phase Pending: Unschedulable:" "nvidia.com/gpu"
within 8000 "$(log_ms "$KS_DIR/o-fgpu" "waiting up to")" "$(log_ms "$KS_DIR/o-fgpu" "timed out after")" "wait start -> failure (bound 6 s)"
delete_job fgpu

ks_log "3. a crashing worker fails the wait at once (timeout 120 s)"
LAST_CMD='[sh, -c, "echo crashing; exit 3"]' AGENT_TIMEOUT=120 job_yaml fcrash 2 init | ks_kubectl create -f - >/dev/null
# the crash may be seen by the wait, or (when the restarted container looked Ready for a
# moment, so that the wait ended) by the reach check that follows: either fails at once
expect_fail fcrash "worker failed while" "fcrash-worker-1"
within 60000 "$(log_ms "$KS_DIR/o-fcrash" "waiting up to")" "$(log_ms "$KS_DIR/o-fcrash" "worker failed while")" "wait start -> failure (bound 120 s)"
grep -qE "CrashLoopBackOff|restarting in a loop|exit code 3" "$KS_DIR/o-fcrash" || ks_fail "no crash reason"
delete_job fcrash
WORKER_RESTART=Never LAST_CMD='[sh, -c, "exit 4"]' AGENT_TIMEOUT=120 job_yaml fnever 2 init | ks_kubectl create -f - >/dev/null
expect_fail fnever "worker failed while waiting" "fnever-worker-1: phase Failed" "exit code 4"
within 30000 "$(log_ms "$KS_DIR/o-fnever" "waiting up to")" "$(log_ms "$KS_DIR/o-fnever" "worker failed while waiting")" "wait start -> failure (bound 120 s)"
delete_job fnever

ks_log "4. a worker deleted mid-run (mpi-agent run supervising mpirun)"
MPI_PROG='sh, -c, "echo rank-up; sleep 60"' job_yaml fdel 2 run | ks_kubectl create -f - >/dev/null
until_s=$((SECONDS + 120))
until [ "$(launcher_logs fdel | grep -c rank-up)" -ge 2 ]; do
  [ $SECONDS -lt $until_s ] || { launcher_logs fdel >&2; ks_fail "ranks never started"; }; sleep 0.3
done
# t0: kubectl returned, the delete is applied (kubectl itself is slow on a loaded machine;
# the agent may even react before it returns, giving a negative time)
ks_kubectl delete pod fdel-worker-1 --wait=false >/dev/null; t0=$(now_ms)
expect_fail fdel "worker fdel-worker-1" "stopping the command"
within 3000 "$t0" "$(log_ms "$KS_DIR/o-fdel" "stopping the command")" "delete -> agent stops mpirun"
within 12000 "$t0" "$(log_ms "$KS_DIR/o-fdel" "command exited")" "delete -> mpirun gone"
grep -q "worker fdel-worker-1" "$KS_DIR/t-fdel" || ks_fail "termination message lacks the worker"
# the first run of this launcher container has no previous run to lead with (agent/prevrun.c)
! grep -q "previous run of this launcher" "$KS_DIR/t-fdel" || ks_fail "a first run's message names a previous run: $(cat "$KS_DIR/t-fdel")"
delete_job fdel
no_orphans 10

ks_log "5. API server restarted during the wait"
LAST_PROBE=/tmp/agent-ready AGENT_TIMEOUT=90 job_yaml fapi 2 init | ks_kubectl create -f - >/dev/null
until_s=$((SECONDS + 60))
until launcher_logs fapi | grep -q "1/2 workers ready"; do
  [ $SECONDS -lt $until_s ] || { launcher_logs fapi >&2; ks_fail "wait never reported 1/2"; }; sleep 0.3
done
ks_fault restart-apiserver >/dev/null
ks_log "   API server restarted"
sleep 1
ks_kubectl exec fapi-worker-1 -- touch /tmp/agent-ready
ph=$(wait_launcher fapi 120)
launcher_logs fapi > "$KS_DIR/o-fapi"
[ "$ph" = Succeeded ] || ks_fail "fapi: launcher $ph after an API server restart during the wait"
expect_in "$KS_DIR/o-fapi" "2/2 workers ready" "pi is approximately"
delete_job fapi
no_orphans 10

ks_log "6. API server restarted during the run (exec streams carry the daemons: the run must fail fast, not hang)"
MPI_PROG='sh, -c, "echo rank-up; sleep 60"' job_yaml frun 2 run | ks_kubectl create -f - >/dev/null
until_s=$((SECONDS + 120))
until [ "$(launcher_logs frun | grep -c rank-up)" -ge 2 ]; do
  [ $SECONDS -lt $until_s ] || ks_fail "ranks never started"; sleep 0.3
done
ks_fault restart-apiserver >/dev/null; t0=$(now_ms)
expect_fail frun "frun-worker-"
within 20000 "$t0" "$(log_ms "$KS_DIR/o-frun" "command exited")" "API server restart -> mpirun gone"
delete_job frun
no_orphans 10
ks_log "PASS"
