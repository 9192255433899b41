#!/usr/bin/env bash
# rsh_ssh_mpirun.sh - mpi-rsh's SSH transport into kubesim pods running real OpenSSH
# sshd (port 2222, host key = the job's Ed25519 key, as upstream v2 jobs): exit codes,
# stdin with EOF, stderr, quoting identical to OpenSSH's ssh to the same sshd, a wrong
# host key refused, then Open MPI mpirun with MPI_JOB_TRANSPORT=ssh for 2 and 8 workers.
# timeout: 600
set -u
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
BINDIR=${BINDIR:-$ROOT/bin}
. "$ROOT/tests/lib/kubesim.sh"
ks_skip_unless_root
[ -x /usr/sbin/sshd ] && command -v ssh-keygen >/dev/null || { echo "OpenSSH not installed"; exit 77; }
command -v mpicc >/dev/null || { echo "Open MPI not installed"; exit 77; }
RSH=$BINDIR/mpi-rsh
ks_up
M=$(mktemp -d "$ROOT/build/rsh-ssh.XXXXXX")   # pods see the host's files, but not its /tmp
ks_on_exit 'rm -rf "$M"'
NETNS=$(cat "$KS_DIR/state/netns")
export KUBECONFIG=$KS_DIR/kubeconfig
export OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader,tcp OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
IN() { nsenter --net=/run/netns/$NETNS -- "$@"; }
fails=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fails=$((fails+1)); }
check() { if [ "$2" == "$3" ]; then ok "$1"; else bad "$1: want [$2] got [$3]"; fi; }

. "$ROOT/tests/lib/sshd_fixture.sh"   # the job's key pair as the <job>-ssh Secret lays it out, sshd_config
sshd_fixture "$M" || ks_fail "ssh-keygen"
K=$M/ssh
for i in $(seq 0 7); do
  printf -- '---\napiVersion: v1\nkind: Pod\nmetadata: {name: job-worker-%d}\nspec:\n  containers: [{name: main, image: debian, command: [/usr/sbin/sshd, -D, -e, -f, %s]}]\n' $i "$M/sshd_config"
done > "$M/pods.yaml"
IN kubectl apply --validate=false -f "$M/pods.yaml" >/dev/null || ks_fail "apply"
ks_wait_for '[ "$(IN kubectl get pods -o jsonpath="{.items[*].status.phase}")" = "$(echo Running Running Running Running Running Running Running Running)" ]' 90 \
  || ks_fail "sshd pods not running"
IPS=($(IN kubectl get pods -o jsonpath='{range .items[*]}{.status.podIP}{"\n"}{end}'))
[ ${#IPS[@]} = 8 ] || ks_fail "pod IPs: ${IPS[*]}"
ks_wait_for "IN bash -c 'exec 3<>/dev/tcp/${IPS[7]}/2222'" 30 || ks_fail "sshd not listening"
export MPI_JOB_TRANSPORT=ssh MPI_JOB_SSH_DIR=$K MPI_JOB_SSH_PORT=2222
R() { IN timeout 120 "$RSH" "$@"; }
SSH() { IN timeout 120 ssh -q -p 2222 -i "$K/id" -o UserKnownHostsFile=/dev/null -o StrictHostKeyChecking=no -o BatchMode=yes "$@"; }
H=${IPS[0]}

for c in 0 1 3 255; do R -n "$H" "exit $c"; check "ssh transport: exit $c" "$c" "$?"; done
out=$(R -n "$H" 'echo out; echo err >&2' 2>"$M/err"); check "stdout" out "$out"; check "stderr" err "$(cat "$M/err")"
head -c 2000000 /dev/urandom > "$M/in2"
got=$(R "$H" 'wc -c' < "$M/in2"); check "2 MB stdin + EOF" 2000000 "$got"
# quoting: mpi-rsh and OpenSSH's ssh to the same sshd run the same remote command
q=0
for args in "printf '<%s>' 'a b' c" "echo one ';' echo two" "printf '[%s]' '' x ''"; do
  eval "set -- $args"
  want=$(SSH -n "$H" "$@" 2>&1; echo "rc=$?")
  got=$(R -n "$H" "$@" 2>&1; echo "rc=$?")
  [ "$want" == "$got" ] || { bad "quoting vs ssh [$args]: want [$want] got [$got]"; q=1; }
done
[ $q = 0 ] && ok "quoting: 3 argument sets identical to OpenSSH ssh"
# a host key that is not the job's is refused
W2=$M/other; mkdir -p "$W2"; ssh-keygen -q -t ed25519 -N '' -f "$W2/id"
cp "$W2/id" "$W2/ssh-privatekey"; cp "$W2/id.pub" "$W2/ssh-publickey"; cp "$K/id.pub" "$W2/authorized_keys"
msg=$(MPI_JOB_SSH_DIR=$W2 R -n "$H" true 2>&1); rc=$?
check "foreign host key -> 255" 255 $rc
[[ "$msg" == *[Hh]ost\ key* ]] && ok "  $msg" || bad "  host key message: $msg"

cat > "$M/allred.c" <<'EOF'
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv)
{
    int r, n, s = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Allreduce(&r, &s, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    printf("rank %d/%d sum %d\n", r, n, s);
    MPI_Finalize();
    return 0;
}
EOF
mpicc -o "$M/allred" "$M/allred.c" || ks_fail "mpicc"
for n in 2 8; do
  printf '%s slots=1\n' "${IPS[@]:0:$n}" > "$M/hosts$n"
  t0=$(date +%s%N)
  out=$(OMPI_MCA_plm_rsh_agent=$RSH OMPI_MCA_plm_rsh_no_tree_spawn=1 OMPI_MCA_orte_leave_session_attached=1 \
        IN timeout 120 mpirun --hostfile "$M/hosts$n" -np $n "$M/allred" 2>&1); rc=$?
  ms=$(( ($(date +%s%N) - t0) / 1000000 ))
  sum=$(( n * (n - 1) / 2 ))
  if [ $rc = 0 ] && [ "$(grep -c "^rank [0-9]*/$n sum $sum\$" <<<"$out")" = $n ]; then ok "Open MPI over SSH transport, $n workers (${ms} ms)"
  else bad "Open MPI over SSH, $n workers, rc=$rc: $out"; fi
done

echo "failures: $fails"
[ $fails -eq 0 ]
