#!/usr/bin/env bash
# agent_ssh: the SSH transport end to end: worker pods run real OpenSSH sshd
# (port 2222, host key = the job's Ed25519 key, like upstream v2 images); the
# launcher's init container `mpi-agent init` (MPI_JOB_TRANSPORT=ssh) checks each
# worker with an SSH handshake against the pinned host key and writes the IP
# map; mpirun then runs through /opt/kube/mpi-rsh over SSH. A worker without
# sshd fails init naming the pod and the stage.
# timeout: 300
set -euo pipefail
. "$(dirname "$0")/../lib/agent_jobs.sh"
[ -x /usr/sbin/sshd ] && command -v ssh-keygen >/dev/null || ks_skip "OpenSSH not installed"
ks_up
M=$(mktemp -d "$ROOT/build/agent-ssh.XXXXXX")   # pods see the host's files, but not its /tmp
ks_on_exit 'rm -rf "$M"'
. "$ROOT/tests/lib/sshd_fixture.sh"   # the job's key pair as the <job>-ssh Secret lays it out, sshd_config
sshd_fixture "$M" || ks_fail "ssh-keygen"
K=$M/ssh
# sshd sessions do not get the image PATH: name the program by its path
export MPI_PROG="$ROOT/build/stage/usr/local/bin/mpi-pi, \"2000000\""
export TRANSPORT=ssh SSH_DIR=$K WORKER_CMD="[/usr/sbin/sshd, -D, -e, -f, $M/sshd_config]"

ks_log "1. init over ssh + mpirun through mpi-rsh (ssh), 2 workers"
job_yaml s 2 init | ks_kubectl create -f - >/dev/null
ph=$(wait_launcher s 180)
launcher_logs s > "$KS_DIR/o-s"
[ "$ph" = Succeeded ] || ks_fail "launcher $ph"
expect_in "$KS_DIR/o-s" "2/2 workers reachable through ssh" "pi is approximately"
delete_job s

ks_log "2. a worker without sshd: init fails naming the pod and the stage"
LAST_CMD='[sleep, "3600"]' AGENT_TIMEOUT=5 job_yaml t 2 init | ks_kubectl create -f - >/dev/null
ph=$(wait_launcher t 120)
launcher_logs t > "$KS_DIR/o-t"
[ "$ph" = Failed ] || ks_fail "launcher $ph, want Failed"
expect_in "$KS_DIR/o-t" "1 worker(s) Ready but not reachable through ssh" "t-worker-1: ssh"
grep -qiE "t-worker-1: ssh .*connect" "$KS_DIR/o-t" || ks_fail "no connect stage named"
ks_log "PASS"
