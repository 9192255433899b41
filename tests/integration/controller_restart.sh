#!/usr/bin/env bash
# timeout: 420
# Bounded restart (issue 24 part 3) on kubesim with real pods, the operator and
# mpi-agent: an MPIJob with runPolicy.backoffLimit 2 and workers with restartPolicy
# Never; worker 1 exits 7 while mpirun runs. The agent stops mpirun naming it, the
# operator deletes the failed worker so that it is re-created (WorkerRestarted Event),
# the launcher Job starts a second launcher, which waits for the new worker and
# succeeds. The status counts and explains: workerRestarts 1, restartCount 1,
# restarts[] with the worker's exit code and the launcher's reason (worker_lost).
# Without backoffLimit the same loss fails the job at once (controller_lifecycle's wfail).
set -u
. "$(dirname "$0")/controller_common.bash"
ctl_cluster
# AGENT_IMAGE: another launcher init image (on KUBE_BACKEND=k8s, a branch's own mpi-agent build)
ctl_start a --leader-elect=false -v 1 ${AGENT_IMAGE:+--agent-image "$AGENT_IMAGE"}
mkdir -p "$KS_DIR/shared"
ctl_restart_job rst "$KS_DIR/shared" \
  "[sh, -c, 'k=/shared/kill-\$(hostname); until [ -e \$k ]; do sleep 0.2; done; rm -f \$k; exit 7']" |
  kc create -f - >/dev/null || ks_fail "create rst"
L1=
ks_wait_for '[ "$(kc logs -l mpi_job_name=rst,mpi_role_type=launcher --tail=-1 2>/dev/null | grep -c "^up on rst-worker-")" -ge 2 ]' 150 ||
  ks_fail "the ranks did not start: $(kc get pods -o wide; kc logs -l mpi_job_name=rst,mpi_role_type=launcher --tail 20)"
L1=$(kc get pods -l mpi_job_name=rst,mpi_role_type=launcher -o jsonpath='{.items[0].metadata.name}')
uid1=$(kc get pod rst-worker-1 -o jsonpath='{.metadata.uid}')
touch "$KS_DIR/shared/second" "$KS_DIR/shared/kill-rst-worker-1" || ks_fail "touch"
wait_cond rst Succeeded True 240
st() { kc get mpijob rst -o jsonpath="$1"; }
[ "$(st '{.status.workerRestarts}')" = 1 ] || ks_fail "workerRestarts: $(st '{.status}')"
[ "$(st '{.status.restartCount}')" = 1 ] || ks_fail "restartCount: $(st '{.status}')"
[ "$(kc get pod rst-worker-1 -o jsonpath='{.metadata.uid}')" != "$uid1" ] || ks_fail "rst-worker-1 was not re-created"
kc get mpijob rst -o json >"$KS_DIR/rst.json"
python3 - "$KS_DIR/rst.json" <<'PY' || ks_fail "status.restarts: $(st '{.status.restarts}')"
import json, sys
r = json.load(open(sys.argv[1]))["status"]["restarts"]
w = [e for e in r if e.get("pod") == "rst-worker-1"]
l = [e for e in r if "pod" not in e]
assert len(w) == 1 and w[0]["reason"] == "worker_lost" and "exit code 7" in w[0]["message"], r
assert len(l) == 1 and l[0]["reason"] == "worker_lost" and "rst-worker-1" in l[0]["message"], r
PY
kc get events --field-selector reason=WorkerRestarted,involvedObject.name=rst -o jsonpath='{.items[*].message}' |
  grep -q "worker pod rst-worker-1 failed: exit code 7" || ks_fail "no WorkerRestarted Event: $(kc get events)"
kc get events --field-selector reason=MPIJobRestarting,involvedObject.name=rst -o name | grep -q . || ks_fail "no MPIJobRestarting Event"
L2=$(kc get pods -l mpi_job_name=rst,mpi_role_type=launcher --sort-by=.metadata.creationTimestamp -o jsonpath='{.items[-1:].metadata.name}')
[ -n "$L2" ] && [ "$L2" != "$L1" ] || ks_fail "no second launcher pod ($L1, $L2)"
echo "PASS: worker re-created, launcher retried, Succeeded; restarts recorded"
