#!/usr/bin/env bash
# timeout: 300
# Two operators on one cluster (upstream's Lease timings, 15 s / 5 s / 3 s):
# only the Lease holder acts, the standby reports is_leader 0 and touches
# nothing; the holder is killed (SIGKILL) mid-job and the standby takes over
# within lease + retry, converging the running job without duplicates; a
# restarted operator stands by; SIGTERM releases the Lease for an immediate
# hand-over; the job ends Succeeded with one condition of each type.
set -u
. "$(dirname "$0")/controller_common.bash"
ctl_cluster
ctl_start a --monitoring-port 18183 -v 1
ks_wait_for "grep -q 'acquired the leader lease' $KS_DIR/op-a.log" 20 || ks_fail "a did not lead: $(ctl_log a)"
ctl_start b --monitoring-port 18184 -v 1
ks_wait_for "grep -q 'waiting for the leader lease' $KS_DIR/op-b.log" 20 || ks_fail "b not standing by"
ks_wait_for "[ \"\$(metric 18184 mpi_operator_is_leader)\" = 0 ]" 10 || ks_fail "b is_leader != 0"
[ "$(metric 18183 mpi_operator_is_leader)" = 1 ] || ks_fail "a is_leader != 1"

mk() {
  mpijob_yaml "$1" --api v1alpha2 --ann mpi-k8s.io/agent-run=false --spec 'cleanPodPolicy: Running' \
    --command "[sh, -c, \"$2\"]" | kc create -f - >/dev/null || ks_fail "create $1"
}
mk ha1 'sleep 40'
wait_cond ha1 Running True 90
grep -q 'synced default/ha1' "$KS_DIR/op-b.log" && ks_fail "the standby acted on ha1"
t0=$(date +%s)
ctl_stop a KILL
ks_wait_for "grep -q 'acquired the leader lease' $KS_DIR/op-b.log" 30 || ks_fail "b did not take over"
took=$(( $(date +%s) - t0 ))
echo "standby took over after ${took}s (lease 15 s + retry 3 s)"
[ "$took" -le 25 ] || ks_fail "takeover took ${took}s"
mk ha2 'sleep 1'
wait_cond ha2 Succeeded True 90
# restart the old leader: it stands by; SIGTERM on b releases the Lease at once
ctl_start a --monitoring-port 18183 -v 1
ks_wait_for "[ \$(grep -c 'waiting for the leader lease' $KS_DIR/op-a.log) -ge 2 ]" 20 || ks_fail "restarted a not standing by"
sleep 2
grep -c 'acquired the leader lease' "$KS_DIR/op-a.log" | grep -qx 1 || ks_fail "a re-acquired while b held the lease"
t0=$(date +%s)
ctl_stop b TERM
grep -q 'released the leader lease' "$KS_DIR/op-b.log" || ks_fail "b did not release the lease on SIGTERM"
ks_wait_for "[ \$(grep -c 'acquired the leader lease' $KS_DIR/op-a.log) -ge 2 ]" 10 || ks_fail "a did not take the released lease"
echo "hand-over after SIGTERM: $(( $(date +%s) - t0 ))s"
wait_cond ha1 Succeeded True 120
for j in ha1 ha2; do
  types=$(kc get mpijob $j -o jsonpath='{range .status.conditions[*]}{.type} {end}')
  [ "$types" = "Created Running Succeeded " ] || ks_fail "$j conditions: $types"
done
[ "$(kc get jobs -l training.kubeflow.org/job-name=ha1 -o name | wc -l)" = 1 ] || ks_fail "duplicate launcher Jobs"
[ "$(kc get pods -l mpi_job_name=ha1,mpi_role_type=launcher -o name | wc -l)" = 1 ] || ks_fail "more than one launcher pod"
created_events=$(kc get events -o jsonpath='{range .items[?(@.reason=="MPIJobCreated")]}{.involvedObject.name}:{.count}{"\n"}{end}' | grep -c '^ha1:')
[ "$created_events" = 1 ] || ks_fail "ha1 Created events: $(kc get events | grep mpijob/ha1)"
succ_events=$(kc get events -o jsonpath='{range .items[?(@.reason=="MPIJobSucceeded")]}{.involvedObject.name}{"\n"}{end}' | grep -c '^ha1$')
[ "$succ_events" = 1 ] || ks_fail "ha1 Succeeded events: $(kc get events | grep mpijob/ha1)"
[ "$(metric 18183 mpi_operator_jobs_created_total)" = 0 ] || ks_fail "a re-created jobs another leader created"
echo "PASS: leader election, takeover, restart without duplicates"
