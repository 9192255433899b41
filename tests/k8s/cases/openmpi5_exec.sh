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
# pi with runLauncherAsWorker: one rank on the launcher, one on the worker (docs/controller.md). A
# fifth's rank 1 raises SIGSEGV after MPI_Init (pi's MPI_PI_EXIT_RANK/_SIGNAL): PRRTE's "exited on
# signal" account must name rank 1, its pod, node and SIGSEGV; the real output is kept as a fixture.
# A sixth's rank 1 is OOM-killed in its 64Mi worker: rank 1, its pod and node, SIGKILL and the OOM.
# A seventh's rank 1 kills its prted: the daemon's pod and node, though prterun exits 0. Ranks on
# the launcher (the placement check) on this stack and the others: placement.sh.
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
# (LAW=1: runLauncherAsWorker and 1 worker; MEM: the workers' memory limit, default 512Mi); CPU is a
# limit, and every pod requests 10m: the node's 2 CPUs must place all the case's jobs at once
mk() {
  local name=$1 cpu=$2 law= workers=2; shift 2
  [ -z "${LAW:-}" ] || { law='runLauncherAsWorker: true'; workers=1; }
  local args; args=$(printf '"%s", ' "$@")
  mpijob_yaml "$name" --ann mpi-k8s.io/transport=exec --ann mpi-k8s.io/worker-timeout=90 --slots 1 ${law:+--spec "$law"} \
    --run-policy '{cleanPodPolicy: None, backoffLimit: 0}' --workers "$workers" --image "$IMG" \
    --names mpi-launcher,mpi-worker --command "[mpirun, ${args%, }]" --container 'securityContext: {runAsUser: 1000}' \
    --launcher-container "resources: {limits: {cpu: $cpu, memory: 512Mi}, requests: {cpu: 10m, memory: 64Mi}}" \
    --worker-container "resources: {limits: {cpu: $cpu, memory: ${MEM:-512Mi}}, requests: {cpu: 10m, memory: ${MEM:-64Mi}}}" |
    kc create -f - >/dev/null || ks_fail "create $name"
}
mk o5exec 250m -n 2 /home/mpiuser/pi
mk o5ssh 60m --prtemca plm_ssh_agent ssh -n 2 /home/mpiuser/pi
mk o5fail 100m -n 2 sh -c 'echo rank $OMPI_COMM_WORLD_RANK up on $(hostname); [ $OMPI_COMM_WORLD_RANK != 1 ] || exit 3; exec sleep 120'
LAW=1 mk o5law 250m -n 2 /home/mpiuser/pi
mk o5sig 60m -n 2 -x MPI_PI_EXIT_RANK=1 -x MPI_PI_EXIT_SIGNAL=11 /home/mpiuser/pi
MEM=64Mi mk o5oom 250m -n 2 sh -c '[ $OMPI_COMM_WORLD_RANK != 1 ] || exec tail /dev/zero; exec sleep 120'
mk o5lost 100m -n 2 sh -c '[ $OMPI_COMM_WORLD_RANK != 1 ] || kill -9 $PPID; exec sleep 120'
done_() { [ "$(cond o5exec Succeeded status)" = True ] || [ "$(cond o5exec Failed status)" = True ]; }
ks_wait_for done_ 100 || true
L=$(kc get pods -l mpi_job_name=o5exec,mpi_role_type=launcher -o name | tail -1)
log=$(kc logs "$L" -c mpi-launcher 2>&1)
if [ "$(cond o5exec Succeeded status)" != True ]; then
  kc get mpijob o5exec -o yaml; kc get pods -o wide; echo "$log" | tail -40
  ks_fail "o5exec did not succeed: $(cond o5exec Failed message)"
fi
echo "$log" | grep -q 'pi is approximately 3.14' || ks_fail "no pi in the launcher's log"
ranks_one_per_worker o5exec "$log"
echo "$log" | grep -q 'started no daemon' && ks_fail "the launch watch fired: $(echo "$log" | grep 'started no daemon')"
failed_() { [ "$(cond o5ssh Failed status)" = True ]; }
ks_wait_for failed_ 60 || { kc get mpijob o5ssh -o yaml; ks_fail "o5ssh (PRRTE's own ssh) did not fail"; }
msg=$(cond o5ssh Failed message)
echo "o5ssh: $msg"
case $msg in *"Open MPI 5 (PRRTE) started no daemon through"*"PRTE_MCA_plm_ssh_agent ('ssh', set instead of"*) ;;
  *"Open MPI 5 (PRRTE) started no daemon through"*"PRTE_MCA_plm_ssh_agent"*) ;;
  *) ks_fail "o5ssh failed without the launch watch's line: $msg" ;; esac
# attributed JOB WHAT: the job fails, and its Failed message names rank 1 on JOB-worker-1, the
# node of status.rankFailure, and WHAT (PRRTE's account of the failed rank, attributed)
attributed() {
  local msg node
  ks_wait_for '[ "$(cond '"$1"' Failed status)" = True ]' 100 || { kc get mpijob "$1" -o yaml; ks_fail "$1 did not fail"; }
  msg=$(cond "$1" Failed message)
  node=$(kc get mpijob "$1" -o jsonpath='{.status.rankFailure.node}')
  echo "$1: $msg"
  case $msg in *"rank 1 on pod $1-worker-1 (node $node) $2"*) ;;
    *) kc get cm "$1-log" -o jsonpath='{.data.log}' | tail -n 40
       ks_fail "$1: Failed message does not name rank 1, $1-worker-1, node '$node' and '$2': $msg" ;; esac
  [ -n "$node" ] || ks_fail "$1: no node in status.rankFailure"
}
attributed o5fail "exited with code 3"
# runLauncherAsWorker: the launcher hosts rank 0, the worker rank 1
ks_wait_for '[ "$(cond o5law Succeeded status)" = True ] || [ "$(cond o5law Failed status)" = True ]' 100 || true
[ "$(cond o5law Succeeded status)" = True ] ||
  { kc get mpijob o5law -o yaml; kc logs -l mpi_job_name=o5law,mpi_role_type=launcher --tail 40
    ks_fail "o5law (runLauncherAsWorker) did not succeed: $(cond o5law Failed message)"; }
log=$(kc logs -l mpi_job_name=o5law,mpi_role_type=launcher -c mpi-launcher --tail -1)
echo "$log" | grep -q 'pi is approximately 3.14' || ks_fail "o5law: no pi in the launcher's log"
echo "$log" | grep -q '^Rank 0 of 2 running on o5law-launcher' && echo "$log" | grep -q '^Rank 1 of 2 running on o5law-worker-0' ||
  ks_fail "o5law: ranks not on the launcher and the worker: $(echo "$log" | grep '^Rank')"
# a rank killed by a signal
attributed o5sig "was killed by SIGSEGV"
kc get cm o5sig-log -o jsonpath='{.data.log}' | grep -B1 -A1 'exited on signal' # PRRTE's words, for the record
# a rank the kernel OOM-kills (tail buffers /dev/zero, which has no newline, past the worker's
# 64Mi): PRRTE's account says signal 9; the worker's memory cgroup (read through exec) says OOM
attributed o5oom "was killed by SIGKILL: OOM-killed (limit 64Mi)"
# a prted killed (rank 1 kills its parent): PRRTE's "lost communication" account names the pod and
# node. prterun then exits 0 (measured, 2026-12-07: the MPIJob said Succeeded), so the agent's
# distrust of that 0 is what fails the job (docs/agent.md "An exit status of 0 is not always
# success"); prterun has signalled its mpi-rsh by then, so the launch mark holds no code
daemon_killed o5lost "was lost: Open MPI lost communication with it" "exited with code 137 (Open MPI lost communication with it)"
kc get cm o5lost-log -o jsonpath='{.data.log}' | grep -A4 'lost communication' # PRRTE's words, for the record
# the stack, for the record: PRRTE's version in the image
kc exec o5exec-worker-0 -- prterun --version 2>&1 | head -1
echo ok
