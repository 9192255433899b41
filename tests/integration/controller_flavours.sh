#!/usr/bin/env bash
# timeout: 420
# The examples in both API versions, both transports and both MPI flavours
# available here, run to Succeeded on kubesim: v2beta1 pi (Open MPI over SSH:
# the operator's ed25519 Secret, workers' default sshd) and v1alpha2 pi-mpich
# (MPICH/Hydra over the exec API), one after the other;
# checks each job's hostfile format, the Secret, and the program's output.
set -u
. "$(dirname "$0")/controller_common.bash"
ctl_cluster
ctl_start a --monitoring-port 18185 --leader-elect=false
jobs=(v2beta1/pi)
if command -v mpiexec.hydra >/dev/null; then jobs+=(v1alpha2/pi-mpich); else echo "note: no MPICH here, the MPICH job is left out"; fi
run_one() {
  local j=$1 f=$ROOT/examples/$1.yaml
  if [ "${j%%/*}" = v1alpha2 ]; then
    # same name as the v2beta1 one: create it under another name
    sed 's/^  name: pi-mpich$/  name: pi-mpich-exec/' "$f" | kc create -f - >/dev/null || ks_fail "create $j"
  else
    kc create -f "$f" >/dev/null || ks_fail "create $j"
  fi
}
names=(pi)
command -v mpiexec.hydra >/dev/null && names+=(pi-mpich-exec)
for i in "${!names[@]}"; do
  n=${names[$i]}
  run_one "${jobs[$i]}"
  ks_wait_for "[ \"\$(cond $n Succeeded status)\" = True ] || [ \"\$(cond $n Failed status)\" = True ]" 180 || true
  [ "$(cond "$n" Succeeded status)" = True ] || { kc get mpijob "$n" -o yaml; kc get pods -o wide; kc logs -l "mpi_job_name=$n,mpi_role_type=launcher" --tail 30 --all-containers; ks_fail "$n did not succeed"; }
  L=$(kc get pods -l "mpi_job_name=$n,mpi_role_type=launcher" -o name | tail -1)
  kc logs "$L" | grep -q 'pi is approximately 3.14' || ks_fail "$n: no program output in $L"
done
# Open MPI over SSH: FQDN hostfile, the key Secret (ed25519, authorized_keys = public key)
kc get cm pi-config -o jsonpath='{.data.hostfile}' | grep -qx 'pi-worker-0.pi.default.svc slots=1' || ks_fail "pi hostfile"
[ "$(kc get secret pi-ssh -o jsonpath='{.type}')" = kubernetes.io/ssh-auth ] || ks_fail "pi-ssh type"
pub=$(kc get secret pi-ssh -o jsonpath='{.data.ssh-publickey}' | base64 -d)
case "$pub" in "ssh-ed25519 "*) ;; *) ks_fail "public key is not ed25519: $pub";; esac
[ "$(kc get secret pi-ssh -o jsonpath='{.data.authorized_keys}' | base64 -d)" = "$pub" ] || ks_fail "authorized_keys != public key"
kc get secret pi-ssh -o jsonpath='{.data.ssh-privatekey}' | base64 -d | grep -q 'BEGIN OPENSSH PRIVATE KEY' || ks_fail "private key format"
[ "$(kc get job pi-launcher -o jsonpath='{.spec.template.spec.containers[0].env[?(@.name=="MPI_JOB_TRANSPORT")].value}')" = ssh ] || ks_fail "pi transport"
if command -v mpiexec.hydra >/dev/null; then
  kc get cm pi-mpich-exec-config -o jsonpath='{.data.hostfile}' | grep -qx 'pi-mpich-exec-worker-1:1' || ks_fail "MPICH exec hostfile"
  [ "$(kc get job pi-mpich-exec-launcher -o jsonpath='{.spec.template.spec.containers[0].env[?(@.name=="HYDRA_LAUNCHER_EXEC")].value}')" = /opt/kube/mpi-rsh ] || ks_fail "Hydra env"
  kc get secret pi-mpich-exec-ssh >/dev/null 2>&1 && ks_fail "exec-transport job got an SSH Secret"
fi
echo "PASS: ${names[*]} Succeeded"
