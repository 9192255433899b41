#!/usr/bin/env bash
# 21: security, end to end. (a) RBAC: with the token mounted in job A's launcher pod, exec
# into A's worker works but exec into job B's worker, reading Secrets, listing pods in
# another namespace or cluster-wide, creating/deleting pods all get 403 from kubesim's
# RBAC - through kubectl and through mpi-rsh itself. (b) SSH: each SSH job has its own
# key pair, mounted mode 0600; from job S1's launcher mpi-rsh reaches S1's worker but
# is refused by S2's worker (a different host key). (c) No token and no private key
# appears in any log (API server, operator at -v 2, every container of every pod,
# mpi-rsh -vvv and mpi-agent status -v).
# timeout: 420
. "$(dirname "$0")/../lib.sh"
e2e_begin
e2e_up
e2e_op_start a -v 2
kc create namespace team-b >/dev/null || e2e_fail "namespace"
HOLD='[sh, -c, "echo launcher-up; sleep 200"]'
PROG=$HOLD e2e_create a
PROG=$HOLD e2e_create b
PROG=$HOLD e2e_job c | kc -n team-b create -f - >/dev/null || e2e_fail "create team-b/c"
e2e_wait_log a '^launcher-up' 1 120
e2e_wait_for "kc get pod b-worker-0 -o jsonpath='{.status.phase}' | grep -qx Running" 60 || e2e_fail "b-worker-0 not running"
e2e_wait_for "kc -n team-b get pod c-worker-0 -o jsonpath='{.status.phase}' | grep -qx Running" 60 || e2e_fail "team-b/c-worker-0 not running"
la=$(launcher_pod a)
tok=$(kc exec "$la" -c launcher -- cat /var/run/secrets/kubernetes.io/serviceaccount/token) || e2e_fail "reading A's launcher token"
[ -n "$tok" ] || e2e_fail "empty launcher token"
echo "$tok" >"$E2E_DIR/a-launcher.token"
sed "s/^\( *token: \).*/\1$tok/" "$KS/kubeconfig" >"$E2E_DIR/a.kubeconfig"; chmod 600 "$E2E_DIR/a.kubeconfig"
ka() { timeout 60 "$KUBESIM" run --dir "$KS" -- kubectl --kubeconfig "$E2E_DIR/a.kubeconfig" "$@"; }
n403=0 bad=()
allow() { ka "$@" >"$E2E_DIR/rbac.out" 2>&1 || bad+=("allowed action failed: kubectl $* : $(tail -1 "$E2E_DIR/rbac.out")"); }
deny() {
  if ka "$@" >"$E2E_DIR/rbac.out" 2>&1; then bad+=("NOT denied: kubectl $*")
  elif grep -qi forbidden "$E2E_DIR/rbac.out"; then n403=$((n403 + 1))
  else bad+=("kubectl $* failed but not with Forbidden: $(tail -1 "$E2E_DIR/rbac.out")"); fi
}
allow exec a-worker-0 -c worker -- true
allow get pods -l mpi_job_name=a
deny exec b-worker-0 -c worker -- true
deny exec -n team-b c-worker-0 -c worker -- true
deny get secrets
deny get secret a-ssh
deny get configmaps
deny get pods -n team-b
deny get pods -A
deny delete pod a-worker-1 --wait=false
deny run x --image=busybox --restart=Never -- true
deny create token a-launcher
deny get mpijobs
# mpi-rsh with the launcher's identity, as mpirun would call it
if ksrun env MPI_JOB_NAMESPACE=default MPI_JOB_WORKER_CONTAINER=worker KUBECONFIG="$E2E_DIR/a.kubeconfig" \
     "$BINDIR/mpi-rsh" -vvv b-worker-0 true >"$E2E_DIR/rsh-b.out" 2>&1; then
  bad+=("mpi-rsh into job B's worker succeeded")
elif grep -qiE '403|forbidden' "$E2E_DIR/rsh-b.out"; then n403=$((n403 + 1))
else bad+=("mpi-rsh into B failed without naming 403: $(tail -1 "$E2E_DIR/rsh-b.out")"); fi
ksrun env MPI_JOB_NAMESPACE=default MPI_JOB_WORKER_CONTAINER=worker KUBECONFIG="$E2E_DIR/a.kubeconfig" \
  "$BINDIR/mpi-rsh" -vvv a-worker-0 echo rsh-ok >"$E2E_DIR/rsh-a.out" 2>&1 || bad+=("mpi-rsh into A's own worker failed: $(tail -1 "$E2E_DIR/rsh-a.out")")
logged=$(grep -cE " 403 [0-9.]+ms system:serviceaccount:default:a-launcher\$" "$KS/apiserver.log" || true)
[ "$logged" -ge "$n403" ] || bad+=("access log has $logged 403s for a-launcher, expected >= $n403")
e2e_note "rbac403=$n403 (access log: $logged)"

# ---- SSH: per-job keys, 0600, host key verified ----
ssh_ok=skipped
if [ -z "${E2E_NO_SSH:-}" ]; then
  SSHPROG='[sh, -c, "timeout 60 mpirun -np 2 --bind-to none -x PATH mpi-pi 100000 && echo ssh-job-ok; sleep 200"]'
  TRANSPORT=ssh PROG=$SSHPROG e2e_create s1
  TRANSPORT=ssh PROG=$SSHPROG e2e_create s2
  e2e_wait_for "launcher_log s1 | grep -q ssh-job-ok" 150 ||
    bad+=("SSH job s1 did not run mpi-pi: $(launcher_log s1 | tail -4 | tr '\n' ' ')")
  k1=$(kc get secret s1-ssh -o jsonpath='{.data.ssh-privatekey}'); k2=$(kc get secret s2-ssh -o jsonpath='{.data.ssh-privatekey}')
  [ -n "$k1" ] && [ -n "$k2" ] && [ "$k1" != "$k2" ] || bad+=("SSH keys not per job (s1/s2 secrets missing or equal)")
  echo "$k1" | base64 -d >"$E2E_DIR/s1.key" 2>/dev/null
  echo "$k2" | base64 -d >"$E2E_DIR/s2.key" 2>/dev/null
  ls1=$(launcher_pod s1)
  dir=$(kc get pod "$ls1" -o jsonpath='{.spec.containers[0].env[?(@.name=="MPI_JOB_SSH_DIR")].value}')
  modes=$(kc exec "$ls1" -c launcher -- sh -c "stat -L -c '%a %n' $dir/*" 2>&1)
  e2e_log "key files in $ls1: $(echo $modes)"
  echo "$modes" | grep -E 'privatekey|id_ed25519$|id_rsa$' | grep -qv '^600 ' && bad+=("private key not mode 0600: $(echo $modes)")
  echo "$modes" | grep -qE '^600 .*(ssh-privatekey|id_ed25519)$' || bad+=("no 0600 private key in $dir: $(echo $modes)")
  kc exec "$ls1" -c launcher -- /opt/kube/mpi-rsh s1-worker-0.s1.default.svc echo own-ok >"$E2E_DIR/ssh-own.out" 2>&1 ||
    bad+=("SSH into its own worker failed: $(tr '\n' ' ' <"$E2E_DIR/ssh-own.out" | cut -c1-300)")
  e2e_wait_for "kc get pod s2-worker-0 -o jsonpath='{.status.containerStatuses[0].ready}' | grep -qx true" 60 || true
  if kc exec "$ls1" -c launcher -- timeout 60 /opt/kube/mpi-rsh -vvv s2-worker-0.s2.default.svc echo other-ok >"$E2E_DIR/ssh-other.out" 2>&1; then
    bad+=("SSH from job s1 into s2's worker (other host key) SUCCEEDED")
  elif grep -qiE 'host key' "$E2E_DIR/ssh-other.out"; then ssh_ok=refused-host-key
  else bad+=("SSH s1->s2 failed, but not on the host key: $(grep mpi-rsh "$E2E_DIR/ssh-other.out" | tail -1)"); fi
  e2e_note "ssh=$ssh_ok"
fi

# ---- secrets never logged ----
E2E_RUN_T=60 ksrun env MPI_JOB_NAMESPACE=default KUBECONFIG="$E2E_DIR/a.kubeconfig" "$BINDIR/mpi-agent" status -v -v a \
  >"$E2E_DIR/agent-status.out" 2>&1 || true
{ cat "$KS/apiserver.log" "$E2E_DIR"/op-*.log "$E2E_DIR"/rsh-*.out "$E2E_DIR"/ssh-*.out "$E2E_DIR/agent-status.out"
  for ns in default team-b mpi-operator; do
    for p in $(kc -n $ns get pods -o name); do kc -n $ns logs "$p" --all-containers 2>&1; done
  done; } >"$E2E_DIR/all-logs.txt"
secrets=("$tok" "$(cat "$E2E_DIR/op-a.token")" "$(sed -n 's/^ *token: //p' "$KS/kubeconfig")")
for f in "$E2E_DIR"/s1.key "$E2E_DIR"/s2.key; do
  [ -s "$f" ] && secrets+=("$(sed -n 2p "$f" | cut -c1-40)" "$(sed -n 4p "$f" | cut -c1-40)")
done
leaks=0
for s in "${secrets[@]}"; do
  [ ${#s} -ge 16 ] || continue
  if grep -qF -- "$s" "$E2E_DIR/all-logs.txt"; then leaks=$((leaks + 1)); bad+=("secret ${s:0:12}... appears in the logs"); fi
done
grep -q 'PRIVATE KEY' "$E2E_DIR/all-logs.txt" && { leaks=$((leaks + 1)); bad+=("a PRIVATE KEY block in the logs"); }
e2e_note "secretsChecked=${#secrets[@]} logBytes=$(wc -c <"$E2E_DIR/all-logs.txt") leaks=$leaks"
for b in "${bad[@]}"; do e2e_log "BAD: $b"; done
[ ${#bad[@]} -eq 0 ] || e2e_fail "${#bad[@]} security checks failed: ${bad[*]}"
e2e_pass
