#!/usr/bin/env bash
# 03: workers whose image never pulls. The agent's wait is bounded (worker-timeout 10 s);
# with the default backoffLimit (the Job's 6, restartPolicy OnFailure) the MPIJob still ends
# Failed within 30 s of that bound, not after minutes of launcher retries: the agent's init
# exits 3 (the workers decided the wait) and the operator fails the job at once, quoting the
# agent's reason: a worker and the pull failure (F7).
# timeout: 330
. "$(dirname "$0")/../lib.sh"
e2e_begin
e2e_up
e2e_op_start a
WORKER_TIMEOUT=10 WORKER_IMAGE=registry.example/does-not-exist:1 e2e_create j3
e2e_expect j3 Failed '^MPIJobFailed$' 'did not become ready; launcher pod j3-launcher-[a-z0-9]+: init failed: timed out after 10 s.*j3-worker-[01].*(ImagePull|ErrImage|pull)' "$((T_CREATE + 10000))" 30
e2e_no_leftovers j3 30
e2e_pass
