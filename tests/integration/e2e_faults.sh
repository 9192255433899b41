#!/usr/bin/env bash
# timeout: 600
# The bounded `make test` subset of the end-to-end fault matrix (tests/e2e/, full run:
# `make e2e`): the cases most likely to catch a hang, each on its own kubesim with
# the operator, the agent and mpi-rsh together - a worker pod deleted while mpirun runs
# (01; upstream hangs here), the API server restarted while mpirun runs (06: every
# exec stream drops), and workers whose image never pulls (03: Failed with the agent's
# reason within 30 s of the worker timeout, despite the default backoffLimit; F7), and the
# operator restarted between the launcher's failure and the Job's (13: the Failed message
# still names the cause). Each asserts the MPIJob's final condition, reason, message and time
# to reach it, then that no pod, process, network namespace or owned object is left.
set -u
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
rc=0
for c in 01_worker_deleted 03_bad_image 06_apiserver_restart_run 13_operator_restart_failure; do
  E2E_CASE=$c timeout -k 10 140 bash "$ROOT/tests/e2e/cases/$c.sh"
  r=$?
  [ $r -eq 77 ] && exit 77
  [ $r -eq 0 ] || { echo "FAIL: e2e case $c (rc $r)"; rc=1; }
done
exit $rc
