#!/usr/bin/env bash
# 17 (real cluster only): the worker node's containerd restarted while mpirun runs, with the
# exec and with the ssh transport (tests/e2e/restart_lib.sh). Measured outcome
# (docs/reliability.md): exec: Succeeded (the exec streams end with a success status and the orteds live on: mpirun's
# own TCP connections carry the job); ssh: Succeeded.
# timeout: 420
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../restart_lib.sh"
FAULT=restart-containerd EXPECT_EXEC=${EXPECT_EXEC:-Succeeded} EXPECT_SSH=${EXPECT_SSH:-Succeeded} BOUND=45 restart_case
