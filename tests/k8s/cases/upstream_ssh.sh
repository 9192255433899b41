#!/usr/bin/env bash
# timeout: 600
# Upstream MPI Operator's own v2beta1 install (deploy/v2beta1/mpi-operator.yaml of its Go
# module, github.com/kubeflow/mpi-operator at MPI_OPERATOR_VERSION) with only the operator's
# image swapped for ours, on the real cluster: its CRD, its ClusterRole, its Deployment and
# flags. Then upstream's pi example shape (examples/v2beta1/pi-upstream-image.yaml, image
# swapped for mpik8s/mpi-pi) over SSH: as uid 1000 (the image's sshd on the Secret mounted
# 0644 at /home/mpiuser/.ssh) and as root (/root/.ssh, 0600, the operator's default sshd).
# Then the same uid-1000 job on upstream's current stack, Debian 13's Open MPI 5.0.7 (PRRTE:
# mpik8s/mpi-pi:openmpi5-trixie), whose ssh launch reads PRTE_MCA_plm_ssh_* (issue #36): it must
# succeed with one rank on each worker.
set -u
export KUBE_BACKEND=k8s
. "$(dirname "$0")/../../integration/controller_common.bash"
. "$ROOT/tests/k8s/versions.env"
ks_skip_unless_root
command -v go >/dev/null || PATH=$PATH:/usr/local/go/bin
mod=$(go mod download -json "github.com/kubeflow/mpi-operator@v$MPI_OPERATOR_VERSION" 2>/dev/null |
  sed -n 's/^[[:space:]]*"Dir": "\(.*\)",*$/\1/p')
[ -f "$mod/deploy/v2beta1/mpi-operator.yaml" ] ||
  ks_fail "github.com/kubeflow/mpi-operator v$MPI_OPERATOR_VERSION: no deploy/v2beta1/mpi-operator.yaml from the Go module proxy"
ks_up
W=$KS_DIR/w; mkdir -p "$W"
grep -c "image: mpioperator/mpi-operator:" "$mod/deploy/v2beta1/mpi-operator.yaml" | grep -qx 1 ||
  ks_fail "upstream's install no longer names one mpioperator/mpi-operator image"
sed 's|image: mpioperator/mpi-operator:.*|image: mpik8s/mpi-operator:latest|' "$mod/deploy/v2beta1/mpi-operator.yaml" >"$W/install.yaml"
diff <(sed 's|image: mpioperator/mpi-operator:.*||' "$mod/deploy/v2beta1/mpi-operator.yaml") \
     <(sed 's|image: mpik8s/mpi-operator:latest||' "$W/install.yaml") >/dev/null || ks_fail "the install differs beyond the image"
kc create -f "$W/install.yaml" >/dev/null || ks_fail "kubectl create -f upstream's deploy/v2beta1/mpi-operator.yaml"
kc -n mpi-operator wait --for=condition=Available deployment/mpi-operator --timeout=120s ||
  ks_fail "our operator under upstream's install is not Available: $(kc -n mpi-operator get pods; kc -n mpi-operator logs deploy/mpi-operator --tail 20)"

EX=$ROOT/examples/v2beta1/pi-upstream-image.yaml
# The example asks 1 CPU per pod, as upstream's: 3 CPUs a job, which this 2-core node cannot
# schedule (the real scheduler counts requests; kubesim does not), so 300m here.
sed -e 's|image: mpioperator/mpi-pi:openmpi|image: mpik8s/mpi-pi:latest|' -e 's/cleanPodPolicy: Running/cleanPodPolicy: None/' \
    -e 's/limits: {cpu: 1, memory: 1Gi}/limits: {cpu: 300m, memory: 512Mi}/' "$EX" >"$W/pi.yaml"
grep -q 'cpu: 300m' "$W/pi.yaml" || ks_fail "$EX no longer limits cpu: 1"
grep -q 'image: mpik8s/mpi-pi:latest' "$W/pi.yaml" || ks_fail "$EX no longer names mpioperator/mpi-pi:openmpi"
kc create -f "$W/pi.yaml" >/dev/null || ks_fail "create pi-upstream"
sed -e 's/^  name: pi-upstream$/  name: pi-upstream-root/' \
    -e 's|sshAuthMountPath: /home/mpiuser/.ssh|sshAuthMountPath: /root/.ssh|' \
    -e '/securityContext:/d' -e '/runAsUser: 1000/d' -e '/command: \[\/usr\/sbin\/sshd\]/d' -e '/args: \[-De,/d' \
    -e 's|args: \["-n"|args: ["--allow-run-as-root", "-n"|' "$W/pi.yaml" | kc create -f - >/dev/null || ks_fail "create pi-upstream-root"

done_() { [ "$(cond "$1" Succeeded status)" = True ] || [ "$(cond "$1" Failed status)" = True ]; }
for n in pi-upstream pi-upstream-root; do
  ks_wait_for "done_ $n" 300 || true
  if [ "$(cond "$n" Succeeded status)" != True ]; then
    kc get mpijob "$n" -o yaml; kc get pods -o wide
    kc logs -l "mpi_job_name=$n,mpi_role_type=launcher" --tail 40 --all-containers
    kc -n mpi-operator logs deploy/mpi-operator --tail 30
    ks_fail "$n did not succeed"
  fi
  L=$(kc get pods -l "mpi_job_name=$n,mpi_role_type=launcher" -o name | tail -1)
  kc logs "$L" -c mpi-launcher | grep -q 'pi is approximately 3.14' || ks_fail "$n: no pi in the log of $L"
done
out=$(kc exec pi-upstream-worker-0 -- sh -c 'id -un; stat -L -c "%n %a" /home/mpiuser/.ssh/id_rsa /home/mpiuser/.ssh/authorized_keys') ||
  ks_fail "exec into pi-upstream-worker-0"
[ "$out" = "mpiuser
/home/mpiuser/.ssh/id_rsa 644
/home/mpiuser/.ssh/authorized_keys 644" ] || ks_fail "worker as mpiuser: $out"
out=$(kc exec pi-upstream-root-worker-0 -- sh -c 'id -un; stat -L -c "%n %a" /root/.ssh/id_rsa /root/.ssh/authorized_keys') ||
  ks_fail "exec into pi-upstream-root-worker-0"
[ "$out" = "root
/root/.ssh/id_rsa 600
/root/.ssh/authorized_keys 600" ] || ks_fail "worker as root: $out"
lp=$(kc get pods -l mpi_job_name=pi-upstream,mpi_role_type=launcher -o jsonpath='{.items[0].spec.containers[0].securityContext.runAsUser}')
[ "$lp" = 1000 ] || ks_fail "launcher runAsUser '$lp'"

# Open MPI 5 over SSH (not on IPv6-only pods, where PRRTE 3.0 crashes: ipv6_stacks.sh)
if [ "${K8S_IP_FAMILY:-ipv4}" = ipv6 ]; then echo "NOTE: Open MPI 5 over SSH left out: IPv6-only pods"; echo ok; exit 0; fi
# the first two jobs' pods hold the node's CPU, so they go first
O5=mpik8s/mpi-pi:openmpi5-trixie
docker image inspect "$O5" >/dev/null 2>&1 || ks_fail "no $O5 in the Docker Engine (ENGINE=docker images/build-images.sh mpi-pi:openmpi5-trixie)"
kc delete mpijob pi-upstream pi-upstream-root --wait=true --timeout=90s >/dev/null || ks_fail "delete the first two jobs"
sed -e 's/^  name: pi-upstream$/  name: pi-upstream-o5/' -e "s|image: mpik8s/mpi-pi:latest|image: $O5|" "$W/pi.yaml" |
  kc create -f - >/dev/null || ks_fail "create pi-upstream-o5"
ks_wait_for "done_ pi-upstream-o5" 240 || true
log=$(kc logs -l mpi_job_name=pi-upstream-o5,mpi_role_type=launcher -c mpi-launcher --tail -1 2>&1)
if [ "$(cond pi-upstream-o5 Succeeded status)" != True ]; then
  kc get mpijob pi-upstream-o5 -o yaml; kc get pods -o wide; echo "$log" | tail -40
  ks_fail "pi-upstream-o5 (Open MPI 5 over SSH) did not succeed: $(cond pi-upstream-o5 Failed message)"
fi
echo "$log" | grep -q 'pi is approximately 3.14' || ks_fail "pi-upstream-o5: no pi in the launcher's log"
ranks_one_per_worker pi-upstream-o5 "$log"
kc exec pi-upstream-o5-worker-0 -- prterun --version 2>&1 | head -1
echo ok
