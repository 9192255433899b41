#!/usr/bin/env bash
# 16 (real cluster only): the worker node's kubelet restarted while mpirun runs, with the
# exec and with the ssh transport (tests/e2e/restart_lib.sh). Expected (docs/reliability.md):
# both Succeeded. exec: the kubelet's exec streams end without an exit status; each stream
# is reattached (docs/rsh.md "Reattach": a new exec into the same pod, retried with backoff
# for up to MPI_RSH_REATTACH_S = 60 s while the kubelet comes back, about 2 s here), which
# waits for the orted and returns its exit code; the launcher's log records the reattach.
# ssh: the pod network is untouched. Both within 45 s of the restart (the program's 20 s).
# timeout: 420
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../restart_lib.sh"
FAULT=restart-kubelet EXPECT_EXEC=${EXPECT_EXEC:-Succeeded} EXPECT_EXEC_LOG='reattached: the session runs on' EXPECT_SSH=${EXPECT_SSH:-Succeeded} BOUND=45 restart_case
