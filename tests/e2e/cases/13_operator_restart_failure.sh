#!/usr/bin/env bash
# 13: the operator restarted between the launcher's failure and the Job's failure. The
# first launcher attempt fails (exit 7) while operator a runs; a is killed; the second
# attempt fails too, the Job gives up (backoffLimit 2: OnFailure counts container restarts) and deletes its launcher pod, so the
# agent's termination message is gone from the cluster. Operator b, which never saw a
# launcher pod, must still name the cause in the Failed message: operator a kept it in
# status.launcherFailure.
# timeout: 330
. "$(dirname "$0")/../lib.sh"
e2e_begin
e2e_up
e2e_op_start a
e2e_ready_file # workers Ready while $READY_FILE exists; its directory holds the launcher's marker
touch "$READY_FILE" || e2e_fail "touch $READY_FILE"
M=$E2E_VARTMP/failed-once
PROG="[sh, -c, \"if [ -f $M ]; then sleep 20; exit 7; fi; touch $M; exit 7\"]" BACKOFF=2 e2e_create j13
# the first attempt failed: the container restarts in place (restartPolicy OnFailure)
e2e_wait_for "[ \"\$(kc get pod \$(launcher_pod j13) -o jsonpath='{.status.containerStatuses[0].restartCount}')\" -ge 1 ]" 90 ||
  e2e_fail "the first launcher attempt did not fail: $(kc get pods -o wide; kc get mpijob j13 -o jsonpath='{.status}')"
# give operator a time to see the pod's termination record
e2e_wait_for '[ -n "$(kc get mpijob j13 -o jsonpath={.status.launcherFailure})" ]' 10 || sleep 3
e2e_op_stop a KILL
e2e_wait_for "[ \"\$(kc get job j13-launcher -o jsonpath='{.status.conditions[?(@.type==\"Failed\")].status}')\" = True ]" 90 ||
  e2e_fail "the launcher Job did not fail: $(kc get job j13-launcher -o jsonpath='{.status}')"
e2e_wait_for '[ -z "$(launcher_pod j13)" ]' 30 || e2e_fail "the Job kept its launcher pod $(launcher_pod j13)"
e2e_op_start b
t0=$(e2e_now_ms)
e2e_expect j13 Failed '^BackoffLimitExceeded$' 'has failed: BackoffLimitExceeded.*; launcher pod j13-launcher-[a-z0-9]+: command exited 7' "$t0" 30
e2e_no_leftovers j13 30
e2e_pass
