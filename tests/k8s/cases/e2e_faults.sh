#!/usr/bin/env bash
# timeout: 2700
# The fault cases of tests/e2e/ (make e2e) that a real cluster makes itself, each on its own
# real cluster (KUBE_BACKEND=k8s): a worker pod deleted while mpirun runs (01), a worker's
# containers killed through containerd (02), workers whose image cannot be pulled (03: the
# real kubelet's ErrImagePull/ImagePullBackOff), workers asking for a GPU the node lacks (04:
# the real scheduler's Unschedulable), the operator restarted mid-job (08), the
# launcher pod deleted (10: the real Job controller makes a new one), the API server
# restarted while the launcher waits (05) and while mpirun runs (06), the operator restarted
# between the launcher's failure and the Job's (13). Each asserts the MPIJob's final
# condition, its reason and message, the time to reach it and no leftovers. Not here
# (docs/kubesim.md): 07/09/11/12 (kubesim options or faults).
set -u
ROOT=${ROOT:-$(cd "$(dirname "$0")/../../.." && pwd)}
export KUBE_BACKEND=k8s
rc=0
for c in 01_worker_deleted 02_worker_killed 03_bad_image 04_unschedulable 05_apiserver_restart_wait 06_apiserver_restart_run \
  08_controller_restart 10_launcher_deleted 13_operator_restart_failure; do
  t=$(sed -n 's/^# timeout: *//p' "$ROOT/tests/e2e/cases/$c.sh")
  out=$(E2E_CASE=$c timeout -k 10 "${t:-330}" bash "$ROOT/tests/e2e/cases/$c.sh" 2>&1)
  r=$?
  echo "$out" | grep 'E2E-RESULT' | sed "s/^/$c: /"
  [ $r -eq 0 ] || { echo "$out" | tail -n 40; echo "FAIL: e2e case $c on the real cluster (rc $r)"; rc=1; }
done
exit $rc
