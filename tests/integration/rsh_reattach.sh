#!/usr/bin/env bash
# rsh_reattach.sh - the reattach after an exec stream cut without a status (docs/rsh.md
# "Reattach") on kubesim, whose fault exec-cut does what a real kubelet restart does: every
# open exec stream cut, the commands running on. mpi-rsh alone gets the command's exit code
# back; the real Open MPI mpirun under the stream holder (as mpi-agent runs it) finishes with
# exit 0 and every rank's output after the cut; with MPI_RSH_REATTACH_S=0 the cut fails mpirun
# as before; a cut whose pod is then deleted ends 255 naming the pod, well within the bound;
# nothing is left.
# timeout: 240
set -u
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
BINDIR=${BINDIR:-$ROOT/bin}
. "$ROOT/tests/lib/kubesim.sh"
ks_skip_unless_root
command -v mpirun >/dev/null || { echo "Open MPI not installed"; exit 77; }
[ -x "$BINDIR/mpi-rsh-holder" ] || ks_fail "build mpi-rsh-holder first"
ks_up
M=$(mktemp -d "${TMPDIR:-/tmp}/rsh-reattach.XXXXXX")
MP=
ks_on_exit '[ -z "$MP" ] || kill -KILL -- -"$MP" 2>/dev/null; rm -rf "$M"'
NETNS=$(cat "$KS_DIR/state/netns")
export KUBECONFIG=$KS_DIR/kubeconfig MPI_JOB_NAMESPACE=default MPI_JOB_WORKER_CONTAINER=main
export OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,tcp OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export MPI_RSH_TLS_CACHE_DIR=$M/tls
unset MPI_JOB_TRANSPORT MPI_RSH_HOLDER MPI_RSH_REATTACH_S
IN() { nsenter --net=/run/netns/$NETNS -- "$@"; }
streams() { timeout 30 "$KUBESIM" stat --dir "$KS_DIR" exec-streams | awk '{print $1}'; }
fails=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fails=$((fails+1)); }

for i in 0 1; do
  printf -- '---\napiVersion: v1\nkind: Pod\nmetadata: {name: ra-%d}\nspec:\n  terminationGracePeriodSeconds: 1\n  containers: [{name: main, image: debian, command: [sleep, infinity]}]\n' $i
  echo "ra-$i slots=1" >> "$M/hosts"
done > "$M/pods.yaml"
IN kubectl apply --validate=false -f "$M/pods.yaml" >/dev/null || ks_fail "apply"
IN kubectl wait --for=condition=Ready pod --all --timeout=120s >/dev/null || ks_fail "pods not Ready"

# 1. mpi-rsh alone: cut at 1 s, the command's code (7) comes back through the reattach
IN timeout 60 "$BINDIR/mpi-rsh" ra-0 'echo before; sleep 4; exit 7' >"$M/o1" 2>"$M/e1" & rp=$!
ks_wait_for '[ "$(streams)" -ge 1 ]' 20 || bad "no exec stream open"
sleep 1; t0=$(date +%s%N)
ks_fault exec-cut >/dev/null || bad "fault exec-cut"
wait $rp; rc=$?; ms=$(( ($(date +%s%N) - t0) / 1000000 ))
[ $rc -eq 7 ] && ok "mpi-rsh: cut, reattached, exit 7 ($ms ms after the cut)" || bad "mpi-rsh after the cut: rc $rc: $(cat "$M/e1")"
grep -q "reattaching (up to 60 s)" "$M/e1" && grep -q "reattached: the session runs on" "$M/e1" \
  && ok "  $(tr '\n' ' ' < "$M/e1")" || bad "  stderr: $(cat "$M/e1")"

# mpirun under the holder, as mpi-agent starts it on the exec transport (its launch environment
# keeps the daemons attached to their streams)
launch() { # launch OUT [env...]: mpirun -np 2 in the background, pid in MP
  setsid bash -c 'exec "$@"' _ nsenter --net=/run/netns/$NETNS -- env "${@:2}" timeout -k 5 120 "$BINDIR/mpi-rsh-holder" -- \
    mpirun --hostfile "$M/hosts" -np 2 --map-by node --bind-to none -mca plm_rsh_agent "$BINDIR/mpi-rsh : false" \
    -mca plm_rsh_no_tree_spawn 1 -mca orte_leave_session_attached 1 sh -c 'echo rank-up; sleep 6; echo rank-done' >"$1" 2>&1 &
  MP=$!
}
cut_when_up() { # cut_when_up OUT: once both ranks run
  ks_wait_for "[ \"\$(grep -c '^rank-up' $1)\" -ge 2 ]" 60 || bad "ranks not up: $(tail -n 5 "$1")"
  ks_fault exec-cut >/dev/null || bad "fault exec-cut"
}

# 2. mpirun survives the cut: exit 0, both ranks' output after it
launch "$M/o2"
cut_when_up "$M/o2"
wait "$MP"; rc=$?; MP=
[ $rc -eq 0 ] && [ "$(grep -c '^rank-done' "$M/o2")" -eq 2 ] && ok "mpirun under the holder survives the cut: rc 0, 2 rank-done" \
  || bad "mpirun after the cut: rc $rc: $(tail -n 8 "$M/o2")"
n=$(grep -c 'reattached: the session runs on' "$M/o2")
[ "$n" -eq 2 ] && ok "  both streams reattached" || bad "  $n streams reattached: $(grep mpi-rsh "$M/o2")"

# 3. MPI_RSH_REATTACH_S=0: the cut fails mpirun, as before the reattach
launch "$M/o3" MPI_RSH_REATTACH_S=0
cut_when_up "$M/o3"
wait "$MP"; rc=$?; MP=
[ $rc -ne 0 ] && grep -q "without an exit status" "$M/o3" && ok "MPI_RSH_REATTACH_S=0: mpirun fails (rc $rc) naming the cut" \
  || bad "MPI_RSH_REATTACH_S=0: rc $rc: $(tail -n 5 "$M/o3")"

# 4. cut, then the pod deleted: 255 naming the pod, long before the bound
IN timeout 60 "$BINDIR/mpi-rsh" ra-1 'sleep 30; exit 0' >/dev/null 2>"$M/e4" & rp=$!
ks_wait_for '[ "$(streams)" -ge 1 ]' 20 || bad "no exec stream open"
ks_fault exec-cut >/dev/null || bad "fault exec-cut"
ks_wait_for "grep -q 'reattached' $M/e4" 20 || bad "not reattached: $(cat "$M/e4")"
t0=$(date +%s%N)
ks_fault delete-pod-now default/ra-1 >/dev/null || bad "delete-pod-now"
wait $rp; rc=$?; ms=$(( ($(date +%s%N) - t0) / 1000000 ))
[ $rc -eq 255 ] && [ $ms -lt 20000 ] && grep -q "mpi-rsh: ra-1: exec stream cut without an exit status, and reattach failed" "$M/e4" \
  && ok "pod deleted after the cut: 255 in $ms ms: $(tail -n 1 "$M/e4")" || bad "pod deleted: rc $rc in $ms ms: $(cat "$M/e4")"

ks_wait_for '[ "$(streams)" -eq 0 ]' 20 && ok "no exec stream left in kubesim" || bad "$(streams) exec streams left in kubesim"
left=$(IN kubectl exec ra-0 -- sh -c 'grep -l -s MPI_RSH_SESSION= /proc/[0-9]*/environ | wc -l')
[ "$left" = 0 ] && ok "ra-0: no tagged process left" || bad "ra-0: $left tagged processes left"
# this test's own mpi-rsh and holder processes: those in its kubesim's network namespace
# (another run's on the machine, e.g. a benchmark's, are not this test's leftovers)
ours() { local n p; n=$(stat -Lc %i "/run/netns/$NETNS")
  for p in $(pgrep -f "$BINDIR/mpi-rsh"); do
    [ "$(stat -Lc %i "/proc/$p/ns/net" 2>/dev/null)" != "$n" ] || ps -o pid=,args= -p "$p"
  done; }
[ -z "$(ours)" ] && ok "no holder or mpi-rsh left" || bad "left running: $(ours | head -3)"
[ $fails -eq 0 ] || ks_fail "$fails check(s) failed"
echo "rsh_reattach: all checks passed"
