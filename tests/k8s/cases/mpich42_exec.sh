#!/usr/bin/env bash
# timeout: 240
# Issue #36 on the real cluster: upstream's pi example shape on Debian 13's MPICH 4.2 (Hydra)
# over our exec transport, 2 ranks on 2 workers (mpik8s/mpi-pi:mpich4.2-trixie, built by
# tests/k8s/run.sh with `images/build-images.sh mpi-pi:mpich4.2-trixie`; Debian 12's MPICH 4.0
# is what every other MPICH test runs). Hydra must launch its proxies through mpi-rsh
# (HYDRA_LAUNCHER_EXEC, docs/controller.md): the job succeeds with the launch watch silent. A
# second job's rank 1 raises SIGSEGV after MPI_Init (pi's MPI_PI_EXIT_RANK): Hydra's "BAD
# TERMINATION" account must be attributed in the Failed condition to the worker pod, its node and
# the signal: by the process's PID (Hydra prints no rank), and since Hydra 4.2 prints the signal
# as "EXIT CODE: 11" (no EXIT STRING line as 4.0), as that code with the signal it may be. A rank
# that merely exits with a code gets no account from Hydra (4.0 and 4.2: only mpiexec's exit
# code), so there is nothing to attribute; docs/controller.md says so. The cluster is removed on exit, pass or
# fail (the EXIT trap of tests/lib/kubesim.sh).
set -u
export KUBE_BACKEND=k8s
. "$(dirname "$0")/../../integration/controller_common.bash"
IMG=mpik8s/mpi-pi:mpich4.2-trixie
docker image inspect "$IMG" >/dev/null 2>&1 ||
  ks_fail "no $IMG in the Docker Engine (ENGINE=docker images/build-images.sh mpi-pi:mpich4.2-trixie)"
ctl_cluster
# AGENT_IMAGE: a launcher init image other than the default (a branch's own mpi-agent build)
ctl_start a --leader-elect=false --monitoring-port 18188 ${AGENT_IMAGE:+--agent-image "$AGENT_IMAGE"}
# mk NAME CPU MPIEXEC-ARGS...: 2 workers, the launcher running Hydra's mpiexec with those arguments
mk() {
  local name=$1 cpu=$2; shift 2
  local args; args=$(printf '"%s", ' "$@")
  kc create -f - >/dev/null <<YAML || ks_fail "create $name"
apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata:
  name: $name
  annotations: {mpi-k8s.io/transport: exec, mpi-k8s.io/worker-timeout: "90"}
spec:
  slotsPerWorker: 1
  mpiImplementation: MPICH
  runPolicy: {cleanPodPolicy: None, backoffLimit: 0}
  mpiReplicaSpecs:
    Launcher:
      replicas: 1
      template:
        spec:
          containers:
          - name: mpi-launcher
            image: $IMG
            securityContext: {runAsUser: 1000}
            command: [mpiexec, ${args%, }]
            resources: {limits: {cpu: $cpu, memory: 512Mi}}
    Worker:
      replicas: 2
      template:
        spec:
          containers:
          - name: mpi-worker
            image: $IMG
            securityContext: {runAsUser: 1000}
            resources: {limits: {cpu: $cpu, memory: 512Mi}}
YAML
}
mk m42pi 250m -n 2 /home/mpiuser/pi
mk m42fail 100m -n 2 -genv MPI_PI_EXIT_RANK 1 -genv MPI_PI_EXIT_SIGNAL 11 /home/mpiuser/pi

ks_wait_for '[ "$(cond m42pi Succeeded status)" = True ] || [ "$(cond m42pi Failed status)" = True ]' 150 || true
log=$(kc logs -l mpi_job_name=m42pi,mpi_role_type=launcher -c mpi-launcher --tail -1 2>&1)
if [ "$(cond m42pi Succeeded status)" != True ]; then
  kc get mpijob m42pi -o yaml; kc get pods -o wide; echo "$log" | tail -40
  ks_fail "m42pi did not succeed: $(cond m42pi Failed message)"
fi
echo "$log" | grep -q 'pi is approximately 3.14' || ks_fail "no pi in m42pi's launcher log"
echo "$log" | grep -q 'started no daemon' && ks_fail "the launch watch fired: $(echo "$log" | grep 'started no daemon')"

ks_wait_for '[ "$(cond m42fail Failed status)" = True ]' 100 || { kc get mpijob m42fail -o yaml; ks_fail "m42fail did not fail"; }
msg=$(cond m42fail Failed message)
node=$(kc get mpijob m42fail -o jsonpath='{.status.rankFailure.node}')
echo "m42fail: $msg"
case $msg in
  # Hydra 4.2 prints a signal as "EXIT CODE: 11" with no EXIT STRING line: the message says both
  *"(PID "*") on pod m42fail-worker-1 (node $node) exited with code 11 (or killed by SIGSEGV: Hydra reports both as 11)"*) ;;
  *"on pod m42fail-worker-1 (node $node) was killed by SIGSEGV"*) echo "NOTE: this Hydra tells the signal" ;;
  *) kc get cm m42fail-log -o jsonpath='{.data.log}' | tail -n 40
     ks_fail "m42fail: Failed message does not name m42fail-worker-1, node '$node' and SIGSEGV: $msg" ;;
esac
[ -n "$node" ] && [ "$(kc get mpijob m42fail -o jsonpath='{.status.rankFailure.mpi}')" = mpich ] ||
  ks_fail "m42fail: status.rankFailure lacks the node or mpi=mpich: $(kc get mpijob m42fail -o jsonpath='{.status.rankFailure}')"
# the stack, for the record
kc exec m42pi-worker-0 -- mpiexec --version 2>&1 | grep -m1 -i 'version'
echo ok
