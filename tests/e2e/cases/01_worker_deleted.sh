#!/usr/bin/env bash
# 01: a worker pod deleted while mpirun runs. The agent supervising mpirun sees the worker
# go, stops mpirun and fails; backoffLimit 0, so the MPIJob ends Failed naming the worker.
# timeout: 330
. "$(dirname "$0")/../lib.sh"
e2e_begin
e2e_up
e2e_op_start a
BACKOFF=0 PROG='[timeout, "150", mpirun, -np, "2", --bind-to, none, sh, -c, "echo rank-up; sleep 100"]' e2e_create j1
e2e_wait_log j1 '^rank-up' 2 180
t0=$(e2e_now_ms)
kc delete pod j1-worker-1 --wait=false >/dev/null || e2e_fail "delete worker"
e2e_expect j1 Failed '.+' 'j1-worker-1' "$t0" 30
e2e_no_leftovers j1 30
e2e_pass
