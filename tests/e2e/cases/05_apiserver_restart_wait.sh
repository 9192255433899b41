#!/usr/bin/env bash
# 05: the API server restarted while the launcher waits for workers (workers held
# not-Ready by a readiness file). After the restart the workers become Ready; the agent's
# watch must resume and the job must end Succeeded within 30 s of the workers' readiness.
# timeout: 330
. "$(dirname "$0")/../lib.sh"
e2e_begin
# the real API server is down about 17 s on a restart (kubesim's under 2 s): the operator's
# lease must outlive it, or it stops leading and exits (as upstream's does)
# and the real controller-manager's informers (the garbage collector's among them) come back
# on client-go's reflector backoff, whose steps reach [30, 60) s while the API server is away
GC_BOUND=30
[ "$KUBE_BACKEND" = k8s ] && { export E2E_LEASE="45 35 2"; GC_BOUND=90; }
e2e_up
e2e_op_start a
e2e_ready_file
READY_FILE=$READY_FILE e2e_create j5
e2e_wait_log j5 'workers? ready|waiting' 1 180
sleep 1
e2e_fault restart-apiserver
sleep 2
touch "$READY_FILE"
t0=$(e2e_now_ms)
e2e_expect j5 Succeeded '^MPIJobSucceeded$' 'successfully completed' "$t0" 30
e2e_no_leftovers j5 "$GC_BOUND"
e2e_pass
