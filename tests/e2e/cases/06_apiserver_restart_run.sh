#!/usr/bin/env bash
# 06: the API server restarted while mpirun runs: every exec stream drops. The job must
# fail or (backoffLimit 1) retry and succeed - never hang. Bound: 30 s after the restart
# for a Failed, 45 s for a retry that reruns the 6 s program.
# timeout: 330
. "$(dirname "$0")/../lib.sh"
e2e_begin
# the real API server is down about 17 s on a restart (kubesim's under 2 s): the operator's
# lease must outlive it, or it stops leading and exits (as upstream's does)
# and the real controller-manager's informers (the garbage collector's among them) come back
# on client-go's reflector backoff, whose steps reach [30, 60) s while the API server is away
GC_BOUND=30
[ "$KUBE_BACKEND" = k8s ] && { export E2E_LEASE="45 35 2"; GC_BOUND=90; }
e2e_up --set job_backoff_seconds=1
e2e_op_start a
BACKOFF=1 PROG='[timeout, "120", mpirun, -np, "2", --bind-to, none, sh, -c, "echo rank-up; sleep 6; echo rank-done"]' e2e_create j6
e2e_wait_log j6 '^rank-up' 2 180
t0=$(e2e_now_ms)
e2e_fault restart-apiserver
e2e_expect j6 'Succeeded|Failed' '.+' '.+' "$t0" 45
e2e_note "restarts=$(kc get pods -l mpi_job_name=j6,mpi_role_type=launcher --no-headers 2>/dev/null | wc -l)-launcher-pods"
e2e_no_leftovers j6 "$GC_BOUND"
e2e_pass
