#!/usr/bin/env bash
# rsh_holder.sh - the stream holder (mpi-rsh-holder + mpi-rsh-thin, docs/rsh.md) with the
# real Open MPI mpirun over 16 one-slot workers on three kubesim nodes: every rank runs
# and prints its pod; while the 16 streams are live there is one holder, 16 libc-only thin
# clients and no full mpi-rsh, the API server counts 16 exec streams and the transport's
# summed Pss stays under 1 MiB per stream; a worker killed mid-run fails mpirun within 60 s
# and then nothing is left (no holder, no thin client, no mpi-rsh, no exec stream in
# kubesim); mpi-agent run starts mpirun under the holder; an API server restart mid-run fails mpirun loudly within 60 s, nothing left;
# mpi-rsh whose holder socket is gone runs the stream alone.
# timeout: 300
set -u
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
BINDIR=${BINDIR:-$ROOT/bin}
. "$ROOT/tests/lib/kubesim.sh"
ks_skip_unless_root
command -v mpirun >/dev/null || { echo "Open MPI not installed"; exit 77; }
[ -x "$BINDIR/mpi-rsh-holder" ] && [ -x "$BINDIR/mpi-rsh-thin" ] || ks_fail "build mpi-rsh-holder and mpi-rsh-thin first"
N=16
ks_up --nodes 3
M=$(mktemp -d "${TMPDIR:-/tmp}/rsh-holder.XXXXXX")
MP=
# our processes only: those started under this test's mpirun (found through its session id)
ours() { [ -n "$MP" ] && ps -o pid=,comm= -s "$(ps -o sid= -p "$MP" 2>/dev/null | tr -d ' ')" 2>/dev/null | awk -v c="$1" '$2 == c {print $1}'; }
ks_on_exit '[ -z "$MP" ] || kill -KILL -- -"$MP" 2>/dev/null; rm -rf "$M"'
NETNS=$(cat "$KS_DIR/state/netns")
export KUBECONFIG=$KS_DIR/kubeconfig MPI_JOB_NAMESPACE=default MPI_JOB_WORKER_CONTAINER=main
export OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,tcp OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export MPI_RSH_TLS_CACHE_DIR=$M/tls
unset MPI_JOB_TRANSPORT MPI_RSH_HOLDER
IN() { nsenter --net=/run/netns/$NETNS -- "$@"; }
# this test's mpi-rsh, holder and thin clients left running: those in its kubesim's network
# namespace (other tests run side by side with their own: tests/run-integration.sh)
left() { local n p; n=$(stat -Lc %i "/run/netns/$NETNS")
  for p in $(pgrep -f "$BINDIR/mpi-rsh"); do
    [ "$(stat -Lc %i "/proc/$p/ns/net" 2>/dev/null)" != "$n" ] || ps -o pid=,args= -p "$p"
  done; }
streams() { timeout 30 "$KUBESIM" stat --dir "$KS_DIR" exec-streams | awk '{print $1}'; }
fails=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fails=$((fails+1)); }

for ((i = 0; i < N; i++)); do
  printf -- '---\napiVersion: v1\nkind: Pod\nmetadata: {name: hw-%d, labels: {mpi_job_name: hw, mpi_role_type: worker}}\nspec:\n  terminationGracePeriodSeconds: 1\n  containers: [{name: main, image: debian, command: [sleep, infinity]}]\n' $i
  echo "hw-$i slots=1" >> "$M/hosts"
done > "$M/pods.yaml"
IN kubectl apply --validate=false -f "$M/pods.yaml" >/dev/null || ks_fail "apply"
IN kubectl wait --for=condition=Ready pod --all --timeout=150s >/dev/null || ks_fail "worker pods not Ready"
nodes=$(IN kubectl get pods -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | sort -u | wc -l)
[ "$nodes" -eq 3 ] && ok "$N workers over 3 nodes" || bad "workers on $nodes nodes, not 3"

# mpirun under the holder; the rsh agent is plain mpi-rsh, as mpi-agent sets it
launch() { # launch OUT CMD...: in the background, pid in MP
  setsid bash -c 'exec "$@"' _ nsenter --net=/run/netns/$NETNS -- timeout -k 5 120 "$BINDIR/mpi-rsh-holder" -- \
    mpirun --hostfile "${HF:-$M/hosts}" -np "${NP:-$N}" --map-by node --bind-to none -mca plm_rsh_agent "$BINDIR/mpi-rsh : false" \
    -mca plm_rsh_no_tree_spawn 1 -mca orte_leave_session_attached 1 -mca plm_rsh_num_concurrent $N "${@:2}" >"$1" 2>&1 &
  MP=$!
}

# 1. every rank runs, through the holder
launch "$M/out1" hostname
wait "$MP"; rc=$?
got=$(grep -c '^hw-[0-9]*$' "$M/out1")
[ $rc -eq 0 ] && [ "$(grep '^hw-' "$M/out1" | sort -u | wc -l)" -eq $N ] && ok "mpirun -np $N hostname through the holder: $got ranks, each pod once" \
  || { bad "mpirun through the holder: rc $rc, $got ranks"; tail -n 20 "$M/out1"; }

# 1b. mpi-agent run starts its command under the holder (and not with MPI_AGENT_STREAM_HOLDER=0)
agent() { IN env MPI_JOB_NAME=hw MPI_JOB_WORKERS=$N MPI_AGENT_TERMINATION_LOG=$M/term "$@" "$BINDIR/mpi-agent" run \
  --no-reach-check --timeout 60s --dest "$M/none" --hostfile "$M/hosts" -- sh -c 'echo "holder=$MPI_RSH_HOLDER"' 2>"$M/agent.err"; }
out=$(agent env)
[[ "$out" == holder=*/mpi-rsh-holder-*/s ]] && ok "mpi-agent run: the command runs under the holder ($out)" \
  || { bad "mpi-agent run: got '$out'"; tail -n 5 "$M/agent.err"; }
out=$(agent env MPI_AGENT_STREAM_HOLDER=0)
[ "$out" = "holder=" ] && ok "MPI_AGENT_STREAM_HOLDER=0: no holder" || bad "MPI_AGENT_STREAM_HOLDER=0: got '$out'"

# 2. streams live: one holder, N thin clients, no full mpi-rsh; N streams in kubesim; Pss
launch "$M/out2" sleep 60
ks_wait_for '[ "$(streams)" -ge '$N' ]' 60 || bad "not $N exec streams open (kubesim counts $(streams))"
holders=$(ours mpi-rsh-holder | wc -l); thins=$(ours mpi-rsh-thin | wc -l); full=$(ours mpi-rsh | wc -l)
[ "$holders" -eq 1 ] && [ "$thins" -eq $N ] && [ "$full" -eq 0 ] && ok "1 holder, $N thin clients, no full mpi-rsh for $(streams) streams" \
  || bad "processes: $holders holders, $thins thin clients, $full full mpi-rsh (want 1, $N, 0)"
kb=0; for p in $(ours mpi-rsh-holder) $(ours mpi-rsh-thin); do
  kb=$((kb + $(awk '/^Pss:/ {print $2}' /proc/$p/smaps_rollup 2>/dev/null || echo 0)))
done
if nm -D "$BINDIR/mpi-rsh-holder" 2>/dev/null | grep -q __asan_init; then
  ok "transport Pss $kb KB = $((kb / N)) KB per stream (ASan build: shadow memory, bound not checked)"
else
  [ "$kb" -gt 0 ] && [ $((kb / N)) -lt 1024 ] && ok "transport Pss $kb KB = $((kb / N)) KB per stream (< 1024)" \
    || bad "transport Pss $kb KB = $((kb / N)) KB per stream (want 0 < x < 1024)"
fi

# 3. a worker killed mid-run (its pod deleted at once, its processes with it): mpirun fails
# within 60 s, and nothing is left
t0=$SECONDS
ks_fault delete-pod-now default/hw-5 >/dev/null || bad "delete-pod-now"
for _ in $(seq 600); do kill -0 "$MP" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$MP" 2>/dev/null; then
  bad "mpirun still running 60 s after a worker was killed; streams in kubesim: $(streams); processes and mpirun's last lines:"
  ps -eo pid=,ppid=,etimes=,args= | grep -E "$BINDIR/mpi-rsh|mpirun|mpi-rsh-thin" | grep -v grep | cut -c1-160
  tail -n 8 "$M/out2"
else
  wait "$MP"; rc=$?
  [ $rc -ne 0 ] && ok "worker killed: mpirun failed (rc $rc) after $((SECONDS - t0)) s" || bad "worker killed: mpirun exited 0"
fi
ks_wait_for '[ "$(streams)" -eq 0 ]' 20 && ok "no exec stream left in kubesim" || bad "$(streams) exec streams left in kubesim"
ks_wait_for '[ -z "$(left)" ]' 10 && ok "no holder, thin client or mpi-rsh left" \
  || { bad "left running: $(left | head -3)"; }
grep -q "hw-5" "$M/out2" && ok "the failure names the worker: $(grep -m1 'hw-5' "$M/out2" | cut -c1-120)" \
  || bad "mpirun's output does not name hw-5: $(tail -n 5 "$M/out2")"
MP=

# 4. the API server restarts mid-run: every stream breaks, mpirun fails within 60 s naming
# what broke, nothing is left
grep -v '^hw-5 ' "$M/hosts" > "$M/hosts4"
HF=$M/hosts4 NP=$((N - 1)) launch "$M/out4" sleep 60
ks_wait_for '[ "$(streams)" -ge '$((N - 1))' ]' 60 || bad "not $((N - 1)) exec streams open (kubesim counts $(streams))"
t0=$SECONDS
ks_fault restart-apiserver >/dev/null || bad "restart-apiserver"
for _ in $(seq 600); do kill -0 "$MP" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$MP" 2>/dev/null; then bad "mpirun still running 60 s after the API server restarted"; else
  wait "$MP"; rc=$?
  [ $rc -ne 0 ] && ok "API server restarted: mpirun failed (rc $rc) after $((SECONDS - t0)) s" || bad "API server restarted: mpirun exited 0"
fi
grep -q "mpi-rsh: hw-[0-9]*: exec: " "$M/out4" && ok "the failure names the stream: $(grep -m1 'mpi-rsh: hw-' "$M/out4" | cut -c1-120)" \
  || bad "mpirun's output does not name a broken stream: $(tail -n 5 "$M/out4")"
ks_wait_for '[ -z "$(left)" ]' 20 && ok "nothing left after the restart" \
  || bad "left running after the restart: $(left | head -3)"
MP=

# 5. the holder's socket is gone: mpi-rsh runs the stream alone
out=$(IN env MPI_RSH_HOLDER=$M/no-such-socket "$BINDIR/mpi-rsh" hw-3 'echo alone-$(hostname)' 2>&1)
[ "$out" = "alone-hw-3" ] && ok "no holder at \$MPI_RSH_HOLDER: mpi-rsh ran alone" || bad "fallback: got '$out'"

[ $fails -eq 0 ] || ks_fail "$fails check(s) failed"
echo "rsh_holder: all checks passed"
