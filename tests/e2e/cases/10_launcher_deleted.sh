#!/usr/bin/env bash
# 10: the launcher pod deleted mid-run. The batch Job recreates it (backoffLimit 2); the
# retry works: the MPIJob ends Succeeded, with the retry visible (2 launcher pods or a
# Restarting condition; the Job's status.failed counts the deleted pod).
# timeout: 330
. "$(dirname "$0")/../lib.sh"
e2e_begin
e2e_up --set job_backoff_seconds=1
e2e_op_start a
BACKOFF=2 PROG='[timeout, "120", mpirun, -np, "2", --bind-to, none, sh, -c, "echo rank-up; sleep 15; echo rank-done"]' e2e_create j10
e2e_wait_log j10 '^rank-up' 2 180
p=$(launcher_pod j10)
t0=$(e2e_now_ms)
kc delete pod "$p" --wait=false >/dev/null || e2e_fail "delete launcher pod"
e2e_expect j10 Succeeded '^MPIJobSucceeded$' 'successfully completed' "$t0" 60
jf=$(kc get job j10-launcher -o jsonpath='{.status.failed}')
[ "${jf:-0}" -ge 1 ] || e2e_fail "the launcher Job counts no failed pod (status.failed '$jf'): no retry happened?"
e2e_note "launcherJobFailedPods=$jf restarting=$(cond j10 Restarting reason)"
e2e_no_leftovers j10 30
e2e_pass
