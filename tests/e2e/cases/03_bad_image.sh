#!/usr/bin/env bash
# 03: workers whose image never pulls. The agent's wait is bounded (worker-timeout 10 s);
# the MPIJob ends Failed within 30 s of that bound with a message naming a worker and
# the pull failure.
# timeout: 330
. "$(dirname "$0")/../lib.sh"
e2e_begin
e2e_up
e2e_op_start a
BACKOFF=0 WORKER_TIMEOUT=10 WORKER_IMAGE=registry.example/does-not-exist:1 e2e_create j3
e2e_expect j3 Failed '.+' 'j3-worker-[01].*(ImagePull|ErrImage|pull)' "$((T_CREATE + 10000))" 30
e2e_no_leftovers j3 30
e2e_pass
