#!/usr/bin/env bash
# timeout: 300
# Why a job is not running shows in the MPIJob itself (controller/blocked.c): a worker asking
# for a GPU no node has makes condition Blocked=True/Unschedulable naming the pod and the
# scheduler's message, with one Warning Event (no further writes while the reason stays); a
# launcher whose image does not exist shows ImagePullBackOff naming the image and fails the
# job once it has been blocked for mpi-k8s.io/worker-timeout, with the image named.
set -u
. "$(dirname "$0")/controller_common.bash"
ctl_cluster
ctl_start a --leader-elect=false -v 1

# mk NAME WORKER_RESOURCES LAUNCHER_IMAGE TIMEOUT
mk() {
  mpijob_yaml "$1" --ann mpi-k8s.io/transport=exec --ann "mpi-k8s.io/worker-timeout=$4" --workers 1 \
    --launcher-image "$3" --command "[sh, -c, 'true']" --worker-container "resources: $2" |
    kc create -f - >/dev/null || ks_fail "create $1"
}
mk gpu '{limits: {nvidia.com/gpu: 1}}' mpik8s/openmpi 600
mk noimg '{}' example.com/does-not-exist:1 15

# 1. the GPU worker: Blocked names it and the scheduler's reason; the State column stays Created
wait_cond gpu Blocked True 60
[ "$(cond gpu Blocked reason)" = Unschedulable ] || ks_fail "reason $(cond gpu Blocked reason)"
msg=$(cond gpu Blocked message)
case $msg in
  "MPIJob default/gpu is blocked: worker pod gpu-worker-0: Unschedulable: 0/1 nodes are available: 1 Insufficient nvidia.com/gpu."*) ;;
  *) ks_fail "Blocked message: $msg" ;;
esac
state=$(kc get mpijob gpu --no-headers | awk '{print $2}')
[ "$state" = Created ] || ks_fail "State column $state, want Created"
ev() { kc get events --field-selector "involvedObject.kind=MPIJob,involvedObject.name=$1,reason=$2" -o name | wc -l; }
ks_wait_for '[ "$(ev gpu Unschedulable)" -eq 1 ]' 20 || ks_fail "no Unschedulable Event on MPIJob gpu"
kc describe mpijob gpu | grep -q 'Insufficient nvidia.com/gpu' || ks_fail "kubectl describe does not show the reason"
# bounded writes: the pod stays unschedulable (the scheduler retries): no new status, no new Event.
# The launcher pod starting is a real change the MPIJob records (launchPhases.launcherStarted);
# on a loaded machine it can come seconds after Blocked, so the quiet window starts after it.
ks_wait_for '[ -n "$(kc get mpijob gpu -o jsonpath={.status.launchPhases.launcherStarted})" ]' 30 ||
  ks_fail "launchPhases.launcherStarted never set on MPIJob gpu"
rv=$(kc get mpijob gpu -o jsonpath='{.metadata.resourceVersion}')
sleep 6
[ "$(kc get mpijob gpu -o jsonpath='{.metadata.resourceVersion}')" = "$rv" ] || ks_fail "MPIJob gpu rewritten while its reason stayed"
[ "$(ev gpu Unschedulable)" -eq 1 ] || ks_fail "more than one Unschedulable Event"

# 2. the launcher's image does not exist: Blocked names it, then Failed within the bound
wait_cond noimg Blocked True 90
[ "$(cond noimg Blocked reason)" = ImagePullBackOff ] || ks_fail "noimg reason $(cond noimg Blocked reason)"
case $(cond noimg Blocked message) in
  *"launcher pod noimg-launcher-"*"container l: "*"example.com/does-not-exist:1"*) ;;
  *) ks_fail "noimg Blocked message: $(cond noimg Blocked message)" ;;
esac
wait_cond noimg Failed True 60
# the bound runs from when the launcher was first seen blocked
since=$(date -d "$(cond noimg Blocked lastTransitionTime)" +%s)
done_at=$(date -d "$(kc get mpijob noimg -o jsonpath='{.status.completionTime}')" +%s)
took=$((done_at - since))
[ "$took" -ge 15 ] && [ "$took" -le 40 ] || ks_fail "noimg failed ${took}s after it was blocked, bound 15s"
msg=$(cond noimg Failed message)
case $msg in
  "MPIJob default/noimg has failed: launcher pod noimg-launcher-"*" could not start within 15s (mpi-k8s.io/worker-timeout): container l: "*"example.com/does-not-exist:1"*) ;;
  *) ks_fail "Failed message: $msg" ;;
esac
ks_wait_for '[ "$(ev noimg MPIJobFailed)" -eq 1 ]' 20 || ks_fail "no MPIJobFailed Event on noimg"
echo "noimg failed ${took}s after its launcher was blocked (bound 15s)"
kc delete mpijob gpu noimg --wait=false >/dev/null || true
echo PASS
