#!/usr/bin/env bash
# timeout: 300
# A launcher template's own serviceAccountName is kept (as upstream): the launcher
# pod runs under that account, the operator's Role is bound to it (not to
# <job>-launcher), and the job Succeeds over the exec transport, whose mpi-rsh
# needs the Role's pods/exec grant through that account.
set -u
. "$(dirname "$0")/controller_common.bash"
command -v mpirun >/dev/null || { echo "skip: no mpirun"; exit 77; }
ctl_cluster
ctl_start a --leader-elect=false
kc create serviceaccount pi-runner >/dev/null || ks_fail "create serviceaccount"
mpijob_yaml pi-sa --ann mpi-k8s.io/transport=exec --slots 1 --run-policy '{cleanPodPolicy: Running}' \
  --image mpik8s/nccl-benchmarks:latest --names pi,pi --launcher-pod 'serviceAccountName: pi-runner' \
  --command '["mpirun", "--allow-run-as-root", "-np", "2", "-x", "PATH", "-mca", "pml", "ob1", "-mca", "btl", "^openib", "mpi-pi"]' |
  kc create -f - >/dev/null || ks_fail "create MPIJob"
ks_wait_for "[ \"\$(cond pi-sa Succeeded status)\" = True ] || [ \"\$(cond pi-sa Failed status)\" = True ]" 200 || true
if [ "$(cond pi-sa Succeeded status)" != True ]; then
  kc get mpijob pi-sa -o yaml; kc get pods -o wide
  kc logs -l mpi_job_name=pi-sa,mpi_role_type=launcher --all-containers --tail 30
  ks_fail "pi-sa did not succeed"
fi
L=$(kc get pods -l mpi_job_name=pi-sa,mpi_role_type=launcher -o name | tail -1)
sa=$(kc get "$L" -o jsonpath='{.spec.serviceAccountName}')
[ "$sa" = pi-runner ] || ks_fail "launcher pod runs as '$sa', want pi-runner"
kc logs "$L" | grep -q 'pi is approximately 3.14' || ks_fail "no pi in the launcher log"
subj=$(kc get rolebinding pi-sa-launcher -o jsonpath='{.subjects[0].kind}/{.subjects[0].name}/{.roleRef.name}')
[ "$subj" = ServiceAccount/pi-runner/pi-sa-launcher ] || ks_fail "RoleBinding binds '$subj'"
# the account really holds the Role's grant (and only through the binding)
[ "$(kc auth can-i create pods/pi-sa-worker-1 --subresource=exec -n default --as system:serviceaccount:default:pi-runner 2>/dev/null)" = yes ] \
  || ks_fail "pi-runner cannot exec into the workers"
kc delete mpijob pi-sa --wait=false >/dev/null || ks_fail "delete"
echo "PASS"
