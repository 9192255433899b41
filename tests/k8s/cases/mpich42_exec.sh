#!/usr/bin/env bash
# timeout: 300
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
# code), so there is nothing to attribute; docs/controller.md says so. A third job runs pi with
# runLauncherAsWorker: Hydra starts rank 0 on the launcher itself (its short hostname, the
# hostfile's first line) and rank 1 through mpi-rsh on the one worker. A fourth's rank 1 is OOM-killed
# in its 64Mi worker: named as SIGKILL and the OOM, not Hydra's "code 9". A fifth's rank 1 kills
# its proxy: the daemon's pod, node and code 137. A proxy on the launcher (the placement check):
# placement.sh. The cluster is removed on exit, pass or fail (the EXIT trap of tests/lib/kubesim.sh).
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
# (LAW=1: runLauncherAsWorker and 1 worker; MEM: the workers' memory limit, default 512Mi); CPU is a
# limit, and every pod requests 10m: the node's 2 CPUs must place all the case's jobs at once
mk() {
  local name=$1 cpu=$2 law= workers=2; shift 2
  [ -z "${LAW:-}" ] || { law='runLauncherAsWorker: true'; workers=1; }
  local args; args=$(printf '"%s", ' "$@")
  mpijob_yaml "$name" --ann mpi-k8s.io/transport=exec --ann mpi-k8s.io/worker-timeout=90 --slots 1 --impl MPICH \
    ${law:+--spec "$law"} --run-policy '{cleanPodPolicy: None, backoffLimit: 0}' --workers "$workers" --image "$IMG" \
    --names mpi-launcher,mpi-worker --command "[mpiexec, ${args%, }]" --container 'securityContext: {runAsUser: 1000}' \
    --launcher-container "resources: {limits: {cpu: $cpu, memory: 512Mi}, requests: {cpu: 10m, memory: 64Mi}}" \
    --worker-container "resources: {limits: {cpu: $cpu, memory: ${MEM:-512Mi}}, requests: {cpu: 10m, memory: ${MEM:-64Mi}}}" |
    kc create -f - >/dev/null || ks_fail "create $name"
}
mk m42pi 250m -n 2 /home/mpiuser/pi
LAW=1 mk m42law 200m -n 2 /home/mpiuser/pi
mk m42fail 100m -n 2 -genv MPI_PI_EXIT_RANK 1 -genv MPI_PI_EXIT_SIGNAL 11 /home/mpiuser/pi
MEM=64Mi mk m42oom 250m -n 2 sh -c '[ $PMI_RANK != 1 ] || exec tail /dev/zero; exec sleep 120'
mk m42lost 100m -n 2 sh -c '[ $PMI_RANK != 1 ] || kill -9 $PPID; exec sleep 120'

ks_wait_for '[ "$(cond m42pi Succeeded status)" = True ] || [ "$(cond m42pi Failed status)" = True ]' 150 || true
log=$(kc logs -l mpi_job_name=m42pi,mpi_role_type=launcher -c mpi-launcher --tail -1 2>&1)
if [ "$(cond m42pi Succeeded status)" != True ]; then
  kc get mpijob m42pi -o yaml; kc get pods -o wide; echo "$log" | tail -40
  ks_fail "m42pi did not succeed: $(cond m42pi Failed message)"
fi
echo "$log" | grep -q 'pi is approximately 3.14' || ks_fail "no pi in m42pi's launcher log"
ranks_one_per_worker m42pi "$log"
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
# a rank the kernel OOM-kills in its 64Mi worker: Hydra 4.2 says "EXIT CODE: 9"; the worker's memory
# cgroup (read through exec) says the OOM killer sent it, so the 9 is named as the signal it was
ks_wait_for '[ "$(cond m42oom Failed status)" = True ]' 100 || { kc get mpijob m42oom -o yaml; ks_fail "m42oom did not fail"; }
msg=$(cond m42oom Failed message)
node=$(kc get mpijob m42oom -o jsonpath='{.status.rankFailure.node}')
echo "m42oom: $msg"
case $msg in *"on pod m42oom-worker-1 (node $node) was killed by SIGKILL: OOM-killed (limit 64Mi)"*) ;;
  *) kc get cm m42oom-log -o jsonpath='{.data.log}' | tail -n 40
     ks_fail "m42oom: Failed message does not name m42oom-worker-1, node '$node' and the OOM kill: $msg" ;;
esac
[ "$(kc get mpijob m42oom -o jsonpath='{.status.rankFailure.reason}/{.status.rankFailure.oomSource}')" = oom/cgroup ] ||
  ks_fail "m42oom: status.rankFailure: $(kc get mpijob m42oom -o jsonpath='{.status.rankFailure}')"
# a proxy killed (rank 1 kills its parent): Hydra names no daemon; the launch mark's exit line does
daemon_killed m42lost "exited with code 137 and the launch failed (mpirun named no rank)" \
  "exited with code 137 and the launch did not end on its own (mpi-agent stopped it)"
kc get cm m42lost-log -o jsonpath='{.data.log}' | tail -n 8 # Hydra's words, for the record
# runLauncherAsWorker: rank 0 on the launcher, rank 1 on the worker
ks_wait_for '[ "$(cond m42law Succeeded status)" = True ] || [ "$(cond m42law Failed status)" = True ]' 100 || true
log=$(kc logs -l mpi_job_name=m42law,mpi_role_type=launcher -c mpi-launcher --tail -1 2>&1)
[ "$(cond m42law Succeeded status)" = True ] ||
  { kc get mpijob m42law -o yaml; echo "$log" | tail -40
    ks_fail "m42law (runLauncherAsWorker) did not succeed: $(cond m42law Failed message)"; }
echo "$log" | grep -q 'pi is approximately 3.14' || ks_fail "m42law: no pi in the launcher's log"
echo "$log" | grep -q 'started no daemon' && ks_fail "m42law: the launch watch fired"
echo "$log" | grep -q '^Rank 0 of 2 running on m42law-launcher' && echo "$log" | grep -q '^Rank 1 of 2 running on m42law-worker-0' ||
  ks_fail "m42law: ranks not on the launcher and the worker: $(echo "$log" | grep '^Rank')"
# the stack, for the record
kc exec m42pi-worker-0 -- mpiexec --version 2>&1 | grep -m1 -i 'version'
echo ok
