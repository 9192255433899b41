#!/usr/bin/env bash
# timeout: 600
# Which rank failed, on which pod and node, and why, in the MPIJob (issue 24), on
# kubesim with real pods, the operator and mpi-agent: an MPI program
# (tests/mpi/rank_fail.c) fails on purpose under Open MPI 4 (rank 1 of 4 exits 3;
# rank 2 of 4 killed by SIGSEGV) and MPICH 4 (rank 1 of 4 killed by SIGSEGV). Each
# must name the rank (MPICH 4.0 prints none: the PID), the worker pod, its node and
# the exit code or signal in the Failed message, status.launcherFailure and
# status.rankFailure, a RankFailed Event carrying the last lines of output (also in
# `kubectl describe mpijob`), and mpi_operator_job_failures_total{reason}. The
# launcher's output is kept in ConfigMap <job>-log: readable with kubectl and
# `mpi-agent logs` after cleanPodPolicy All and after every pod of the job is
# deleted; `mpi-agent logs -f` follows a running launcher to its end; the log goes
# with the MPIJob (owner reference, garbage collection). A Hydra launch whose proxies all
# fail (mpiexec would wait for ever) is stopped by mpi-agent's daemon-exit stop, over exec (the
# stream holder's streams) and over SSH, naming the pod and code.
set -u
. "$(dirname "$0")/controller_common.bash"
PROG=$ROOT/build/${MODE:-release}/tests/mpi/rank_fail
[ -x "$PROG" ] || ks_fail "missing $PROG (make test-progs)"
ctl_cluster
ctl_start a --monitoring-port 18184 --leader-elect=false -v 1

# mk NAME IMPL LAUNCHER_COMMAND (a YAML list); WORKERS (4), LAUNCHER_ENV (a YAML list, none) and
# TRANSPORT (exec)
mk() {
  mpijob_yaml "$1" --ann "mpi-k8s.io/transport=${TRANSPORT:-exec}" --ann mpi-k8s.io/worker-timeout=90 --slots 1 --impl "$2" \
    --run-policy '{cleanPodPolicy: All, backoffLimit: 0}' --restart Never --workers "${WORKERS:-4}" \
    --command "$3" --launcher-container "env: ${LAUNCHER_ENV:-[]}" | kc create -f - >/dev/null || ks_fail "create $1"
}
OMPI='[mpirun, --allow-run-as-root, -np, "4", --bind-to, none, -mca, pml, ob1, -mca, btl, "self,tcp"'
mk fexit OpenMPI "$OMPI, -x, FAIL_MODE=exit, -x, FAIL_RANK=1, $PROG]"
mk fsegv OpenMPI "$OMPI, --tag-output, -x, FAIL_MODE=segv, -x, FAIL_RANK=2, $PROG]"
jobs=(fexit fsegv)
if command -v mpiexec.hydra >/dev/null && [ -x "${PROG}_mpich" ]; then
  mk fmpich MPICH "[mpiexec.hydra, -n, \"4\", -genv, FAIL_MODE, segv, -genv, FAIL_RANK, \"1\", ${PROG}_mpich]"
  jobs+=(fmpich)
else
  echo "note: no MPICH here (mpiexec.hydra, ${PROG}_mpich): the MPICH job is left out"
fi

# fproxy, fproxyssh: every Hydra proxy fails to start (mpiexec copied to the launcher's private
# /tmp, so Hydra runs /tmp/hx/hydra_pmi_proxy in the workers, which have none: exit 127) and
# mpiexec waits for them for ever; the agent stops it MPI_RSH_DAEMON_EXIT_S after the first exit
# line in its launch mark (the stream holder's over exec, mpi-rsh-ssh's over SSH)
if command -v mpiexec.hydra >/dev/null; then
  HX='[sh, -c, "mkdir -p /tmp/hx && cp $(command -v mpiexec.hydra) /tmp/hx/mpiexec && exec /tmp/hx/mpiexec -n 2 hostname"]'
  WORKERS=2 LAUNCHER_ENV='[{name: MPI_RSH_DAEMON_EXIT_S, value: "5"}]' mk fproxy MPICH "$HX"
  TRANSPORT=ssh WORKERS=2 LAUNCHER_ENV='[{name: MPI_RSH_DAEMON_EXIT_S, value: "5"}]' mk fproxyssh MPICH "$HX"
  fproxy=2 # jobs that fail with no signal
fi

# olost, flost: rank 1 kills the MPI daemon that started it (its parent: Open MPI 4's orted,
# Hydra's proxy) with SIGKILL; ORTE prints "lost communication with a remote daemon" naming the
# node and exits; Hydra 4.0 here waits on (locally it asserts and exits, naming nothing): the
# daemon-exit stop (5 s) ends it. The stream's end (137) in the launch mark gives the pod and code.
KILLD="sh, -c, '[ \$R != 1 ] || kill -9 \$PPID; exec sleep 60']"
WORKERS=2 mk olost OpenMPI "[mpirun, --allow-run-as-root, -np, \"2\", --bind-to, none, ${KILLD//\$R/\$OMPI_COMM_WORLD_RANK}"
if command -v mpiexec.hydra >/dev/null; then
  WORKERS=2 LAUNCHER_ENV='[{name: MPI_RSH_DAEMON_EXIT_S, value: "5"}]' mk flost MPICH "[mpiexec.hydra, -n, \"2\", ${KILLD//\$R/\$PMI_RANK}"
fi

# check JOB RANK_TEXT POD REASON WHAT: the finding everywhere the MPIJob shows it
check() {
  local j=$1 who=$2 pod=$3 reason=$4 what=$5 msg lf node ev
  wait_cond "$j" Failed True 180
  ks_wait_for "kc get cm $j-log -o jsonpath='{.data.log}' | grep -qE 'noticed that|detected that|BAD TERMINATION'" 30 \
    || ks_fail "$j-log lacks mpirun's report: $(kc get cm "$j-log" -o jsonpath='{.data.log}' | tail -n 30)"
  kc get cm "$j-log" -o jsonpath='{.data.log}' >"$KS_DIR/$j.kept" || ks_fail "$j-log"
  msg=$(cond "$j" Failed message)
  node=$(kc get mpijob "$j" -o jsonpath='{.status.rankFailure.node}')
  [ -n "$node" ] || { kc get mpijob "$j" -o yaml; ks_fail "$j: no status.rankFailure.node"; }
  case "$msg" in *"launcher pod $j-launcher-"*": $who on pod $pod (node $node) $what"*) ;;
    *) kc get mpijob "$j" -o yaml; ks_fail "$j: Failed message does not name $who, $pod, $node, '$what': $msg";; esac
  lf=$(kc get mpijob "$j" -o jsonpath='{.status.launcherFailure}')
  case "$lf" in *"$who on pod $pod (node $node) $what"*) ;; *) ks_fail "$j: launcherFailure: $lf";; esac
  [ "$(kc get mpijob "$j" -o jsonpath='{.status.rankFailure.reason}/{.status.rankFailure.pod}')" = "$reason/$pod" ] \
    || ks_fail "$j: rankFailure: $(kc get mpijob "$j" -o jsonpath='{.status.rankFailure}')"
  ks_wait_for "kc get events --field-selector reason=RankFailed,involvedObject.name=$j -o jsonpath='{.items[*].message}' | grep -q 'last lines'" 30 \
    || { kc get events; ks_fail "$j: no RankFailed Event with the last lines"; }
  ev=$(kc get events --field-selector reason=RankFailed,involvedObject.name="$j" -o jsonpath='{.items[0].message}')
  case "$ev" in "$who on pod $pod (node $node) $what; last lines:"*) ;;
    *) ks_fail "$j: RankFailed Event: $ev";; esac
  [ "${#ev}" -le 1024 ] || ks_fail "$j: Event message of ${#ev} bytes"
  # the last lines are the program's own, as kept in <job>-log, before mpirun's report
  printf '%s\n' "$ev" | sed '0,/; last lines:$/d' | grep . >"$KS_DIR/$j.last" || ks_fail "$j: no last lines: $ev"
  while IFS= read -r line; do
    grep -qxF -- "$line" "$KS_DIR/$j.kept" || ks_fail "$j: Event line not in the kept output: $line"
  done <"$KS_DIR/$j.last"
  grep -qE 'noticed that|detected that|BAD TERMINATION|Primary job' "$KS_DIR/$j.last" && ks_fail "$j: mpirun's report among the last lines"
  kc describe mpijob "$j" >"$KS_DIR/describe-$j" || ks_fail "describe $j"
  for t in RankFailed "$who on pod $pod" "Last Lines" "$what"; do
    grep -qF -- "$t" "$KS_DIR/describe-$j" || { cat "$KS_DIR/describe-$j"; ks_fail "$j: describe lacks '$t'"; }
  done
}
check fexit "rank 1" fexit-worker-1 exit_code "exited with code 3"
check fsegv "rank 2" fsegv-worker-2 signal "was killed by SIGSEGV"
if [ -n "$(kc get mpijob fmpich -o name 2>/dev/null)" ]; then
  pid=$(kc get mpijob fmpich -o jsonpath='{.status.rankFailure.pid}')
  check fmpich "a process (PID $pid)" fmpich-worker-1 signal "was killed by SIGSEGV"
  [ "$(kc get mpijob fmpich -o jsonpath='{.status.rankFailure.mpi}')" = mpich ] || ks_fail "fmpich: mpi"
fi
echo "attribution: ${jobs[*]} named rank, pod, node and reason"
# stopped JOB: Failed within 120 s, naming the pod, its node and the code, the agent as who
# stopped mpiexec; the proxies' error and the agent's line kept in JOB-log
stopped() {
  local j=$1 msg rf pod node
  ks_wait_for '[ "$(cond '"$j"' Failed status)" = True ]' 120 ||
    { kc logs -l "mpi_job_name=$j,mpi_role_type=launcher" --all-containers --tail 40; ks_fail "$j: not Failed within 120 s"; }
  msg=$(cond "$j" Failed message)
  rf=$(kc get mpijob "$j" -o jsonpath='{.status.rankFailure.form}/{.status.rankFailure.source}/{.status.rankFailure.exitCode}/{.status.rankFailure.pod}/{.status.rankFailure.node}')
  case "$rf" in daemon-exit/agent/127/"$j"-worker-[01]/?*) ;; *) ks_fail "$j: rankFailure $rf";; esac
  pod=$(kc get mpijob "$j" -o jsonpath='{.status.rankFailure.pod}')
  node=$(kc get mpijob "$j" -o jsonpath='{.status.rankFailure.node}')
  case "$msg" in *"the MPI daemon on pod $pod (node $node) exited with code 127 and the launch did not end on its own (mpi-agent stopped it); command "*) ;;
    *) kc get mpijob "$j" -o yaml; ks_fail "$j: Failed message: $msg";; esac
  kc get cm "$j-log" -o jsonpath='{.data.log}' >"$KS_DIR/$j.kept" || ks_fail "$j-log"
  grep -qE 'hydra_pmi_proxy: (not found|No such file or directory)' "$KS_DIR/$j.kept" || { cat "$KS_DIR/$j.kept"; ks_fail "$j-log lacks the proxies' error"; }
  grep -qF "mpi-agent: the MPI daemon on pod $pod exited with code 127; sh was still running 5 s later: stopping it" "$KS_DIR/$j.kept" ||
    { cat "$KS_DIR/$j.kept"; ks_fail "$j-log lacks the agent's line"; }
  echo "$j: $msg"
  jobs+=("$j")
}
if [ -n "${fproxy:-}" ]; then
  stopped fproxy
  stopped fproxyssh
fi

# ORTE notices the lost daemon over TCP and stops its mpi-rsh, racing the exec stream's
# status: with the code (launch mark) or without it, both accounts name the pod and node
# (the CI of session 22's stop saw the second)
daemon_killed olost "exited with code 137 (Open MPI lost communication with it)" \
  "was lost: Open MPI lost communication with it"
jobs+=(olost)
if command -v mpiexec.hydra >/dev/null; then
  daemon_killed flost "exited with code 137 and the launch failed (mpirun named no rank)" \
    "exited with code 137 and the launch did not end on its own (mpi-agent stopped it)"
  jobs+=(flost)
  fproxy=$((${fproxy:-0} + 1))
fi
fproxy=$((${fproxy:-0} + 1))

# the failure counter by reason (promtool-valid)
ks_wait_for "[ \"\$(metrics 18184 | awk '\$1 == \"mpi_operator_job_failures_total{reason=\\\"exit_code\\\"}\" {print \$2}')\" -ge 1 ]" 20 \
  || { metrics 18184 | grep failures; ks_fail "job_failures_total{exit_code}"; }
sig=$(metrics 18184 | awk '$1 == "mpi_operator_job_failures_total{reason=\"signal\"}" {print $2}')
[ "$sig" -ge $((${#jobs[@]} - 1 - ${fproxy:-0})) ] || ks_fail "job_failures_total{signal} = $sig"
metrics 18184 | promtool check metrics || ks_fail "promtool"

# the launcher's output outlives the pods: cleanPodPolicy All removed the workers; the
# launcher pods are deleted here too (as a node drain or a user would)
for j in "${jobs[@]}"; do
  ks_wait_for "[ -z \"\$(kc get pods -l mpi_job_name=$j,mpi_role_type=worker -o name)\" ]" 60 || ks_fail "$j: workers left"
done
kc delete pods -l mpi_role_type=launcher --wait=true >/dev/null || ks_fail "delete the launcher pods"
[ -z "$(kc get pods -o name)" ] || ks_fail "pods left: $(kc get pods)"
kc get cm fexit-log -o jsonpath='{.data.log}' >"$KS_DIR/fexit.log" || ks_fail "kubectl get cm fexit-log"
for t in "rank 0 up on fexit-worker-0" "rank 3 up on fexit-worker-3" "Exit code:    3"; do
  grep -qF -- "$t" "$KS_DIR/fexit.log" || { cat "$KS_DIR/fexit.log"; ks_fail "fexit-log lacks '$t'"; }
done
[ "$(kc get cm fexit-log -o jsonpath='{.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name}/{.metadata.ownerReferences[0].controller}')" = MPIJob/fexit/true ] \
  || ks_fail "fexit-log owner: $(kc get cm fexit-log -o jsonpath='{.metadata.ownerReferences}')"
ks_run "$BINDIR/mpi-agent" logs --kubeconfig "$KS_DIR/kubeconfig" -n default fsegv >"$KS_DIR/fsegv.log" 2>"$KS_DIR/fsegv.err" \
  || ks_fail "mpi-agent logs fsegv: $(cat "$KS_DIR/fsegv.err")"
grep -qF "exited on signal 11 (Segmentation fault)" "$KS_DIR/fsegv.log" || { cat "$KS_DIR/fsegv.log"; ks_fail "mpi-agent logs: no mpirun report"; }
# --tag-output's rank tags kept as printed: one rank's lines by grep
grep -qx '\[1,2\]<stdout>:rank 2 up on fsegv-worker-2' "$KS_DIR/fsegv.log" || { cat "$KS_DIR/fsegv.log"; ks_fail "rank 2's tagged line"; }
ks_run "$BINDIR/mpi-agent" logs --kubeconfig "$KS_DIR/kubeconfig" -n default nosuch >/dev/null 2>&1 && ks_fail "logs of a job without one: exit 0"
# mpi-agent logs -f follows a running launcher to its end
mk flog OpenMPI '[sh, -c, "for i in 1 2 3 4 5 6; do echo follow-line-$i; sleep 1; done"]'
ks_wait_for "kc get pods -l mpi_job_name=flog,mpi_role_type=launcher -o jsonpath='{.items[0].status.phase}' | grep -q Running" 120 ||
  ks_fail "flog launcher not Running: $(kc get pods -o wide)"
timeout 90 "$KUBESIM" run --dir "$KS_DIR" -- "$BINDIR/mpi-agent" logs -f --kubeconfig "$KS_DIR/kubeconfig" -n default flog \
  >"$KS_DIR/flog.out" 2>"$KS_DIR/flog.err" || ks_fail "mpi-agent logs -f flog: $(cat "$KS_DIR/flog.err")"
for i in 1 2 3 4 5 6; do
  grep -qx "follow-line-$i" "$KS_DIR/flog.out" || { cat "$KS_DIR/flog.out"; ks_fail "logs -f lacks follow-line-$i"; }
done
[ "$(grep -c '^follow-line-' "$KS_DIR/flog.out")" = 6 ] || ks_fail "logs -f printed lines twice: $(cat "$KS_DIR/flog.out")"
wait_cond flog Succeeded True 60
[ "$(kc get cm flog-log -o jsonpath='{.data.log}' | grep -c '^follow-line-')" = 6 ] || ks_fail "flog-log: $(kc get cm flog-log -o yaml)"

# the log goes with its MPIJob
kc delete mpijob fexit --wait=true >/dev/null || ks_fail "delete fexit"
ks_wait_for '! kc get cm fexit-log >/dev/null 2>&1' 60 || ks_fail "fexit-log outlived its MPIJob"
echo "PASS: attribution (${jobs[*]}), RankFailed Events, failure metric, logs after the pods"
