#!/usr/bin/env bash
# timeout: 200
# The bounded `make test` subset of the hostile-API-server matrix (tests/e2e/hostile/,
# full run: tests/e2e/hostile/run.sh): mpi-agent status and mpi-rsh against a server that
# truncates JSON, sends wrong types, a 256 MiB body, drips one byte per 0.5 s, sends
# garbage or closes every connection - each must fail cleanly (non-zero, bounded time,
# bounded RSS, a short error without raw control characters). The operator (12 s per mode)
# gets the two memory modes here (256 MiB body, 8 MiB Status: peak RSS <= 96 MiB, exits on
# SIGTERM); all 12 modes run in the full matrix (case 22).
set -u
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
rc=0
CLIENTS="agent rsh" BOUND=50 "$ROOT/tests/e2e/hostile/run.sh" truncated wrong-types enormous slow-drip garbage close || rc=$?
[ $rc -eq 77 ] && exit 77
r=0
CLIENTS=operator "$ROOT/tests/e2e/hostile/run.sh" enormous huge-status || r=$?
[ $r -eq 0 ] || [ $r -eq 77 ] || rc=1
exit $rc
