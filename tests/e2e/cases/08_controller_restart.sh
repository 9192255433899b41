#!/usr/bin/env bash
# 08: the controller killed (SIGKILL) and restarted mid-job. The new controller adopts
# what exists: no duplicate pods/Jobs/objects, status converges to Succeeded.
# timeout: 330
. "$(dirname "$0")/../lib.sh"
e2e_begin
e2e_up
e2e_op_start a
PROG='[timeout, "120", mpirun, -np, "2", --bind-to, none, sh, -c, "echo rank-up; sleep 8; echo rank-done"]' e2e_create j8
e2e_wait_log j8 '^rank-up' 2 180
e2e_op_stop a KILL
uids_before=$(kc get pods,jobs,cm,svc,sa,role,rolebinding -l training.kubeflow.org/job-name=j8 -o jsonpath='{range .items[*]}{.metadata.uid}{"\n"}{end}' | sort)
e2e_op_start b
t0=$(e2e_now_ms)
e2e_expect j8 Succeeded '^MPIJobSucceeded$' 'successfully completed' "$t0" 30
nw=$(kc get pods -l mpi_job_name=j8,mpi_role_type=worker -o name | wc -l)
nl=$(kc get jobs -l training.kubeflow.org/job-name=j8 -o name | wc -l)
[ "$nl" -eq 1 ] || e2e_fail "launcher Jobs: $nl"
uids_after=$(kc get pods,jobs,cm,svc,sa,role,rolebinding -l training.kubeflow.org/job-name=j8 -o jsonpath='{range .items[*]}{.metadata.uid}{"\n"}{end}' | sort)
extra=$(comm -13 <(echo "$uids_before") <(echo "$uids_after") | grep -c . || true)
[ "$extra" -eq 0 ] || e2e_fail "the restarted controller created $extra new objects (duplicates)"
# conditions: exactly one of each type
dups=$(kc get mpijob j8 -o jsonpath='{range .status.conditions[*]}{.type}{"\n"}{end}' | sort | uniq -d)
[ -z "$dups" ] || e2e_fail "duplicate condition types: $dups"
[ "$(cond j8 Running status)" = False ] || e2e_fail "Running condition not False after success"
e2e_note "workers=$nw launcherJobs=$nl newObjects=0"
e2e_no_leftovers j8 30
e2e_pass
