#!/usr/bin/env bash
# tests/run-integration.sh: runs a suite of test scripts, several at a time, each in its own
# process group under a hard timeout, and prints one PASS/FAIL/SKIP line per test (in the
# order they end) plus a summary.
#
# A test exits 0 (pass), 77 (skip, with a reason on its last output line) or anything else
# (fail). Its header may declare:
#   # timeout: SECONDS    its bound (default 300)
#   # needs: exclusive    load-sensitive: it runs with nothing else beside it
# A passing test's "NOTE: " lines (what it left out, say) are printed under its PASS line.
# Everything else shares the machine: at most JOBS tests at once (default 1, the old serial
# run). The longest tests start first (their time in the last run's times.tsv, else in the
# committed baseline tests/times/SUITE.tsv, else their timeout), so the suite's wall time is
# close to its longest test or its total / JOBS. A clean clone (CI) has no times.tsv: the
# baseline orders it by measurement (refresh it with tests/times/update.sh after a full run).
#
# JOBS_FILE=PATH: a file whose number, when there is one, replaces JOBS from the next test on
# (tests/run-suites.sh raises the real-cluster suite's once the kubesim suite beside it ended).
# EXCLUSIVE=skip leaves the exclusive tests out, EXCLUSIVE=only runs only them (tests/run-suites.sh:
# the real-cluster suite beside the kubesim suite, then its exclusive tests once both ended).
# ONLY=pattern runs a subset. TESTS="FILE..." runs those files instead of
# tests/integration/*.sh, and SUITE names them in the summary (tests/k8s/run.sh: the real
# cluster's suite). Logs: build/test-logs[/SUITE]/NAME.log; times.tsv (seconds, result,
# name; make test's report reads it); failed.txt (one line per failed test with its reason).
set -u
cd "$(dirname "$0")/.."
export ROOT=$PWD
export BINDIR=${BINDIR:-$PWD/bin}
logdir=$PWD/build/test-logs${SUITE:+/$SUITE}
mkdir -p "$logdir"
suite=${SUITE:-integration}
jobs=${JOBS:-1}
[[ "$jobs" =~ ^[1-9][0-9]*$ ]] || { echo "JOBS=$jobs: expected a whole number of at least 1" >&2; exit 2; }
excl=${EXCLUSIVE:-}
case $excl in ''|skip|only) ;; *) echo "EXCLUSIVE=$excl: expected skip or only" >&2; exit 2 ;; esac

header() {  # FILE KEY -> the value of its "# KEY: VALUE" line
  sed -n "s/^# $2: *\([^ ]*\).*/\1/p" "$1" | head -1
}

# The queue: "estimate<TAB>file", longest first; exclusive tests first of all, alone.
last=$logdir/times.tsv
base=tests/times/$suite.tsv
queue=()
while IFS=$'\t' read -r _ f; do queue+=("$f"); done < <(
  for t in ${TESTS:-tests/integration/*.sh}; do
    [ -e "$t" ] || continue
    name=$(basename "$t" .sh)
    if [ -n "${ONLY:-}" ] && [[ "$name" != *${ONLY}* ]]; then continue; fi
    x=; [ "$(header "$t" needs)" != exclusive ] || x=1
    case $excl:$x in skip:1|only:) continue ;; esac
    est=
    for f in "$last" "$base"; do
      [ -z "$est" ] && [ -f "$f" ] && est=$(awk -F'\t' -v n="$name" '$3 == n { print int($1) }' "$f" | tail -n 1)
    done
    [ -n "$est" ] || est=$(header "$t" timeout)
    [ -z "$x" ] || est=$((1000000 + ${est:-300}))
    printf '%s\t%s\n' "${est:-300}" "$t"
  done | sort -t $'\t' -k1,1nr)

pass=0 fail=0 skip=0 failed=()
# the exclusive tests' run adds to the failures of the run before it (tests/run-suites.sh)
[ "$excl" = only ] || : >"$logdir/failed.txt"
times=$logdir/times.tsv.new
: >"$times"
declare -A name_of start_of limit_of
used=0   # slots held by running tests (an exclusive one holds all of them)
declare -A slots_of

jobs_now() {  # JOBS from JOBS_FILE, where it holds a whole number
  local j
  [ -n "${JOBS_FILE:-}" ] && read -r j <"$JOBS_FILE" 2>/dev/null && [[ $j =~ ^[1-9][0-9]*$ ]] && jobs=$j
  return 0
}

launch() {  # FILE
  local t=$1 name limit
  name=$(basename "$t" .sh)
  limit=$(header "$t" timeout)
  limit=${limit:-300}
  # TERM at the limit (or from stop_all), KILL 150 s later: the time a test's EXIT trap needs
  # to take its cluster down (bounded at 120 s there); a KILL 10 s after the TERM cut `k8s
  # down` short and left a real cluster running beside the rest of the suite
  setsid timeout -k 150 "$limit" bash "$t" >"$logdir/$name.log" 2>&1 </dev/null &
  name_of[$!]=$name start_of[$!]=$(date +%s%N) limit_of[$!]=$limit
  slots_of[$!]=1
  [ "$(header "$t" needs)" != exclusive ] || slots_of[$!]=$jobs
  used=$((used + slots_of[$!]))
}

reap() {  # waits for one test to end and reports it
  local pid rc name ms secs
  wait -n -p pid
  rc=$?
  name=${name_of[$pid]}
  ms=$(( ($(date +%s%N) - start_of[$pid]) / 1000000 )); secs=$((ms / 1000)).$(( (ms % 1000) / 100 ))
  used=$((used - slots_of[$pid]))
  unset "name_of[$pid]" "start_of[$pid]" "slots_of[$pid]"
  case $rc in
    0)  echo "PASS $name (${secs}s)"; grep -a '^NOTE: ' "$logdir/$name.log" | sed 's/^/  /'
        pass=$((pass + 1)); res=pass ;;
    77) echo "SKIP $name: $(tail -n1 "$logdir/$name.log")"; skip=$((skip + 1)); res=skip ;;
    124|137) echo "FAIL $name: timed out after ${limit_of[$pid]}s"; fail=$((fail + 1)); failed+=("$name"); res=fail ;;
    *)  echo "FAIL $name (rc $rc, ${secs}s)"; fail=$((fail + 1)); failed+=("$name"); res=fail ;;
  esac
  unset "limit_of[$pid]"
  printf '%s\t%s\t%s\n' "$secs" "$res" "$name" >>"$times"
}

# An interrupted suite ends its running tests (each is its own process group), whose own
# traps then tear their clusters down.
stop_all() {
  local p
  for p in "${!name_of[@]}"; do kill -TERM -- "-$p" 2>/dev/null; done
  wait
  exit 130
}
trap stop_all INT TERM

t0=$SECONDS
for t in "${queue[@]}"; do
  x=; [ "$(header "$t" needs)" != exclusive ] || x=1
  while jobs_now; want=${x:+$jobs}; [ $((used + ${want:-1})) -gt "$jobs" ]; do reap; done
  launch "$t"
done
while [ "$used" -gt 0 ]; do reap; done

# the last time of every test ever run here (ONLY= runs keep the others')
# (FILENAME, not NR == FNR: the new times are empty when no test ran, EXCLUSIVE=only say)
{ cat "$times"; [ ! -f "$last" ] || awk -F'\t' 'FILENAME == ARGV[1] { seen[$3] = 1; next } !seen[$3]' "$times" "$last"; } >"$times.all"
mv "$times.all" "$last"; rm -f "$times"
for n in "${failed[@]}"; do
  echo "---- last lines of $n.log"; tail -n 60 "$logdir/$n.log"
  why=$(grep -a '^FAIL:' "$logdir/$n.log" | tail -n 1 | cut -c 1-400)
  echo "$suite $n: ${why:-no FAIL: line (timed out or crashed; see $logdir/$n.log)}" >>"$logdir/failed.txt"
done
echo "$suite${excl:+ (exclusive tests: $excl)}: $pass passed, $fail failed, $skip skipped in $((SECONDS - t0)) s (JOBS=$jobs)"
[ "$fail" -eq 0 ]
