#!/usr/bin/env bash
# timeout: 600
# A worker pod deleted mid-run (kubectl delete pod, as an admin or a descheduler does) under
# runPolicy.backoffLimit 2 (issue 24 part 4), on kubesim and, listed in
# tests/k8s/integration.list, on the real cluster: job "once" loses worker 1 once, the
# operator re-creates it, the launcher Job starts a second launcher, which succeeds:
# Succeeded with restartCount 1 and the deletion named in status.restarts; its
# ttlSecondsAfterFinished (5 s) then deletes the launcher Job and its pods (the Job
# controller's TTL, as upstream) while the MPIJob and its log ConfigMap stay. Job "thrice"
# loses worker 1 three times (each time once its ranks are up): after the third the job is
# Failed, and the Failed condition names the worker and that it was deleted.
set -u
. "$(dirname "$0")/controller_common.bash"
ctl_cluster
ctl_start a --leader-elect=false -v 1 ${AGENT_IMAGE:+--agent-image "$AGENT_IMAGE"}

# mk NAME [RUNPOLICY_EXTRA]: 2 workers, 1 slot each; the ranks exit 0 once $KS_DIR/NAME/second exists
mk() {
  mkdir -p "$KS_DIR/$1" || ks_fail "mkdir"
  ctl_restart_job "$1" "$KS_DIR/$1" '[sleep, "600"]' "${2:-}" | kc create -f - >/dev/null || ks_fail "create $1"
}

# newest_launcher JOB: the name of the job's youngest launcher pod
newest_launcher() {
  kc get pods -l "mpi_job_name=$1,mpi_role_type=launcher" --sort-by=.metadata.creationTimestamp \
    -o jsonpath='{.items[-1:].metadata.name}' 2>/dev/null
}

# delete_when_up JOB PREV_LAUNCHER: waits for a launcher other than PREV_LAUNCHER whose two
# ranks are up, deletes JOB-worker-1 and prints that launcher's name
delete_when_up() {
  ks_wait_for 'l=$(newest_launcher '"$1"'); [ -n "$l" ] && [ "$l" != "'"$2"'" ] &&
    [ "$(kc logs "$l" --tail=-1 2>/dev/null | grep -c "^up on '"$1"'-worker-")" -ge 2 ]' 180 ||
    ks_fail "$1: no new launcher with both ranks up (previous: ${2:-none}): $(kc get pods -o wide)"
  local l
  l=$(newest_launcher "$1")
  kc delete pod "$1-worker-1" --wait=false >/dev/null || ks_fail "delete $1-worker-1"
  echo "$l"
}

mk once ", ttlSecondsAfterFinished: 5"
mk thrice
l_once=$(delete_when_up once "") || exit 1
touch "$KS_DIR/once/second" || ks_fail touch
l1=$(delete_when_up thrice "") || exit 1
wait_cond once Succeeded True 240
st() { kc get mpijob "$1" -o jsonpath="$2"; }
[ "$(st once '{.status.restartCount}')" = 1 ] || ks_fail "once restartCount: $(st once '{.status}')"
[ "$(newest_launcher once)" != "$l_once" ] || ks_fail "once: no second launcher pod"
kc get mpijob once -o json >"$KS_DIR/once.json" || ks_fail "get once"
python3 - "$KS_DIR/once.json" <<'PY' || ks_fail "once status.restarts: $(st once '{.status.restarts}')"
import json, sys
r = json.load(open(sys.argv[1]))["status"]["restarts"]
assert len(r) == 1 and "once-worker-1" in r[0]["message"] and "deleted" in r[0]["message"], r
PY
echo "once: Succeeded after one restart: $(st once '{.status.restarts[0].message}')"
# the TTL: the launcher Job and its pods go, the MPIJob and the launcher's output stay
ks_wait_for '! kc get job once-launcher >/dev/null 2>&1' 90 || ks_fail "once: launcher Job not deleted by its TTL"
ks_wait_for '[ -z "$(kc get pods -l mpi_job_name=once,mpi_role_type=launcher -o name)" ]' 90 ||
  ks_fail "once: launcher pods left after the TTL: $(kc get pods -l mpi_job_name=once)"
[ "$(cond once Succeeded status)" = True ] || ks_fail "once: Succeeded lost after the TTL"
kc get cm once-log -o jsonpath='{.data.log}' | grep -q "^up on once-worker-" ||
  ks_fail "once: log ConfigMap unreadable after the TTL: $(kc get cm once-log -o yaml)"
echo "once: launcher Job gone after its TTL; MPIJob and log kept"

l2=$(delete_when_up thrice "$l1") || exit 1
delete_when_up thrice "$l2" >/dev/null || exit 1
wait_cond thrice Failed True 240
msg=$(cond thrice Failed message)
case $msg in
  *thrice-worker-1*deleted*) ;;
  *) ks_fail "thrice Failed message does not name the deleted worker: $msg
$(kc get cm thrice-log -o jsonpath='{.data}' | tail -c 3000)" ;;
esac
[ "$(st thrice '{.status.restartCount}')" = 2 ] || ks_fail "thrice restartCount: $(st thrice '{.status}')"
echo "thrice: Failed after three deletions: $msg"
kc delete mpijob once thrice --wait=false >/dev/null || true
echo PASS
