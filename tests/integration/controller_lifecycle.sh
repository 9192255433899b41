#!/usr/bin/env bash
# timeout: 420
# Lifecycle on kubesim with real pods: cleanPodPolicy None/Running/All after
# success, backoffLimit with a failing launcher (Failed/BackoffLimitExceeded
# with the agent's termination message, Restarting seen), activeDeadlineSeconds
# (Failed/DeadlineExceeded, launcher stopped), a failing worker
# (Failed naming the pod, launcher Job suspended), suspend/resume
# (Suspended/MPIJobSuspended, pods gone, MPIJobResumed, then Succeeded),
# ttlSecondsAfterFinished (as upstream: the launcher Job and its pod deleted; the MPIJob,
# its status and its log ConfigMap stay, readable with kubectl and `mpi-agent logs`).
set -u
. "$(dirname "$0")/controller_common.bash"
ctl_cluster
ctl_start a --monitoring-port 18182 --leader-elect=false -v 1

# mk NAME CLEAN LAUNCHER_SH WORKER_SH RUNPOLICY_EXTRA [ANNOTATION=VALUE]
mk() {
  mpijob_yaml "$1" --ann mpi-k8s.io/transport=exec --ann mpi-k8s.io/worker-timeout=60 ${6:+--ann "$6"} \
    --run-policy "{cleanPodPolicy: $2 $5}" --restart Never --command "[sh, -c, '$3']" ${4:+--worker-command "[sh, -c, '$4']"} \
    --pod "volumes: [{name: shared, hostPath: {path: \"$KS_DIR/shared\", type: DirectoryOrCreate}}]" \
    --container 'volumeMounts: [{name: shared, mountPath: /shared}]' | kc create -f - >/dev/null || ks_fail "create $1"
}
NOWRAP=mpi-k8s.io/agent-run=false
# worker-1 finishes (Succeeded) while the launcher runs, so that Running and All differ:
# it must outlive the launcher's init (the agent checks that every worker is reachable),
# and the launcher may end only once the operator has seen worker-1 Succeeded. The pods
# and this script take turns through files in a hostPath volume, not sleeps: on a loaded
# machine pods start seconds apart and watch events can lag by seconds.
W1DONE='if [ "$(hostname)" = "${0}-worker-1" ]; then until [ -e /shared/${0}.started ]; do sleep 0.2; done; exit 0; fi; exec sleep 365d'
LWAIT='touch /shared/${0}.started; until [ -e /shared/${0}.go ]; do sleep 0.2; done'
for j in None Running All; do
  n=clean-$(tr A-Z a-z <<<"$j")
  mk "$n" "$j" "${LWAIT//\$\{0\}/$n}" "${W1DONE//\$\{0\}/$n}" "" "$NOWRAP"
done
mk backoff Running 'sleep 3; echo boom >&2; exit 3' "" ", backoffLimit: 1" ""
mk deadline Running 'sleep 300' "" ", activeDeadlineSeconds: 10" "$NOWRAP"
mk wfail Running 'touch /shared/wfail.started; sleep 300' 'if [ "$(hostname)" = wfail-worker-1 ]; then until [ -e /shared/wfail.started ]; do sleep 0.2; done; exit 7; fi; exec sleep 365d' "" "$NOWRAP"
mk susp Running 'sleep 10' "" "" "$NOWRAP"
mk ttl None 'echo ttl says hello' "" ", ttlSecondsAfterFinished: 3" ""

# --- suspend / resume ---
wait_cond susp Running True 90
kc patch mpijob susp --type merge -p '{"spec":{"runPolicy":{"suspend":true}}}' >/dev/null || ks_fail "suspend patch"
wait_cond susp Suspended True 30
[ "$(cond susp Suspended reason)" = MPIJobSuspended ] || ks_fail "Suspended reason"
[ "$(cond susp Running status)/$(cond susp Running reason)" = False/MPIJobSuspended ] || ks_fail "Running not False/MPIJobSuspended"
ks_wait_for '[ -z "$(kc get pods -l mpi_job_name=susp -o jsonpath="{range .items[?(@.status.phase==\"Running\")]}{.metadata.name}{end}")" ]' 40 \
  || ks_fail "pods still running while suspended: $(kc get pods -l mpi_job_name=susp)"
[ "$(kc get job susp-launcher -o jsonpath='{.spec.suspend}')" = true ] || ks_fail "launcher Job not suspended"
kc patch mpijob susp --type merge -p '{"spec":{"runPolicy":{"suspend":false}}}' >/dev/null || ks_fail "resume patch"
wait_cond susp Suspended False 30
[ "$(cond susp Suspended reason)" = MPIJobResumed ] || ks_fail "Suspended reason after resume: $(cond susp Suspended reason)"
wait_cond susp Succeeded True 90

# --- cleanPodPolicy ---
for j in clean-none clean-running clean-all; do
  ks_wait_for "[ \"\$(kc get mpijob $j -o jsonpath='{.status.replicaStatuses.Worker.succeeded}')\" = 1 ]" 90 \
    || ks_fail "$j: the operator did not see worker-1 Succeeded: $(kc get pods -l mpi_job_name=$j)"
  touch "$KS_DIR/shared/$j.go" || ks_fail "$KS_DIR/shared/$j.go"
done
for j in clean-none clean-running clean-all; do wait_cond $j Succeeded True 90; done
sleep 3
left() { kc get pods -l "mpi_job_name=$1,mpi_role_type=worker" -o jsonpath='{range .items[?(@.metadata.deletionTimestamp)]}{end}{range .items[*]}{.metadata.name}:{.status.phase}:{.metadata.deletionTimestamp} {end}' | tr ' ' '\n' | grep -v ':.\+T' | grep . | sed 's/:$//' | sort | tr '\n' ' '; }
[ "$(left clean-none)" = "clean-none-worker-0:Running clean-none-worker-1:Succeeded " ] || ks_fail "None: $(left clean-none)"
ks_wait_for '[ "$(left clean-running)" = "clean-running-worker-1:Succeeded " ]' 30 || ks_fail "Running: $(left clean-running)"
ks_wait_for '[ -z "$(left clean-all)" ]' 30 || ks_fail "All: $(left clean-all)"
kc get pods -l mpi_job_name=clean-all,mpi_role_type=launcher -o name | grep -q . || ks_fail "All removed the launcher pod (its log)"

# --- backoffLimit with a failing launcher ---
wait_cond backoff Failed True 120
[ "$(cond backoff Failed reason)" = BackoffLimitExceeded ] || ks_fail "backoff reason: $(cond backoff Failed reason)"
msg=$(cond backoff Failed message)
case "$msg" in "MPIJob default/backoff has failed: BackoffLimitExceeded"*"launcher pod backoff-launcher-"*"exit"*) ;;
  *) ks_fail "backoff message lacks the Job reason and the launcher's termination message: $msg";; esac
[ "$(kc get job backoff-launcher -o jsonpath='{.status.failed}')" = 2 ] || ks_fail "backoffLimit 1 did not give 2 attempts"
[ "$(metric 18182 mpi_operator_jobs_restarted_total)" -ge 1 ] || { kc get mpijob backoff -o yaml; kc get events; metrics 18182 | grep jobs_; ctl_log a | grep backoff; ks_fail "restarted_total did not move"; }

# --- activeDeadlineSeconds ---
wait_cond deadline Failed True 60
[ "$(cond deadline Failed reason)" = DeadlineExceeded ] || ks_fail "deadline reason: $(cond deadline Failed reason)"
ks_wait_for '[ -z "$(kc get pods -l mpi_job_name=deadline,mpi_role_type=launcher --field-selector=status.phase=Running -o name)" ]' 40 \
  || ks_fail "launcher still running after the deadline"

# --- a failing worker ---
wait_cond wfail Failed True 60
msg=$(cond wfail Failed message)
case "$msg" in *"worker pod wfail-worker-1 failed"*) ;; *) ks_fail "worker failure message: $msg";; esac
ks_wait_for '[ "$(kc get job wfail-launcher -o jsonpath="{.spec.suspend}")" = true ]' 30 || ks_fail "launcher not stopped after worker failure"
ks_wait_for '[ -z "$(kc get pods -l mpi_job_name=wfail --field-selector=status.phase=Running -o name)" ]' 40 \
  || ks_fail "pods still running after worker failure: $(kc get pods -l mpi_job_name=wfail)"

# --- ttlSecondsAfterFinished: the launcher Job and its pod go 3 s after the Job finished ---
wait_cond ttl Succeeded True 90
ks_wait_for '! kc get job ttl-launcher >/dev/null 2>&1' 60 || ks_fail "ttl: launcher Job not deleted: $(kc get job ttl-launcher -o yaml)"
ks_wait_for '[ -z "$(kc get pods -l mpi_job_name=ttl,mpi_role_type=launcher -o name)" ]' 60 || ks_fail "ttl: launcher pod left"
# the MPIJob stays as it was, nothing is re-created, and the launcher's output is still readable
kc get mpijob ttl >/dev/null || ks_fail "ttl: the MPIJob was deleted"
[ "$(cond ttl Succeeded status)" = True ] || ks_fail "ttl: Succeeded lost: $(kc get mpijob ttl -o yaml)"
[ "$(kc get mpijob ttl -o jsonpath='{.status.replicaStatuses.Launcher.succeeded}')" = 1 ] ||
  ks_fail "ttl: Launcher replicaStatuses lost: $(kc get mpijob ttl -o jsonpath='{.status.replicaStatuses}')"
kc get cm ttl-log -o jsonpath='{.data.log}' | grep -q "ttl says hello" || ks_fail "ttl: log ConfigMap: $(kc get cm ttl-log -o yaml)"
ks_run "$BINDIR/mpi-agent" logs --kubeconfig "$KS_DIR/kubeconfig" -n default ttl 2>&1 | grep -q "ttl says hello" ||
  ks_fail "ttl: mpi-agent logs"
! kc get job ttl-launcher >/dev/null 2>&1 || ks_fail "ttl: launcher Job re-created"

metrics 18182 | promtool check metrics || ks_fail "promtool"
[ "$(metric 18182 mpi_operator_jobs_failed_total)" -ge 3 ] || ks_fail "failed_total"
[ "$(metric 18182 mpi_operator_jobs_successful_total)" -ge 5 ] || ks_fail "successful_total"
echo "PASS: cleanPodPolicy x3, backoffLimit, activeDeadlineSeconds, worker failure, suspend/resume, TTL"
