#!/usr/bin/env bash
# 22: the hostile API server matrix (tests/e2e/hostile/run.sh): 12 kinds of hostile
# replies x 3 clients (mpi-agent status, mpi-rsh, mpi-operator); clean errors, bounded
# time and memory. Its table goes to $E2E_OUT/hostile.md (quoted in docs/reliability.md).
# timeout: 900
set -u
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
out=${E2E_OUT:-/tmp}
"$ROOT/tests/e2e/hostile/run.sh" >"$out/hostile.md" 2>&1
rc=$?
cat "$out/hostile.md"
n=$(grep -c '^| [a-z-]* | [a-z]* |' "$out/hostile.md")
bad=$(grep '^| [a-z-]* | [a-z]* |' "$out/hostile.md" | awk -F'|' '$7 !~ /^ ok $/ { printf "%s/%s: %s; ", $2, $3, $7 }' | tr -s ' ')
[ $rc -eq 77 ] && { echo "E2E-RESULT: SKIP $(tail -n1 "$out/hostile.md")"; exit 77; }
if [ $rc -eq 0 ]; then echo "E2E-RESULT: PASS $n client x mode checks clean"; else echo "E2E-RESULT: FAIL $bad"; fi
exit $rc
