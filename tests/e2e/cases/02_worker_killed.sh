#!/usr/bin/env bash
# 02: a worker's containers killed (exit 137) mid-run. The agent sees the worker fail or
# turn NotReady, stops mpirun and fails; backoffLimit 0: MPIJob Failed naming the worker.
# timeout: 330
. "$(dirname "$0")/../lib.sh"
e2e_begin
e2e_up
e2e_op_start a
BACKOFF=0 PROG='[timeout, "150", mpirun, -np, "2", --bind-to, none, sh, -c, "echo rank-up; sleep 100"]' e2e_create j2
e2e_wait_log j2 '^rank-up' 2 180
t0=$(e2e_now_ms)
e2e_fault kill-containers default/j2-worker-1
e2e_expect j2 Failed '.+' 'j2-worker-1' "$t0" 30
e2e_no_leftovers j2 30
e2e_pass
