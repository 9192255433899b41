#!/usr/bin/env bash
# timeout: 150
# Issue #36 on the real cluster: upstream's pi example shape on Debian 13's Open MPI 5.0 (PRRTE)
# over our exec transport, 2 ranks on 2 workers (mpik8s/mpi-pi:openmpi5-trixie, built by
# tests/k8s/run.sh with `images/build-images.sh mpi-pi:openmpi5-trixie`). Before, PRRTE ignored
# the PRTE_MCA_plm_rsh_* names we set, ran ssh to port 2222 and the launcher failed in 0.1 s;
# with PRRTE's own names (PRTE_MCA_plm_ssh_agent, docs/controller.md "Open MPI 4 and 5") the
# job succeeds, every rank on a worker, and the launch watch never fires. The cluster is
# removed on exit, pass or fail (the EXIT trap of tests/lib/kubesim.sh).
set -u
export KUBE_BACKEND=k8s
. "$(dirname "$0")/../../integration/controller_common.bash"
IMG=mpik8s/mpi-pi:openmpi5-trixie
docker image inspect "$IMG" >/dev/null 2>&1 ||
  ks_fail "no $IMG in the Docker Engine (ENGINE=docker images/build-images.sh mpi-pi:openmpi5-trixie)"
ctl_cluster
ctl_start a --leader-elect=false --monitoring-port 18186
kc create -f - >/dev/null <<YAML || ks_fail "create o5exec"
apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata:
  name: o5exec
  annotations: {mpi-k8s.io/transport: exec, mpi-k8s.io/worker-timeout: "90"}
spec:
  slotsPerWorker: 1
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
            command: [mpirun, -n, "2", /home/mpiuser/pi]
            resources: {limits: {cpu: 300m, memory: 512Mi}}
    Worker:
      replicas: 2
      template:
        spec:
          containers:
          - name: mpi-worker
            image: $IMG
            securityContext: {runAsUser: 1000}
            resources: {limits: {cpu: 300m, memory: 512Mi}}
YAML
done_() { [ "$(cond o5exec Succeeded status)" = True ] || [ "$(cond o5exec Failed status)" = True ]; }
ks_wait_for done_ 100 || true
L=$(kc get pods -l mpi_job_name=o5exec,mpi_role_type=launcher -o name | tail -1)
log=$(kc logs "$L" -c mpi-launcher 2>&1)
if [ "$(cond o5exec Succeeded status)" != True ]; then
  kc get mpijob o5exec -o yaml; kc get pods -o wide; echo "$log" | tail -40
  ks_fail "o5exec did not succeed: $(cond o5exec Failed message)"
fi
echo "$log" | grep -q 'pi is approximately 3.14' || ks_fail "no pi in the launcher's log"
echo "$log" | grep -q 'started no daemon' && ks_fail "the launch watch fired: $(echo "$log" | grep 'started no daemon')"
# the stack, for the record: PRRTE's version in the image
kc exec o5exec-worker-0 -- prterun --version 2>&1 | head -1
echo ok
