#!/usr/bin/env bash
# timeout: 600
# Where the ranks run, on every MPI stack we know and both transports (issue #36, real cluster):
# Debian 12's Open MPI 4.1 (ORTE) and MPICH 4.0 (Hydra), Debian 13's Open MPI 5.0 (PRRTE) and
# MPICH 4.2 (Hydra), each in upstream's pi image shape (mpik8s/mpi-pi:<variant>: mpiuser, uid
# 1000, sshd on port 2222). For each stack and each transport (exec: the workers sleep; ssh: the
# workers run the image's sshd, as upstream's pi.yaml), a job whose mpirun is told `--host
# localhost,<worker-0>` (Hydra: `-hosts`) runs one rank on the launcher, which the hostfile does
# not name: the placement check (docs/agent.md "Ranks on the launcher") must fail it, naming the
# stack, the process and runLauncherAsWorker. And on the two Debian 12 stacks (Debian 13's are in
# openmpi5_exec and mpich42_exec), runLauncherAsWorker over exec: pi with rank 0 on the launcher
# and rank 1 on the worker. The cluster is removed on exit, pass or fail (the EXIT trap of
# tests/lib/kubesim.sh).
set -u
export KUBE_BACKEND=k8s
. "$(dirname "$0")/../../integration/controller_common.bash"
# STACK: its image, MPIJob implementation, launcher program, host option and name in the message
image() {
  case $1 in o41) echo mpik8s/mpi-pi:latest ;; m40) echo mpik8s/mpi-pi:mpich4.0-bookworm ;;
    o5) echo mpik8s/mpi-pi:openmpi5-trixie ;; m42) echo mpik8s/mpi-pi:mpich4.2-trixie ;; esac
}
stack_name() {
  case $1 in o41) echo "Open MPI 4 (ORTE)" ;; o5) echo "Open MPI 5 (PRRTE)" ;; *) echo "MPICH (Hydra)" ;; esac
}
STACKS="o41 m40 o5 m42"
for s in $STACKS; do
  docker image inspect "$(image $s)" >/dev/null 2>&1 ||
    ks_fail "no $(image $s) in the Docker Engine (ENGINE=docker images/build-images.sh $(image $s | sed s@mpik8s/@@))"
done
ctl_cluster
# AGENT_IMAGE: a launcher init image other than the default (a branch's own mpi-agent build)
ctl_start a --leader-elect=false --monitoring-port 18189 ${AGENT_IMAGE:+--agent-image "$AGENT_IMAGE"}

# mk NAME STACK TRANSPORT LAW ARGS...: 1 worker, the launcher running the stack's launcher with
# -n 2 and ARGS (LAW=law: runLauncherAsWorker); every pod requests 10m: the node's 2 CPUs must
# place all the case's 20 pods at once
mk() {
  local name=$1 s=$2 tr=$3 law=$4 impl=OpenMPI run=mpirun wcmd=; shift 4
  case $s in m*) impl=MPICH run=mpiexec ;; esac
  [ "$tr" = exec ] || wcmd='[/usr/sbin/sshd, -De, -f, /home/mpiuser/.sshd_config]'
  local args; args=$(printf '"%s", ' "$@")
  mpijob_yaml "$name" --ann mpi-k8s.io/transport="$tr" --ann mpi-k8s.io/worker-timeout=120 --slots 1 --impl "$impl" \
    --spec 'sshAuthMountPath: /home/mpiuser/.ssh' ${law:+--spec 'runLauncherAsWorker: true'} \
    --run-policy '{cleanPodPolicy: None, backoffLimit: 0}' --workers 1 --image "$(image "$s")" \
    --names mpi-launcher,mpi-worker --command "[$run, -n, \"2\", ${args%, }]" ${wcmd:+--worker-command "$wcmd"} \
    --container 'securityContext: {runAsUser: 1000}' \
    --container 'resources: {limits: {cpu: 500m, memory: 256Mi}, requests: {cpu: 10m, memory: 32Mi}}' |
    kc create -f - >/dev/null || ks_fail "create $name"
}
for s in $STACKS; do
  opt=--host
  case $s in m*) opt=-hosts ;; esac
  for tr in exec ssh; do
    j=loc-$s-$tr
    mk "$j" "$s" "$tr" "" "$opt" "localhost,$j-worker-0.$j.default.svc" sh -c 'exec sleep 120'
  done
done
mk law-o41 o41 exec law /home/mpiuser/pi
mk law-m40 m40 exec law /home/mpiuser/pi

# 240 s: 20 pods start at once on the node's 2 CPUs (a CI run has other clusters beside it)
for s in $STACKS; do
  for tr in exec ssh; do on_launcher "loc-$s-$tr" "$(stack_name $s)" 240; done
done
# runLauncherAsWorker: the launcher hosts rank 0, the worker rank 1 (pi prints each rank's host)
for j in law-o41 law-m40; do
  ks_wait_for '[ "$(cond '"$j"' Succeeded status)" = True ] || [ "$(cond '"$j"' Failed status)" = True ]' 240 || true
  [ "$(cond "$j" Succeeded status)" = True ] ||
    { kc get mpijob "$j" -o yaml; kc logs -l "mpi_job_name=$j,mpi_role_type=launcher" --all-containers --tail 40
      ks_fail "$j (runLauncherAsWorker) did not succeed: $(cond "$j" Failed message)"; }
  log=$(kc logs -l "mpi_job_name=$j,mpi_role_type=launcher" -c mpi-launcher --tail -1)
  echo "$log" | grep -q 'pi is approximately 3.14' || ks_fail "$j: no pi in the launcher's log: $log"
  echo "$log" | grep -q "^Rank 0 of 2 running on $j-launcher" && echo "$log" | grep -q "^Rank 1 of 2 running on $j-worker-0" ||
    ks_fail "$j: ranks not on the launcher and the worker: $(echo "$log" | grep '^Rank')"
  echo "$j: $(echo "$log" | grep '^Rank' | tr '\n' ' ')"
done
echo ok
