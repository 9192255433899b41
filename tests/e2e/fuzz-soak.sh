#!/usr/bin/env bash
# tests/e2e/fuzz-soak.sh - the long fuzzing soak (not for CI): builds every libFuzzer
# target (make build/fuzz/fuzz_*), then runs each for SOAK_SECONDS (default 600) on its
# working corpus build/fuzz/corpus/NAME plus the checked-in seeds, one at a time, and prints
# a table: target, seconds, executions, exec/s, corpus size, crashes. A crash leaves its
# input in build/fuzz/soak/NAME/ (add it to tests/fuzz/corpus/NAME/ once fixed).
# Refuses to start when the machine is busy (1-min load > CPUs) unless FORCE=1, because
# the other helpers' tests share the cores. One input may take SOAK_INPUT_TIMEOUT seconds
# (default 60: thousands of times the slowest seed, so it still finds a hang, but a soak
# sharing the machine at a low priority is not failed by starvation, as a 10 s bound was at
# load 20). Usage: tests/e2e/fuzz-soak.sh [TARGET...]
set -u
cd "$(dirname "$0")/../.."
secs=${SOAK_SECONDS:-600}
ncpu=$(nproc)
load=$(cut -d' ' -f1 /proc/loadavg)
if [ -z "${FORCE:-}" ] && awk -v l="$load" -v n="$ncpu" 'BEGIN { exit !(l > n) }'; then
  echo "fuzz-soak: load $load > $ncpu CPUs; not soaking now (FORCE=1 to override)"
  exit 77
fi
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for s in tests/fuzz/fuzz_*.c; do targets+=("$(basename "$s" .c)"); done
fi
for t in "${targets[@]}"; do
  make -s "build/fuzz/$t" >/dev/null || { echo "fuzz-soak: cannot build $t"; exit 1; }
done
fails=0
printf '| target | seconds | executions | exec/s | corpus files | result |\n|---|---|---|---|---|---|\n'
for t in "${targets[@]}"; do
  mkdir -p "build/fuzz/corpus/$t" "build/fuzz/soak/$t"
  seeds=tests/fuzz/corpus/$t; [ -d "$seeds" ] || seeds=
  log=build/fuzz/soak/$t.log
  start=$(date +%s)
  timeout -k 10 $((secs + 120)) "build/fuzz/$t" -max_total_time="$secs" -print_final_stats=1 \
    -rss_limit_mb=1024 -timeout="${SOAK_INPUT_TIMEOUT:-60}" -artifact_prefix="build/fuzz/soak/$t/" \
    "build/fuzz/corpus/$t" $seeds >"$log" 2>&1
  rc=$?
  el=$(( $(date +%s) - start ))
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  eps=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  files=$(find "build/fuzz/corpus/$t" -type f | wc -l)
  res=ok
  [ $rc -eq 0 ] || { res="FAIL rc $rc: $(grep -m1 -E 'ERROR|SUMMARY' "$log" | cut -c1-120)"; fails=$((fails + 1)); }
  printf '| %s | %s | %s | %s | %s | %s |\n' "$t" "$el" "${execs:-?}" "${eps:-?}" "$files" "$res"
done
[ $fails -eq 0 ]
