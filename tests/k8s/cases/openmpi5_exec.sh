#!/usr/bin/env bash
# timeout: 300
# Issue #36 on the real cluster: upstream's pi example shape on Debian 13's Open MPI 5.0 (PRRTE)
# over our exec transport, 2 ranks on 2 workers (mpik8s/mpi-pi:openmpi5-trixie, built by
# tests/k8s/run.sh with `images/build-images.sh mpi-pi:openmpi5-trixie`). Before, PRRTE ignored
# the PRTE_MCA_plm_rsh_* names we set, ran ssh to port 2222 and the launcher failed in 0.1 s;
# with PRRTE's own names (PRTE_MCA_plm_ssh_agent, docs/controller.md "Open MPI 4 and 5") the
# job succeeds, every rank on a worker, and the launch watch never fires. A second job makes
# PRRTE run ssh itself again (`--prtemca plm_ssh_agent ssh`, the issue's failure): it must fail
# at once with the launch watch's line naming PRRTE and PRTE_MCA_plm_ssh_agent in its Failed
# condition. A third job's rank 1 exits 3: PRRTE's account of it (help-prterun.txt's
# "proc-failed-to-start"/"non-zero status" texts, which the failure parser was written from) must
# name rank 1, its worker pod and node and the exit code in the Failed condition. A fourth runs
# pi with runLauncherAsWorker: one rank on the launcher, one on the worker (docs/controller.md).
# The cluster is removed on exit, pass or fail (the EXIT trap of tests/lib/kubesim.sh).
set -u
export KUBE_BACKEND=k8s
. "$(dirname "$0")/../../integration/controller_common.bash"
IMG=mpik8s/mpi-pi:openmpi5-trixie
docker image inspect "$IMG" >/dev/null 2>&1 ||
  ks_fail "no $IMG in the Docker Engine (ENGINE=docker images/build-images.sh mpi-pi:openmpi5-trixie)"
ctl_cluster
# AGENT_IMAGE: a launcher init image other than the default (a branch's own mpi-agent build)
ctl_start a --leader-elect=false --monitoring-port 18186 ${AGENT_IMAGE:+--agent-image "$AGENT_IMAGE"}
# mk NAME CPU MPIRUN-ARGS...: 2 workers, the launcher running mpirun with those arguments
# (LAW=1: runLauncherAsWorker and 1 worker)
mk() {
  local name=$1 cpu=$2 law= workers=2; shift 2
  [ -z "${LAW:-}" ] || { law='runLauncherAsWorker: true'; workers=1; }
  local args; args=$(printf '"%s", ' "$@")
  kc create -f - >/dev/null <<YAML || ks_fail "create $name"
apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata:
  name: $name
  annotations: {mpi-k8s.io/transport: exec, mpi-k8s.io/worker-timeout: "90"}
spec:
  slotsPerWorker: 1
  $law
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
            command: [mpirun, ${args%, }]
            resources: {limits: {cpu: $cpu, memory: 512Mi}}
    Worker:
      replicas: $workers
      template:
        spec:
          containers:
          - name: mpi-worker
            image: $IMG
            securityContext: {runAsUser: 1000}
            resources: {limits: {cpu: $cpu, memory: 512Mi}}
YAML
}
mk o5exec 250m -n 2 /home/mpiuser/pi
mk o5ssh 60m --prtemca plm_ssh_agent ssh -n 2 /home/mpiuser/pi
mk o5fail 100m -n 2 sh -c 'echo rank $OMPI_COMM_WORLD_RANK up on $(hostname); [ $OMPI_COMM_WORLD_RANK != 1 ] || exit 3; exec sleep 120'
LAW=1 mk o5law 250m -n 2 /home/mpiuser/pi
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
failed_() { [ "$(cond o5ssh Failed status)" = True ]; }
ks_wait_for failed_ 60 || { kc get mpijob o5ssh -o yaml; ks_fail "o5ssh (PRRTE's own ssh) did not fail"; }
msg=$(cond o5ssh Failed message)
echo "o5ssh: $msg"
case $msg in *"Open MPI 5 (PRRTE) started no daemon through"*"PRTE_MCA_plm_ssh_agent ('ssh', set instead of"*) ;;
  *"Open MPI 5 (PRRTE) started no daemon through"*"PRTE_MCA_plm_ssh_agent"*) ;;
  *) ks_fail "o5ssh failed without the launch watch's line: $msg" ;; esac
# PRRTE's account of a failed rank, attributed
ks_wait_for '[ "$(cond o5fail Failed status)" = True ]' 100 || { kc get mpijob o5fail -o yaml; ks_fail "o5fail did not fail"; }
msg=$(cond o5fail Failed message)
node=$(kc get mpijob o5fail -o jsonpath='{.status.rankFailure.node}')
echo "o5fail: $msg"
case $msg in *"rank 1 on pod o5fail-worker-1 (node $node) exited with code 3"*) ;;
  *) kc logs -l mpi_job_name=o5fail,mpi_role_type=launcher --tail 40
     ks_fail "o5fail: Failed message does not name rank 1, o5fail-worker-1, node '$node' and code 3: $msg" ;; esac
[ -n "$node" ] || ks_fail "o5fail: no node in status.rankFailure"
# runLauncherAsWorker: the launcher hosts rank 0, the worker rank 1
ks_wait_for '[ "$(cond o5law Succeeded status)" = True ] || [ "$(cond o5law Failed status)" = True ]' 100 || true
[ "$(cond o5law Succeeded status)" = True ] ||
  { kc get mpijob o5law -o yaml; kc logs -l mpi_job_name=o5law,mpi_role_type=launcher --tail 40
    ks_fail "o5law (runLauncherAsWorker) did not succeed: $(cond o5law Failed message)"; }
kc logs -l mpi_job_name=o5law,mpi_role_type=launcher -c mpi-launcher --tail -1 | grep -q 'pi is approximately 3.14' ||
  ks_fail "o5law: no pi in the launcher's log"
# the stack, for the record: PRRTE's version in the image
kc exec o5exec-worker-0 -- prterun --version 2>&1 | head -1
echo ok
