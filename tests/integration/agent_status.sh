#!/usr/bin/env bash
# agent_status: `mpi-agent status -n NS JOB` from outside the cluster (a
# kubeconfig) against a healthy job (exit 0, every worker "ok" with a time,
# the hostfile) and a broken one (exit 1, the broken pod's reason; its Pending
# pod is skipped with why instead of an exec into a pod that has no container).
# timeout: 300
set -euo pipefail
. "$(dirname "$0")/../lib/agent_jobs.sh"
ks_up
# workers only (no launcher): status is for debugging a job from a laptop
only_workers() { python3 -c 'import sys,yaml; sys.stdout.write(yaml.safe_dump_all([d for d in yaml.safe_load_all(sys.stdin) if d["kind"] == "Pod" and d["metadata"]["name"].find("-worker-") > 0]))'; }
job_yaml good 3 init | only_workers | ks_kubectl create -f - >/dev/null
LAST_IMAGE=does-not-exist/x:1 job_yaml bad 2 init | only_workers | ks_kubectl create -f - >/dev/null
until_s=$((SECONDS + 120))
until [ "$(ks_kubectl get pods -l mpi_job_name=good -o 'jsonpath={.items[*].status.phase}')" = "Running Running Running" ]; do
  [ $SECONDS -lt $until_s ] || ks_fail "good workers never ran"; sleep 0.3
done
sleep 1
rc=0; ks_run "$AGENT" status -n default good >"$KS_DIR/o-good" 2>&1 || rc=$?
cat "$KS_DIR/o-good" >&2
[ $rc -eq 0 ] || ks_fail "status of a healthy job exited $rc"
expect_in "$KS_DIR/o-good" "JOB default/good: 3 worker(s), transport exec" \
  "good-worker-2.good-worker.default.svc slots=1" "OK: 0 of 3 worker(s) unreachable"
n=$(grep -cE '^good-worker-[0-2] +Running +true' "$KS_DIR/o-good"); [ "$n" -eq 3 ] || ks_fail "$n Running/true rows"
n=$(grep -cE '^good-worker-[0-2] +ok +[0-9.]+ ms' "$KS_DIR/o-good"); [ "$n" -eq 3 ] || ks_fail "$n ok round trips"

rc=0; ks_run "$AGENT" status bad -n default --mpi mpich >"$KS_DIR/o-bad" 2>&1 || rc=$?
cat "$KS_DIR/o-bad" >&2
[ $rc -eq 1 ] || ks_fail "status of a broken job exited $rc, want 1"
grep -qE '^bad-worker-1 +Pending +false .*ImagePull' "$KS_DIR/o-bad" || ks_fail "no image pull reason for bad-worker-1"
# a Pending pod has no container to exec into: skipped with why, no exec tried
grep -qE '^bad-worker-1 +SKIPPED phase Pending, not Running: .*ImagePull' "$KS_DIR/o-bad" || ks_fail "bad-worker-1 not skipped with its reason"
! grep -q 'container not found' "$KS_DIR/o-bad" || ks_fail "status tried to exec into the Pending pod"
grep -qE '^bad-worker-0 +ok ' "$KS_DIR/o-bad" || ks_fail "bad-worker-0 should be reachable"
expect_in "$KS_DIR/o-bad" "HOSTFILE (mpich)" "bad-worker-1.bad-worker.default.svc:1" "NOT READY: 1 of 2 worker(s) unreachable"
rc=0; ks_run "$AGENT" status -n default nosuchjob >"$KS_DIR/o-none" 2>&1 || rc=$?
[ $rc -ne 0 ] || ks_fail "status of a missing job exited 0"
expect_in "$KS_DIR/o-none" "no worker pods"
ks_log "PASS"
