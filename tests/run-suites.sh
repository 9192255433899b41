#!/usr/bin/env bash
# tests/run-suites.sh: the suites of `make test` after the build, in three steps:
#   1. unit, then fuzz-smoke (each on every core);
#   2. the kubesim integration suite and the real-cluster suite side by side: both mostly wait
#      (grace periods, backoffs, the API server learning a CRD; process accounting over a whole
#      kubesim suite: its tests used about a quarter of the 2 cores), so each fills the other's
#      idle time (docs/k8s.md has the measurements). The real cluster's components and images
#      are built beside the first suites (tests/k8s/prebuild.sh) and waited for before its
#      suite starts;
#   3. the real-cluster suite's exclusive tests ("# needs: exclusive": their bounds are the
#      cluster's timing), once nothing else runs.
# Every suite runs even when an earlier one failed (one kubesim failure must not hide the real
# cluster's result); it exits 1 if any failed, naming them. The kubesim suite's output is kept
# in build/test-logs/integration.out and printed when it ends; the real cluster's is printed as
# it runs. It ends with each suite's wall time and the 10 slowest tests (tests/report.sh).
# Side by side: JOBS kubesim tests (default 3) and K8S_JOBS clusters (default 2) at once; then
# K8S_JOBS_ALONE clusters (default 3) once the kubesim suite ended.
set -u
cd "$(dirname "$0")/.."
logs=build/test-logs
mkdir -p "$logs"
: >"$logs/suites.tsv"
failed=
t0=$SECONDS

suite() {  # NAME MAKE-ARGS...: runs make and records its wall time and result
  local s=$SECONDS r=ok n=$1; shift
  make --no-print-directory -j"${NPROC:-$(nproc)}" "$@" || r=failed
  printf '%s\t%s\t%s\n' $((SECONDS - s)) "$n" "$r" >>"$logs/suites.tsv"
  [ $r = ok ]
}

pre=$(tests/k8s/prebuild.sh start)
ipid= kpid=
# shellcheck disable=SC2317
cleanup() {
  local p
  for p in $ipid $kpid; do kill -TERM -- "-$p" 2>/dev/null; done  # a suite's session: make, the runner, its tests
  tests/k8s/prebuild.sh stop "$pre" >/dev/null
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

for t in unit fuzz-smoke; do suite "$t" "$t" || failed="$failed $t"; done
# what both suites run, made once: two makes side by side would each stage the install tree
# (build/stage, the rsh bundle) over the other's; the suites below are told it is made (-o)
suite stage all stage test-progs || { echo "make test: failed: stage (the install tree the suites run)"; exit 1; }
made=(-o all -o stage -o test-progs)

# Each suite in a session of its own, so that an interrupted make test ends it and its tests.
# The real-cluster suite runs K8S_JOBS clusters at once beside the kubesim suite, then
# K8S_JOBS_ALONE once that one ended (run-integration.sh's JOBS_FILE).
export JOBS=${JOBS:-3}
jobs_file=$logs/k8s-jobs
echo "${K8S_JOBS:-2}" >"$jobs_file"
setsid bash -c "$(declare -f suite); logs=$logs; suite integration ${made[*]} integration" >"$logs/integration.out" 2>&1 </dev/null &
ipid=$!
echo "make test: the kubesim suite runs beside the real-cluster suite (its output: $logs/integration.out)"
setsid bash -c "$(declare -f suite); logs=$logs; s=\$SECONDS
  tests/k8s/prebuild.sh wait '$pre' || true
  printf '%s\t%s\t%s\n' \$((SECONDS - s)) prebuild-wait '(the components and images, built beside the suites)' >>$logs/suites.tsv
  EXCLUSIVE=skip JOBS_FILE=$jobs_file suite test-k8s ${made[*]} test-k8s" </dev/null &
kpid=$!
wait -n -p first "$ipid" "$kpid"; rc=$?
if [ "$first" = "$ipid" ]; then
  echo "${K8S_JOBS_ALONE:-3}" >"$jobs_file"
  echo "make test: the kubesim suite ended; the real-cluster suite goes on with ${K8S_JOBS_ALONE:-3} clusters at once"
  [ $rc = 0 ] || failed="$failed integration"
  wait "$kpid" || failed="$failed test-k8s"
else
  [ $rc = 0 ] || failed="$failed test-k8s"
  wait "$ipid" || failed="$failed integration"
fi
ipid= kpid=
echo "---- the kubesim integration suite ($logs/integration.out)"
cat "$logs/integration.out"

# alone: the other Kubernetes versions' niced build (prebuild.sh) stops here too
tests/k8s/prebuild.sh stop "$pre"
EXCLUSIVE=only suite test-k8s-exclusive "${made[@]}" test-k8s || failed="$failed test-k8s-exclusive"

printf '%s\t%s\t%s\n' $((SECONDS - t0)) "(all)" "wall time from unit to the end (the kubesim and real-cluster suites side by side)" >>"$logs/suites.tsv"
tests/report.sh
if [ -n "$failed" ]; then
  cat "$logs/failed.txt" "$logs/k8s/failed.txt" 2>/dev/null
  echo "make test: failed:$failed"
  exit 1
fi
