#!/usr/bin/env bash
# 11: the agent's init container killed while it waits for workers (held not-Ready). The
# launcher restarts (a new pod from the Job, backoffLimit 2) and resumes; after the
# workers turn Ready the MPIJob ends Succeeded within 30 s.
# timeout: 330
. "$(dirname "$0")/../lib.sh"
e2e_begin
e2e_up --set job_backoff_seconds=1
e2e_op_start a
e2e_ready_file
BACKOFF=2 READY_FILE=$READY_FILE e2e_create j11
e2e_wait_log j11 'workers? ready|waiting' 1 180
p=$(launcher_pod j11)
[ "$(kc get pod "$p" -o jsonpath='{.status.initContainerStatuses[0].state.running}')" != "" ] ||
  e2e_fail "init container of $p not running: $(kc get pod "$p" -o jsonpath='{.status.initContainerStatuses}')"
e2e_fault kill-containers "default/$p"
sleep 2
touch "$READY_FILE"
t0=$(e2e_now_ms)
e2e_expect j11 Succeeded '^MPIJobSucceeded$' 'successfully completed' "$t0" 30
e2e_note "launcherPods=$(kc get pods -l mpi_job_name=j11,mpi_role_type=launcher -o name | wc -l) initRestarts=$(kc get pod "$(launcher_pod j11)" -o jsonpath='{.status.initContainerStatuses[0].restartCount}')"
e2e_no_leftovers j11 30
e2e_pass
