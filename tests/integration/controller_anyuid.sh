#!/usr/bin/env bash
# timeout: 420
# A launcher and workers that run under a UID with no passwd entry (OpenShift's
# restricted-v2 picks such a UID from the namespace's range), image debian:bookworm: the job
# succeeds and mpirun's log carries no Open MPI WARNING. Open MPI's rsh launcher takes the
# local shell from getpwuid(getuid())->pw_shell, else from $SHELL, and otherwise prints
# "WARNING: local probe returned unhandled shell:unknown assuming bash"; the launch
# environment gives it SHELL. Exec transport twice: through `mpi-agent run`
# (agent/launch_env.c) and with mpi-k8s.io/agent-run "false", where only the variables the
# operator put in the pod spec (flavour_env) reach mpirun. Then the SSH transport with the
# launcher (and its init container) as that UID: MPI_JOB_LAUNCHER_UID=1000870000 is accepted
# and the init's SSH check, which stops at the host key, needs no name for the UID; mpirun's
# connections log in as $USER (root: the workers' default sshd).
set -u
. "$(dirname "$0")/controller_common.bash"
command -v mpirun >/dev/null || { echo "skip: no mpirun"; exit 77; }
ctl_cluster
ctl_start a --leader-elect=false
UID_=1000870000
getent passwd "$UID_" >/dev/null && ks_fail "uid $UID_ has a passwd entry on this host: the test needs one without"
job() { # NAME AGENT_RUN
  mpijob_yaml "$1" --ann mpi-k8s.io/transport=exec --ann "mpi-k8s.io/agent-run=$2" --ann mpi-k8s.io/worker-timeout=60 \
    --slots 1 --run-policy '{cleanPodPolicy: Running}' --restart Never --image debian:bookworm \
    --pod "securityContext: {runAsUser: $UID_, runAsGroup: 0}" \
    --command "[mpirun, -np, \"2\", sh, -c, 'echo rank-\$OMPI_COMM_WORLD_RANK uid-\$(id -u)']"
}
job uidjob true | kc create -f - >/dev/null || ks_fail "create uidjob"
job uidjob-plain false | kc create -f - >/dev/null || ks_fail "create uidjob-plain"
# SSH transport: the launcher as the same UID, the workers' default sshd (root: sshd needs a
# passwd entry for the user it logs in, so the launcher names one with USER); the key files
# outside /root/.ssh are 0644, readable by the launcher's UID
mpijob_yaml uidjob-ssh --ann mpi-k8s.io/transport=ssh --ann mpi-k8s.io/worker-timeout=60 --slots 1 \
  --spec 'sshAuthMountPath: /etc/mpi-ssh' --run-policy '{cleanPodPolicy: Running}' --restart Never --image debian:bookworm \
  --launcher-pod "securityContext: {runAsUser: $UID_, runAsGroup: 0}" --launcher-container 'env: [{name: USER, value: root}]' \
  --command "[mpirun, -np, \"2\", sh, -c, 'echo rank-\$OMPI_COMM_WORLD_RANK uid-\$(id -u)']" |
  kc create -f - >/dev/null || ks_fail "create uidjob-ssh"
declare -A rank_uid=([uidjob]=$UID_ [uidjob-plain]=$UID_ [uidjob-ssh]=0)
done_() { [ "$(cond "$1" Succeeded status)" = True ] || [ "$(cond "$1" Failed status)" = True ]; }
for n in uidjob uidjob-plain uidjob-ssh; do
  ks_wait_for "done_ $n" 240 || true
  out=$(kc logs -l "mpi_job_name=$n,mpi_role_type=launcher" -c l --tail 200 2>&1)
  [ "$(cond "$n" Succeeded status)" = True ] || {
    kc get pods -o wide
    for p in $(kc get pods -l "mpi_job_name=$n,mpi_role_type=launcher" -o name); do
      echo "---- $p"; kc logs "$p" --all-containers --tail 40
    done
    for p in $(kc get pods -l "mpi_job_name=$n,mpi_role_type=worker" -o name); do
      echo "---- $p"; kc logs "$p" --tail 10
    done
    ks_fail "$n did not succeed: $out"
  }
  for r in 0 1; do
    grep -qx "rank-$r uid-${rank_uid[$n]}" <<<"$out" || ks_fail "$n: no 'rank-$r uid-${rank_uid[$n]}' in: $out"
  done
  if grep -q WARNING <<<"$out"; then
    ks_fail "$n: the launcher log carries a WARNING: $(grep WARNING <<<"$out")"
  fi
  echo "$n: mpirun as uid $UID_, 2 ranks as uid ${rank_uid[$n]}, no WARNING"
done
echo PASS
