#!/usr/bin/env bash
# tests/e2e/soak.sh - the long soak on the real cluster (issue #26 item 3; not for CI): for
# SOAK_S seconds (default 7200) it runs rounds of mixed MPIJobs on tests/k8s/k8s --nodes 2,
# three at once per round: one that succeeds (mpi-pi over 2 workers), one whose rank 1 exits 3
# (it must end Failed with that code), and one deleted while it runs. It samples the RSS of
# the operator, kube-apiserver and etcd every SOAK_SAMPLE_S seconds (default 10) and, after
# each round, counts what the namespace holds once the round's jobs are deleted. At the end:
#   - every job ended as it should (a wrong or missing final state is a failure);
#   - nothing is left: no pod, Job, Service, ConfigMap but kube-root-ca.crt, Secret, Role,
#     RoleBinding or ServiceAccount but default of ours; no MPI process in the cluster's
#     cgroup once every job is deleted;
#   - no unbounded growth: the operator's median RSS in the last SOAK_WINDOW_S seconds
#     (default 1200) exceeds the median of the window after SOAK_WARM_S (default 600) by at
#     most 25% + 4 MiB. The API server's and etcd's are reported, not judged (their caches
#     and the events' TTL of 1 h move them; see docs/reliability.md).
# Output: a table on stdout, the samples in $SOAK_OUT (default build/soak)/mem.csv, the rounds
# in rounds.csv, and the operator's log; on the real cluster without valgrind also
# bench/results/soak.tsv (bench/results_lib.bash; bench/plot.sh draws docs/img/soak.png). Usage: tests/e2e/soak.sh (root, Docker images built).
# Bounded: it runs itself under timeout(1), SOAK_S + 900 s.
# The leak question: SOAK_VALGRIND=1 runs the operator under valgrind memcheck (lease timings
# 60/40/5 s, as it runs some 30 times slower); at the end it is stopped with SIGTERM and the
# soak fails on any memcheck error or any definitely or indirectly lost byte (its report:
# $SOAK_OUT/operator.log). KUBE_BACKEND=kubesim runs the same rounds on kubesim (no API server
# or etcd RSS there: 0; no cgroup check for MPI processes).
set -u
[ -n "${SOAK_BOUNDED:-}" ] || exec env SOAK_BOUNDED=1 timeout -k 30 $(( ${SOAK_S:-7200} + 900 )) "$0" "$@"
export E2E_CASE=soak KUBE_BACKEND=${KUBE_BACKEND:-k8s}
. "$(dirname "$0")/lib.sh"
SOAK_S=${SOAK_S:-7200}
SAMPLE_S=${SOAK_SAMPLE_S:-10}
WARM_S=${SOAK_WARM_S:-600}
WINDOW_S=${SOAK_WINDOW_S:-1200}
OUT=${SOAK_OUT:-$ROOT/build/soak}
mkdir -p "$OUT" || exit 1
: >"$OUT/rounds.csv"

if [ "${SOAK_VALGRIND:-0}" = 1 ]; then
  export E2E_OP_WRAP="valgrind --leak-check=full --show-leak-kinds=definite,indirect --errors-for-leak-kinds=definite,indirect --num-callers=40"
  export E2E_LEASE="60 40 5"
fi

e2e_begin
e2e_up --nodes 2
e2e_op_start a --threadiness 2
e2e_wait_for "grep -q 'acquired the leader lease' '$E2E_DIR/op-a.log'" 60 || e2e_log "no leader line yet (continuing)"

# pid_of COMPONENT: the real cluster's daemon (tests/k8s/k8s keeps DIR/pids/NAME.pid)
pid_of() { cat "$KS/pids/$1.pid" 2>/dev/null; }
rss_kb() { [ -n "$1" ] && awk '/^VmRSS/ { print $2 }' "/proc/$1/status" 2>/dev/null || echo 0; }
op_pid=$(e2e_op_pid a) api_pid=$(pid_of apiserver) etcd_pid=$(pid_of etcd)
if [ "$KUBE_BACKEND" = k8s ] && { [ -z "$api_pid" ] || [ -z "$etcd_pid" ]; }; then
  e2e_fail "no apiserver/etcd pid in $KS/pids"
fi
t_start=$(date +%s)
echo "t_s,operator_kb,apiserver_kb,etcd_kb,pods,mpijobs" >"$OUT/mem.csv"
(
  while :; do
    printf '%s,%s,%s,%s,%s,%s\n' $(( $(date +%s) - t_start )) "$(rss_kb "$op_pid")" "$(rss_kb "$api_pid")" \
      "$(rss_kb "$etcd_pid")" "$(kc get pods --no-headers 2>/dev/null | wc -l)" \
      "$(kc get mpijobs --no-headers 2>/dev/null | wc -l)" >>"$OUT/mem.csv"
    sleep "$SAMPLE_S"
  done
) &
E2E_PIDS+=("$!")

pi=mpi-pi  # e2e_job's rule: kubesim's pods run the stage's mpi-pi; a real cluster's, mpik8s/mpi-pi's
[ "$KUBE_BACKEND" != k8s ] || pi=/home/mpiuser/pi
# round R: the three jobs, created together
round_yaml() {
  local r=$1
  PROG="[timeout, \"120\", mpirun, -np, \"2\", --bind-to, none, $pi, \"200000\"]" e2e_job "s$r"
  echo ---
  PROG="[timeout, \"120\", mpirun, -np, \"2\", --bind-to, none, sh, -c, 'echo rank \$OMPI_COMM_WORLD_RANK up; sleep 1; [ \$OMPI_COMM_WORLD_RANK != 1 ] || exit 3; sleep 5']" \
    BACKOFF=0 e2e_job "f$r"
  echo ---
  PROG="[timeout, \"300\", mpirun, -np, \"2\", --bind-to, none, sleep, \"300\"]" e2e_job "d$r"
}
# final JOB: Succeeded, Failed or empty
final_of() {
  kc get mpijob "$1" -o jsonpath='{range .status.conditions[?(@.status=="True")]}{.type}{"\n"}{end}' 2>/dev/null |
    grep -xE 'Succeeded|Failed' | head -n1
}
# ours: what of the jobs' objects the namespace holds (besides what it holds when empty)
ours() {
  { kc get pods,jobs,role,rolebinding -o name 2>/dev/null
    kc get svc -o name 2>/dev/null | grep -vx 'service/kubernetes'
    kc get cm -o name 2>/dev/null | grep -vx 'configmap/kube-root-ca.crt'
    kc get secrets -o name 2>/dev/null
    kc get sa -o name 2>/dev/null | grep -vx 'serviceaccount/default'
    kc get mpijobs -o name 2>/dev/null; } | sort
}
# mpi_procs: MPI and launch processes still in the cluster's cgroups (its pods' containers)
mpi_procs() {
  local id; id=$(printf '%s' "$KS" | sha1sum | cut -c1-8)
  for c in /sys/fs/cgroup/*/ /sys/fs/cgroup/; do
    [ -d "$c/k8s-$id" ] || continue
    find "$c/k8s-$id" -name cgroup.procs -exec cat {} + 2>/dev/null
  done | sort -u | while read -r p; do
    n=$(cat "/proc/$p/comm" 2>/dev/null) || continue
    case $n in mpirun|orterun|orted|mpi-rsh*|mpi-agent|pi|sleep|hydra_pmi_proxy|mpiexec*) echo "$p:$n";; esac
  done
}

r=0 bad=0 jobs=0
end=$(( t_start + SOAK_S ))
while [ "$(date +%s)" -lt "$end" ]; do
  r=$((r + 1)); t0=$(e2e_now_ms)
  round_yaml "$r" >"$E2E_DIR/round.yaml"
  kc create -f "$E2E_DIR/round.yaml" >/dev/null || { e2e_log "round $r: create failed"; bad=$((bad + 1)); sleep 5; continue; }
  jobs=$((jobs + 3))
  # d: deleted once its launcher runs mpirun (its ranks are up)
  e2e_wait_for "launcher_log d$r | grep -q 'rank 1 -> pod'" 180 || e2e_log "round $r: d$r never launched"
  sleep 2
  kc delete mpijob "d$r" --wait=false >/dev/null || e2e_log "round $r: delete d$r failed"
  fs= ff= msg=
  e2e_wait_for "[ -n \"\$(final_of s$r)\" ] && [ -n \"\$(final_of f$r)\" ]" 300 || true
  fs=$(final_of "s$r"); ff=$(final_of "f$r"); msg=$(cond "f$r" Failed message)
  ok=1
  [ "$fs" = Succeeded ] || { e2e_log "round $r: s$r ended '$fs'"; ok=0; }
  case "$ff/$msg" in Failed/*"exited with code 3"*) ;;
    *) e2e_log "round $r: f$r ended '$ff': $msg"; ok=0 ;; esac
  t_final=$(e2e_now_ms)
  kc delete mpijob "s$r" "f$r" --wait=false >/dev/null || e2e_log "round $r: delete failed"
  e2e_wait_for "[ -z \"\$(ours)\" ]" 180 || { e2e_log "round $r: left after delete: $(ours | tr '\n' ' ')"; ok=0; }
  [ $ok = 1 ] || bad=$((bad + 1))
  printf '%s,%s,%s,%s,%s\n' "$r" $(( (t_final - t0) / 1000 )) $(( ($(e2e_now_ms) - t0) / 1000 )) "$ok" \
    "$(( $(date +%s) - t_start ))" >>"$OUT/rounds.csv"
  [ $((r % 10)) != 0 ] || e2e_log "round $r: $bad bad so far; $(tail -n1 "$OUT/mem.csv")"
done

e2e_wait_for "[ -z \"\$(mpi_procs)\" ]" 60 || e2e_fail "MPI processes left in the cluster: $(mpi_procs | tr '\n' ' ')"
if [ "${SOAK_VALGRIND:-0}" = 1 ]; then
  # memcheck's leak report comes when the operator exits: SIGTERM, and time for the report
  kill -TERM "$op_pid" 2>/dev/null
  e2e_wait_for "! kill -0 $op_pid 2>/dev/null" 300 || e2e_log "valgrind: the operator still runs 300 s after SIGTERM"
  vg=$(grep -E 'ERROR SUMMARY|definitely lost|indirectly lost|no leaks are possible' "$E2E_DIR/op-a.log" | sed 's/^==[0-9]*== *//')
fi
cp "$E2E_DIR/op-a.log" "$OUT/operator.log" 2>/dev/null || true
summary=$(python3 - "$OUT/mem.csv" "$WARM_S" "$WINDOW_S" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
warm, win = int(sys.argv[2]), int(sys.argv[3])
last_t = int(rows[-1]["t_s"])
out, verdict = [], "ok"
for k in ("operator_kb", "apiserver_kb", "etcd_kb"):
    a = [int(r[k]) for r in rows if warm <= int(r["t_s"]) < warm + win and int(r[k]) > 0]
    b = [int(r[k]) for r in rows if int(r["t_s"]) >= last_t - win and int(r[k]) > 0]
    peak = max(int(r[k]) for r in rows)
    if peak == 0 and k != "operator_kb":
        out.append("%s: not sampled (kubesim)" % k[:-3]); continue
    if not a or not b:
        out.append("%s: too few samples" % k); verdict = "short"; continue
    ma, mb = statistics.median(a), statistics.median(b)
    out.append("%s: median %.1f MiB (after warm-up) -> %.1f MiB (last window), peak %.1f MiB" %
               (k[:-3], ma / 1024, mb / 1024, peak / 1024))
    if k == "operator_kb" and mb > ma * 1.25 + 4096:
        verdict = "operator grew"
print(verdict + "; " + "; ".join(out))
PY
)
e2e_note "rounds=$r jobs=$jobs bad_rounds=$bad duration=$(( $(date +%s) - t_start ))s memory: $summary"
# the real cluster's soak (not kubesim's, not valgrind's) also feeds bench/plot.sh's
# docs/img/soak.png: the same 20-minute buckets as docs/reliability.md's table, as TSV
if [ "$KUBE_BACKEND" = k8s ] && [ "${SOAK_VALGRIND:-0}" != 1 ]; then
  . "$ROOT/bench/results_lib.bash"
  bench_tsv_begin soak "tests/e2e/soak.sh: median RSS per 20 minutes of the operator, kube-apiserver and etcd ($r rounds, $jobs jobs, $bad bad rounds; tests/e2e/data/soak_table.py --tsv $OUT 1200)" \
    "SOAK_S=$SOAK_S tests/e2e/soak.sh" && [ -n "$BENCH_TSV_TMP" ] &&
    python3 "$ROOT/tests/e2e/data/soak_table.py" --tsv "$OUT" 1200 >>"$BENCH_TSV_TMP" && bench_tsv_end
fi
if [ "${SOAK_VALGRIND:-0}" = 1 ]; then
  e2e_note "valgrind: $(echo "$vg" | tr '\n' ';')"
  echo "$vg" | grep -q 'ERROR SUMMARY: 0 errors' || e2e_fail "valgrind: memcheck errors or no report ($OUT/operator.log)"
  ! echo "$vg" | grep -qE '(definitely|indirectly) lost: [1-9]' || e2e_fail "valgrind: lost blocks ($OUT/operator.log)"
fi
echo "SOAK: ${E2E_DETAIL[*]}"
[ "$bad" = 0 ] || e2e_fail "$bad of $r rounds went wrong (rounds.csv, the log above)"
case $summary in ok*) ;; *) e2e_fail "memory: $summary" ;; esac
e2e_pass
