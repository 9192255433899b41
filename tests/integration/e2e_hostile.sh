#!/usr/bin/env bash
# timeout: 150
# The bounded `make test` subset of the hostile-API-server matrix (tests/e2e/hostile/,
# full run: tests/e2e/hostile/run.sh): mpi-agent status and mpi-rsh against a server that
# truncates JSON, drips one byte per 0.5 s, sends garbage or closes every connection - each must fail cleanly (non-zero, bounded time,
# bounded RSS, a short error without raw control characters). Modes/clients left out while
# known-failing (docs/reliability.md): wrong-types and enormous (mpi-agent), the operator.
set -u
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
CLIENTS="agent rsh" BOUND=30 exec "$ROOT/tests/e2e/hostile/run.sh" truncated slow-drip garbage close
