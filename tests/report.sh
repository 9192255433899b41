#!/usr/bin/env bash
# tests/report.sh: the cost of the last `make test`, printed at its end: the wall time of each
# suite (build/test-logs/suites.tsv, written by make test) and the 10 slowest tests of the
# integration suites (their times.tsv, written by tests/run-integration.sh).
set -u
cd "$(dirname "$0")/.."
logs=build/test-logs
echo "---- make test: wall time of each suite"
if [ -f "$logs/suites.tsv" ]; then
  awk -F'\t' '{ printf "  %-18s %6d s  %s\n", $2, $1, $3 }' "$logs/suites.tsv"
fi
echo "---- the 10 slowest tests"
for f in "$logs/times.tsv" "$logs/k8s/times.tsv"; do
  [ -f "$f" ] || continue
  s=integration; [ "$f" = "$logs/times.tsv" ] || s=k8s
  awk -F'\t' -v s="$s" '{ printf "%s\t%s\t%s\t%s\n", $1, s, $3, $2 }' "$f"
done | sort -t $'\t' -k1,1nr | head -n 10 | awk -F'\t' '{ printf "  %7.1f s  %-11s %s (%s)\n", $1, $2, $3, $4 }'
