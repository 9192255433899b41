#!/usr/bin/env bash
# agent_mpi: a launcher pod on kubesim completes an MPI program (mpi-pi, real
# Open MPI) across 2 and 8 worker pods, (a) with init container `mpi-agent init`
# and main container `mpirun` through /opt/kube/mpi-rsh, and (b) with
# `mpi-agent run -- mpirun ...` waiting in-process. Checks the ranks' output,
# the rank map, the termination message with its phases, and no leftovers; and (c) an mpirun
# told `--host localhost,...` runs a rank on the launcher: the placement check fails the job at
# once, naming the stack and the process (docs/agent.md "Ranks on the launcher").
# timeout: 600
set -euo pipefail
. "$(dirname "$0")/../lib/agent_jobs.sh"
ks_up

one() { # MODE N
  local mode=$1 n=$2 job=m$1$2 ph t0
  ks_log "$mode mode, $n workers"
  t0=$SECONDS
  job_yaml "$job" "$n" "$mode" | ks_kubectl create -f - >/dev/null
  ph=$(wait_launcher "$job" 240)
  launcher_logs "$job" > "$KS_DIR/o-$job"
  [ "$ph" = Succeeded ] || { ks_kubectl get pods -o wide >&2; ks_fail "$job: launcher $ph"; }
  expect_in "$KS_DIR/o-$job" "pi is approximately" "$n/$n workers ready" "$n/$n workers reachable through exec"
  local ranks; ranks=$(grep -c "^Rank [0-9]* of $n running on $job-worker-" "$KS_DIR/o-$job" || true)
  [ "$ranks" -eq "$n" ] || ks_fail "$job: $ranks rank lines, want $n"
  if [ "$mode" = init ]; then
    term_msg "$job" agent > "$KS_DIR/t-$job"
    expect_in "$KS_DIR/t-$job" "init: $n worker(s) ready and reachable" 'phases: {"workersReady":"' '"workersReachable":"'
  else
    expect_in "$KS_DIR/o-$job" "rank $((n - 1)) -> pod $job-worker-$((n - 1))" "command exited 0"
    term_msg "$job" launcher > "$KS_DIR/t-$job"
    expect_in "$KS_DIR/t-$job" "command exited 0" '"mpirunStarted":"' '"firstOutput":"' '"finished":"'
  fi
  ks_log "   $job Succeeded in $((SECONDS - t0)) s"
  delete_job "$job"
  no_orphans 10
}

# local JOB: rank 0 on the launcher (localhost), rank 1 on worker 0 through mpi-rsh
local_rank() {
  local job=$1 t0=$SECONDS ph
  ks_log "ranks on the launcher: mpirun --host localhost,$job-worker-0"
  MPI_PROG="--host, \"localhost,$job-worker-0.$job-worker.default.svc\", sh, -c, \"sleep 60.5\"" \
    job_yaml "$job" 2 run | ks_kubectl create -f - >/dev/null
  ph=$(wait_launcher "$job" 120)
  launcher_logs "$job" > "$KS_DIR/o-$job"
  [ "$ph" = Failed ] || { cat "$KS_DIR/o-$job"; ks_fail "$job: launcher $ph, want Failed"; }
  [ $((SECONDS - t0)) -lt 40 ] || ks_fail "$job: took $((SECONDS - t0)) s (the ranks sleep 60 s)"
  term_msg "$job" launcher > "$KS_DIR/t-$job"
  expect_in "$KS_DIR/t-$job" "Open MPI 4 (ORTE) started 'sh' (pid " "on the launcher" "--host/-H" "runLauncherAsWorker"
  expect_in "$KS_DIR/o-$job" "stopping the command"
  ks_log "   $job Failed in $((SECONDS - t0)) s: $(grep -o "Open MPI[^;]*on the launcher[^,]*" "$KS_DIR/t-$job" | head -1)"
  delete_job "$job"
  no_orphans 10
}

one init 2
one init 8
one run 2
one run 8
local_rank mloc
ks_log "PASS"
