#!/usr/bin/env bash
# agent_rshwatch: the launch watch of `mpi-agent run` (docs/agent.md "No rsh call") with fake
# launchers on kubesim: an Open MPI 5 mpirun that runs ssh itself and dies (issue #36) fails the
# job at once naming PRRTE and PRTE_MCA_plm_ssh_agent; one that runs its ranks locally is
# stopped as soon as its rank is seen twice, naming it; one that starts nothing is stopped at the
# bound; one that calls mpi-rsh, `mpirun --version` and a usage error are left alone.
# timeout: 120
set -euo pipefail
. "$(dirname "$0")/../lib/agent_jobs.sh"
ks_up
export MPI_AGENT_TERMINATION_LOG=$KS_DIR/term MPI_JOB_NAME=o5 MPI_JOB_WORKERS=2
for i in 0 1; do ghost_pod o5 $i; echo ---; done | ks_kubectl create -f - >/dev/null
set_ready o5-worker-0; set_ready o5-worker-1
RUN=("$AGENT" run --no-reach-check --timeout 20s --dest "$KS_DIR/nokube" --rsh-timeout 2s)

# Open MPI 5's layout: mpirun execs prterun (ompi/tools/mpirun/main.c). The watch knows a launcher
# by its executable, so the fake prterun is a copy of the shell named prterun running prterun.sh.
F=$KS_DIR/fakebin; mkdir -p "$F"
printf '#!/bin/sh\nexec "%s/prterun" "%s/prterun.sh" "$@"\n' "$F" "$F" > "$F/mpirun"
cp "$(readlink -f /bin/sh)" "$F/prterun"
mkfifo "$F/prterun.sh.fifo"
mkdir -p "$F/x" && ln -s "$(command -v sleep)" "$F/x/ssh" # the fake's ssh: a process named ssh for 0.1 s (off PATH)
# mode ssh: what PRRTE did with our old variables; local: ranks on the launcher; idle: starts
# nothing (stuck before its launch); rsh: calls the agent PRRTE reads, as plm ssh would, then
# becomes the rank's wait (no child of the launcher after the call: that would be a rank on the
# launcher); version: --version
cat > "$F/prterun.sh" <<'SH'
#!/bin/sh
case "$1" in --version) echo "prterun (PMIx Reference RunTime Environment) 3.0.8"; exit 0;;
  --bogus) echo "prterun: Error: unknown option \"--bogus\"" >&2; exit 1;; esac
case "$FAKE_MODE" in
ssh)   "${0%/*}/x/ssh" 0.1
       echo "ssh: connect to host o5-worker-0.o5-worker.default.svc port 2222: Connection refused" >&2
       echo "PRTE has lost communication with a remote daemon." >&2; exit 255;;
local) echo "rank 0 of 2 on $(hostname)"; sleep 30.25; exit 0;;
idle)  read -r _ <>"$0.fifo";;
rsh)   agent=${PRTE_MCA_plm_ssh_agent%% : *}
       [ -x "$agent" ] || { echo "no agent in PRTE_MCA_plm_ssh_agent='$PRTE_MCA_plm_ssh_agent'" >&2; exit 9; }
       "$agent" o5-worker-0 true 2>/dev/null; echo "pi is 3.14"; exec sleep 3;;
esac
exit 3
SH
chmod +x "$F/mpirun" "$F/prterun.sh"
export PATH=$F:$PATH

ks_log "1. PRRTE runs ssh itself and dies in 0.1 s: the run fails naming the stack and the variable"
t0=$(now_ms); rc=0
FAKE_MODE=ssh ks_run "${RUN[@]}" -- mpirun -np 2 /pi >"$KS_DIR/o1" 2>&1 || rc=$?
dt=$(( $(now_ms) - t0 ))
ks_log "   exit $rc after $dt ms"
[ $rc -ne 0 ] || ks_fail "run exited 0"
# the fake's ssh (0.1 s) may be seen in two looks before it exits: either account
expect_in "$KS_DIR/o1" "Open MPI 5 (PRRTE) started no daemon through" \
  "it did not read PRTE_MCA_plm_ssh_agent ('" "set PRTE_MCA_plm_ssh_agent='" "in the launcher's environment"
grep -qE "and exited after|but started 'ssh' \(pid [0-9]+\) itself" "$KS_DIR/o1" || ks_fail "o1: neither account: $(cat "$KS_DIR/o1")"
expect_in "$KS_DIR/term" "Open MPI 5 (PRRTE) started no daemon" "PRTE_MCA_plm_ssh_agent"

ks_log "2. ranks on the launcher, no rsh call: the placement check stops it once the rank is seen"
t0=$(now_ms); rc=0
FAKE_MODE=local ks_run "${RUN[@]}" -- mpirun -np 2 /pi >"$KS_DIR/o2" 2>&1 || rc=$?
dt=$(( $(now_ms) - t0 ))
ks_log "   exit $rc after $dt ms"
[ $rc -ne 0 ] || ks_fail "run exited 0"
[ $dt -lt 8000 ] || ks_fail "took $dt ms with --rsh-timeout 2s"
# the stack from the processes: mpirun became prterun (no PRRTE words in this output)
expect_in "$KS_DIR/o2" "rank 0 of 2 on" "Open MPI 5 (PRRTE) started 'sleep' (pid " "though the hostfile does not name the launcher" \
  "runLauncherAsWorker: true" "stopping the command"
grep -qE "on the launcher (0|1)\.[0-9] s after it began" "$KS_DIR/o2" || ks_fail "o2: not stopped within 2 s of the rank"
pgrep -f "sleep 30.25" >/dev/null && ks_fail "the fake ranks outlived the agent"

ks_log "2b. a launcher that starts nothing at all (stuck before its launch): stopped at the 2 s bound"
t0=$(now_ms); rc=0
FAKE_MODE=idle ks_run "${RUN[@]}" -- timeout 60 mpirun -np 2 /pi >"$KS_DIR/o2b" 2>&1 || rc=$?
dt=$(( $(now_ms) - t0 ))
ks_log "   exit $rc after $dt ms"
[ $rc -ne 0 ] || ks_fail "run exited 0"
[ $dt -lt 8000 ] || ks_fail "took $dt ms with --rsh-timeout 2s"
# under timeout (a process group of its own) too: the watch walks the command's descendants
expect_in "$KS_DIR/o2b" "Open MPI 5 (PRRTE) started no daemon through" "nor any other process, within 2." \
  "it may be stuck before its launch" "it did not read PRTE_MCA_plm_ssh_agent"

ks_log "3. a launch that calls mpi-rsh (as PRRTE's plm ssh does) is not touched"
rc=0
FAKE_MODE=rsh ks_run "${RUN[@]}" -- mpirun -np 2 /pi >"$KS_DIR/o3" 2>&1 || rc=$?
[ $rc -eq 0 ] || ks_fail "run exited $rc"
expect_in "$KS_DIR/o3" "pi is 3.14"
grep -q "started no daemon" "$KS_DIR/o3" && ks_fail "launch watch fired although mpi-rsh was called"

ks_log "4. mpirun --version asks no daemon: not watched"
rc=0
ks_run "${RUN[@]}" -- mpirun --version >"$KS_DIR/o4" 2>&1 || rc=$?
[ $rc -eq 0 ] || ks_fail "--version: exit $rc"
grep -q "started no daemon" "$KS_DIR/o4" && ks_fail "launch watch fired for --version"

ks_log "5. --rsh-timeout 0 turns it off: the fast failure keeps mpirun's own account"
rc=0
FAKE_MODE=ssh ks_run "${RUN[@]}" --rsh-timeout 0 -- mpirun -np 2 /pi >"$KS_DIR/o5" 2>&1 || rc=$?
[ $rc -eq 255 ] || ks_fail "exit $rc, want mpirun's 255"
grep -q "started no daemon" "$KS_DIR/o5" && ks_fail "launch watch fired with --rsh-timeout 0"
ks_log "6. a usage error before any launch keeps mpirun's own account"
rc=0
ks_run "${RUN[@]}" -- mpirun --bogus >"$KS_DIR/o6" 2>&1 || rc=$?
[ $rc -eq 1 ] || ks_fail "exit $rc, want mpirun's 1"
expect_in "$KS_DIR/o6" "unknown option"
grep -q "started no daemon" "$KS_DIR/o6" && ks_fail "launch watch fired for a usage error"
ks_log "ok"
