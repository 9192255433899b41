#!/usr/bin/env bash
# timeout: 600
# A failure of the user's program is retried only as the user asks, by exit code: the
# annotation mpi-k8s.io/pod-failure-policy is batch/v1's podFailurePolicy, applied by the real
# Job controller to the launcher, whose exit code is mpirun's (the failed rank's):
#  1. FailJob on every code but 0 and 75, backoffLimit 4: a rank exiting 3 fails the job at
#     once (reason PodFailurePolicy, one launcher pod, the rank named), not after 4 retries;
#  2. Ignore on 75, backoffLimit 0: the ranks exit 75 on the first attempt, which does not
#     count, and the second attempt succeeds (without the rule backoffLimit 0 would fail it);
#     the first attempt's rank stays in status.rankFailure.
set -u
export KUBE_BACKEND=k8s
. "$(dirname "$0")/../../integration/controller_common.bash"
ks_skip_unless_root
ks_up
ctl_deploy

# job NAME BACKOFF POLICY RANK-SCRIPT
job() {
  mpijob_yaml "$1" --ann "mpi-k8s.io/pod-failure-policy=$3" --slots 1 \
    --run-policy "{cleanPodPolicy: Running, backoffLimit: $2}" --restart Never --image mpik8s/openmpi:latest \
    --names launcher,worker --launcher-pod 'terminationGracePeriodSeconds: 5' --worker-pod 'terminationGracePeriodSeconds: 2' \
    --command "[mpirun, -np, \"2\", --bind-to, none, sh, -c, '$4']" \
    --launcher-container 'env: [{name: OMPI_ALLOW_RUN_AS_ROOT, value: "1"}, {name: OMPI_ALLOW_RUN_AS_ROOT_CONFIRM, value: "1"}]' \
    --container 'resources: {requests: {cpu: 100m}}'
}
launchers() { kc get pods -l "mpi_job_name=$1,mpi_role_type=launcher" --no-headers 2>/dev/null | wc -l; }
dump() { kc get mpijob "$1" -o yaml; kc get job "$1-launcher" -o yaml | tail -40; kc get pods -o wide; }

echo "pod_failure_policy: 1. FailJob: a rank exits 3, backoffLimit 4"
job fj 4 '{"rules":[{"action":"FailJob","onExitCodes":{"operator":"NotIn","values":[0,75]}}]}' \
  'if [ "$OMPI_COMM_WORLD_RANK" = 1 ]; then exit 3; fi; sleep 2' | kc create -f - >/dev/null || ks_fail "create fj"
[ "$(kc get job fj-launcher -o jsonpath='{.spec.podFailurePolicy.rules[0].action}' 2>/dev/null)" = FailJob ] ||
  ks_wait_for "[ \"\$(kc get job fj-launcher -o jsonpath='{.spec.podFailurePolicy.rules[0].action}')\" = FailJob ]" 30 ||
  { dump fj; ks_fail "the launcher Job has no podFailurePolicy"; }
wait_cond fj Failed True 120
msg=$(cond fj Failed message); reason=$(cond fj Failed reason)
echo "   Failed/$reason: $msg"
[ "$reason" = PodFailurePolicy ] || { dump fj; ks_fail "fj: reason $reason, want PodFailurePolicy (the Job's)"; }
echo "$msg" | grep -q 'exit code 3' || { dump fj; ks_fail "fj: the message does not name exit code 3"; }
[ "$(kc get job fj-launcher -o jsonpath='{.status.failed}')" = 1 ] || { dump fj; ks_fail "fj: the launcher was retried"; }

echo "pod_failure_policy: 2. Ignore 75, backoffLimit 0: the first attempt exits 75, the second succeeds"
job ig 0 '{"rules":[{"action":"Ignore","onExitCodes":{"operator":"In","values":[75]}}]}' \
  'if [ -f /tmp/attempted ]; then echo second-attempt; exit 0; fi; touch /tmp/attempted; exit 75' |
  kc create -f - >/dev/null || ks_fail "create ig"
wait_cond ig Succeeded True 180
# the Job does not count an ignored failure (status.failed stays 0); the operator kept the
# first attempt's record
[ "$(kc get mpijob ig -o jsonpath='{.status.rankFailure.exitCode}')" = 75 ] ||
  { dump ig; ks_fail "ig: the first attempt's exit 75 is not in status.rankFailure"; }
[ "$(kc get job ig-launcher -o jsonpath='{.status.failed}')" = "" ] || { dump ig; ks_fail "ig: the ignored failure was counted"; }
echo "   Succeeded; the ignored attempt: $(kc get mpijob ig -o jsonpath='{.status.rankFailure.message}')"
echo ok
