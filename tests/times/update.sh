#!/usr/bin/env bash
# tests/times/update.sh: refreshes the committed test-time baselines (tests/times/SUITE.tsv) from
# the last full run's build/test-logs[/SUITE]/times.tsv, keeping the tests that passed. The
# runner (tests/run-integration.sh) orders a suite longest first by the last run's times, else
# by these, so a clean clone (CI) starts its longest tests first too. Run it after `make test`.
set -euo pipefail
cd "$(dirname "$0")/../.."
for s in integration k8s; do
  src=build/test-logs/times.tsv
  [ "$s" = integration ] || src=build/test-logs/$s/times.tsv
  [ -f "$src" ] || { echo "times/update: $src: not found (run make test first)" >&2; exit 1; }
  awk -F'\t' '$2 == "pass"' "$src" | sort -t $'\t' -k3,3 >"tests/times/$s.tsv"
  echo "tests/times/$s.tsv: $(wc -l <"tests/times/$s.tsv") tests"
done
