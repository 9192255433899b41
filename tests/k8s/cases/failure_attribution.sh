#!/usr/bin/env bash
# timeout: 600
# Which rank failed, where and why, on the real cluster (kube-apiserver, kubelet,
# containerd; this machine's cgroup v1 or v2): tests/mpi/rank_fail (built here against
# Debian 12's Open MPI 4.1, the image's) is copied into each worker of two MPIJobs:
# rank 1 of 2 exits 3 (named: rank, worker pod, node, exit code), rank 1 of 2 raises
# SIGSEGV (named: "was killed by SIGSEGV"), the same under MPICH 4.0's Hydra (named by the
# process's PID, as Hydra prints no rank), and rank 1 of 2
# allocates beyond its worker's 64Mi memory limit until the kernel OOM-kills it (named
# "was killed by SIGKILL: OOM-killed (limit 64Mi)", from the container's OOMKilled state
# or the memory cgroup's oom_kill counter read through exec). The launcher's output stays
# readable with kubectl after every pod of the job is deleted. The cluster is removed on
# exit, pass or fail (the EXIT trap of tests/lib/kubesim.sh).
set -u
export KUBE_BACKEND=k8s
. "$(dirname "$0")/../../integration/controller_common.bash"
PROG=$ROOT/build/${MODE:-release}/tests/mpi/rank_fail
[ -x "$PROG" ] && [ -x "${PROG}_mpich" ] || ks_fail "missing $PROG or ${PROG}_mpich (make test-progs)"
ctl_cluster
# AGENT_IMAGE: a launcher init image other than the default (a branch's own build, e.g.
# `docker build -f images/mpi-agent/Dockerfile -t mpik8s/mpi-agent:mine .`: ks_up loads it)
ctl_start a --leader-elect=false --monitoring-port 18185 ${AGENT_IMAGE:+--agent-image "$AGENT_IMAGE"}

# mk NAME MODE WORKER_RESOURCES [MPICH]: 2 workers; each rank waits for /tmp/rank_fail (copied
# below). With MPICH: mpiImplementation MPICH, Hydra's mpiexec in nccl-benchmarks' image (the
# one of ours with MPICH's runtime), the program built against Debian 12's MPICH.
OMPI_RUN='[mpirun, --allow-run-as-root, -np, "2", --bind-to, none, -mca, pml, ob1, -mca, btl, "self,tcp",
                      -x, FAIL_MODE=$2, -x, FAIL_RANK=1, -x, FAIL_MB=1024,'
HYDRA_RUN='[mpiexec.hydra, -n, "2", -genv, FAIL_MODE, $2, -genv, FAIL_RANK, "1",'
mk() {
  local impl=OpenMPI image=mpik8s/openmpi:latest run=$OMPI_RUN
  [ -z "${4:-}" ] || { impl=MPICH image=mpik8s/nccl-benchmarks:latest run=$HYDRA_RUN; }
  run=${run//\$2/$2}
  mpijob_yaml "$1" --ann mpi-k8s.io/transport=exec --ann mpi-k8s.io/worker-timeout=240 --slots 1 --impl "$impl" \
    --run-policy '{cleanPodPolicy: All, backoffLimit: 0}' --restart Never --image "$image" \
    --command "$run sh, -c, 'until [ -x /tmp/rank_fail ]; do sleep 0.5; done; exec /tmp/rank_fail']" \
    --worker-container "resources: $3" | kc create -f - >/dev/null || ks_fail "create $1"
}
mk kexit exit '{}'
mk ksegv segv '{}'
mk koom oom '{limits: {memory: 64Mi}, requests: {memory: 64Mi}}'
mk kmpich segv '{}' MPICH
for j in kexit ksegv koom kmpich; do
  prog=$PROG
  [ $j != kmpich ] || prog=${PROG}_mpich
  for i in 0 1; do
    p=$j-worker-$i
    ks_wait_for "kc get pod $p -o jsonpath='{.status.phase}' | grep -q Running" 240 ||
      ks_fail "$p not Running: $(kc get pods -o wide; tail -20 "$KS_DIR/op-a.log")"
    kc cp "$prog" "$p:/tmp/rank_fail.part" -c w >/dev/null || ks_fail "kubectl cp into $p"
    kc exec "$p" -c w -- sh -c 'chmod 0755 /tmp/rank_fail.part && mv /tmp/rank_fail.part /tmp/rank_fail' ||
      ks_fail "install rank_fail in $p"
  done
done

# expect JOB TEXT: the Failed message names the rank, the pod, its node and TEXT
expect() {
  local j=$1 what=$2 node msg
  wait_cond "$j" Failed True 240
  node=$(kc get mpijob "$j" -o jsonpath='{.status.rankFailure.node}')
  msg=$(cond "$j" Failed message)
  case "$msg" in *"rank 1 on pod $j-worker-1 (node $node) $what"*) ;;
    *) kc get mpijob "$j" -o yaml; kc logs -l "mpi_job_name=$j,mpi_role_type=launcher" --tail 40;
       ks_fail "$j: Failed message does not name rank 1, $j-worker-1, node '$node', '$what': $msg";; esac
  [ -n "$node" ] || ks_fail "$j: no node in status.rankFailure"
  ks_wait_for "kc get events --field-selector involvedObject.name=$j -o jsonpath='{.items[*].reason}' | grep -qE 'RankFailed|RankOOMKilled'" 30 ||
    ks_fail "$j: no RankFailed/RankOOMKilled Event: $(kc get events --field-selector involvedObject.name=$j)"
  echo "$j: $msg"
}
expect kexit "exited with code 3"
expect ksegv "was killed by SIGSEGV"
[ "$(kc get mpijob ksegv -o jsonpath='{.status.rankFailure.reason}')" = signal ] || ks_fail "ksegv: rankFailure.reason is not signal"
expect koom "was killed by SIGKILL: OOM-killed (limit 64Mi)"
echo "koom: OOM seen by $(kc get mpijob koom -o jsonpath='{.status.rankFailure.oomSource}') (cgroup $(stat -fc %T /sys/fs/cgroup))"
# MPICH 4.0's Hydra names no rank: the process by its PID, its pod from the host Hydra printed
wait_cond kmpich Failed True 240
pid=$(kc get mpijob kmpich -o jsonpath='{.status.rankFailure.pid}')
node=$(kc get mpijob kmpich -o jsonpath='{.status.rankFailure.node}')
msg=$(cond kmpich Failed message)
case "$msg" in *"a process (PID $pid) on pod kmpich-worker-1 (node $node) was killed by SIGSEGV"*) ;;
  *) kc get mpijob kmpich -o yaml; kc logs -l "mpi_job_name=kmpich,mpi_role_type=launcher" --tail 40;
     ks_fail "kmpich: Failed message does not name the PID, kmpich-worker-1, node '$node' and SIGSEGV: $msg";; esac
[ -n "$node" ] && [ "$(kc get mpijob kmpich -o jsonpath='{.status.rankFailure.mpi}')" = mpich ] ||
  ks_fail "kmpich: status.rankFailure lacks the node or mpi=mpich"
echo "kmpich: $msg"

# the launcher's output outlives every pod of the job
for j in kexit ksegv koom kmpich; do
  ks_wait_for "[ -z \"\$(kc get pods -l mpi_job_name=$j,mpi_role_type=worker -o name)\" ]" 120 || ks_fail "$j: workers left"
done
kc delete pods -l mpi_role_type=launcher --wait=true >/dev/null || ks_fail "delete the launcher pods"
log=$(kc get cm kexit-log -o jsonpath='{.data.log}') || ks_fail "kubectl get cm kexit-log"
case "$log" in *"rank 0 up on kexit-worker-0"*"Exit code:    3"*) ;; *) ks_fail "kexit-log: $log";; esac
kc get cm koom-log -o jsonpath='{.data.log}' | grep -q "rank 1: .* MiB touched" || ks_fail "koom-log lacks the rank's lines"
echo ok
