#!/usr/bin/env bash
# agent_noapi: mpi-agent's no-API mode (docs/agent.md), as the operator's limited RBAC
# mode runs launchers: the launcher pod runs as the namespace's default ServiceAccount,
# whose token is refused (403) on the agent's first pod list. init logs the mode, takes
# the workers from the hostfile, checks them through SSH only, and mpirun runs over
# SSH; a worker without sshd still fails init within the worker timeout, naming it.
# timeout: 300
set -euo pipefail
. "$(dirname "$0")/../lib/agent_jobs.sh"
[ -x /usr/sbin/sshd ] && command -v ssh-keygen >/dev/null || ks_skip "OpenSSH not installed"
ks_up
M=$(mktemp -d "$ROOT/build/agent-noapi.XXXXXX")   # pods see the host's files, but not its /tmp
ks_on_exit 'rm -rf "$M"'
. "$ROOT/tests/lib/sshd_fixture.sh"   # the job's key pair as the <job>-ssh Secret lays it out, sshd_config
sshd_fixture "$M" || ks_fail "ssh-keygen"
K=$M/ssh
export MPI_PROG="$ROOT/build/stage/usr/local/bin/mpi-pi, \"2000000\""
export TRANSPORT=ssh SSH_DIR=$K WORKER_CMD="[/usr/sbin/sshd, -D, -e, -f, $M/sshd_config]" LAUNCHER_SA=default

ks_log "1. no API access: init checks the hostfile's workers over ssh, mpirun runs"
job_yaml s 2 init | ks_kubectl create -f - >/dev/null
ph=$(wait_launcher s 180)
launcher_logs s > "$KS_DIR/o-s"
[ "$ph" = Succeeded ] || ks_fail "launcher $ph: $(tail -5 "$KS_DIR/o-s")"
expect_in "$KS_DIR/o-s" "no API access (listing pods in namespace default: " "no-API mode: workers from /etc/mpi/hostfile" \
  "2/2 workers reachable through ssh (no-API mode)" "pi is approximately"
grep -qE "[0-9]+/[0-9]+ workers ready \(" "$KS_DIR/o-s" && ks_fail "the pod wait ran without API access"
delete_job s

ks_log "2. no API access, a worker without sshd: init fails in its bound naming the worker"
LAST_CMD='[sleep, "3600"]' AGENT_TIMEOUT=5 job_yaml t 2 init | ks_kubectl create -f - >/dev/null
t0=$(date +%s)
ph=$(wait_launcher t 120)
launcher_logs t > "$KS_DIR/o-t"
[ "$ph" = Failed ] || ks_fail "launcher $ph, want Failed"
expect_in "$KS_DIR/o-t" "no-API mode" "timed out after 5 s waiting for workers: 1 not reachable through ssh (no-API mode)" \
  "t-worker-1: ssh"
ks_log "failed after $(( $(date +%s) - t0 )) s"
ks_log "PASS"
