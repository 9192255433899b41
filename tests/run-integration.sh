#!/usr/bin/env bash
# Runs every tests/integration/*.sh, each in its own process group under a
# hard timeout, and prints one PASS/FAIL/SKIP line per test plus a summary.
# A test exits 0 (pass), 77 (skip, with a reason on its last output line) or
# anything else (fail). A test may set its own bound with a line
# "# timeout: SECONDS" (default 300). ONLY=pattern runs a subset. TESTS="FILE..." runs
# those files instead of tests/integration/*.sh, and SUITE names them in the summary
# (tests/k8s/run.sh: the real cluster's suite).
set -u
cd "$(dirname "$0")/.."
export ROOT=$PWD
export BINDIR=${BINDIR:-$PWD/bin}
logdir=$PWD/build/test-logs${SUITE:+/$SUITE}
mkdir -p "$logdir"
pass=0 fail=0 skip=0 failed=()
suite=${SUITE:-integration}
# failed.txt: one line per failed test with its reason (the log's last "FAIL:" line), which
# `make test` prints again as its very last lines (a CI report may keep only the ends)
: >"$logdir/failed.txt"
for t in ${TESTS:-tests/integration/*.sh}; do
  [ -e "$t" ] || continue
  name=$(basename "$t" .sh)
  if [ -n "${ONLY:-}" ] && [[ "$name" != *${ONLY}* ]]; then continue; fi
  limit=$(sed -n 's/^# timeout: *\([0-9]\+\).*/\1/p' "$t" | head -1)
  limit=${limit:-300}
  start=$(date +%s%N)
  setsid timeout -k 10 "$limit" bash "$t" >"$logdir/$name.log" 2>&1
  rc=$?
  ms=$(( ($(date +%s%N) - start) / 1000000 )); secs=$((ms/1000)).$(( (ms%1000)/100 ))
  case $rc in
    0)  echo "PASS $name (${secs}s)"; pass=$((pass+1)) ;;
    77) echo "SKIP $name: $(tail -n1 "$logdir/$name.log")"; skip=$((skip+1)) ;;
    124|137) echo "FAIL $name: timed out after ${limit}s"; fail=$((fail+1)); failed+=("$name") ;;
    *)  echo "FAIL $name (rc $rc, ${secs}s)"; fail=$((fail+1)); failed+=("$name") ;;
  esac
done
for n in "${failed[@]}"; do
  echo "---- last lines of $n.log"; tail -n 60 "$logdir/$n.log"
  why=$(grep -a '^FAIL:' "$logdir/$n.log" | tail -n 1 | cut -c 1-400)
  echo "$suite $n: ${why:-no FAIL: line (timed out or crashed; see $logdir/$n.log)}" >>"$logdir/failed.txt"
done
echo "$suite: $pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
