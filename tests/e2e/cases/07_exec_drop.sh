#!/usr/bin/env bash
# 07: an exec stream cut after N bytes. The launcher runs mpi-rsh straight into a worker
# (Open MPI's orted would carry rank output over its own TCP, not the exec stream) with
# 200 kB of output; kubesim drops every new exec stream after 3000 bytes. mpi-rsh must
# exit non-zero (never 0, never hang), so the MPIJob ends Failed within 30 s.
# timeout: 240
. "$(dirname "$0")/../lib.sh"
e2e_begin
e2e_up
e2e_op_start a
e2e_ready_file
BACKOFF=0 READY_FILE=$READY_FILE PROG='[sh, -c, "echo launch; /opt/kube/mpi-rsh j7-worker-0 seq 1 40000 > /tmp/out; rc=$?; echo bytes=$(wc -c < /tmp/out) rc=$rc; exit $rc"]' e2e_create j7
e2e_wait_log j7 'workers? ready|waiting' 1 90
e2e_fault exec-drop-after 3000
touch "$READY_FILE"
t0=$(e2e_now_ms)
e2e_expect j7 Failed '.+' '.+' "$t0" 30
out=$(launcher_log j7 | grep -E '^bytes=' | tail -1)
e2e_fault exec-drop-after 0
case $out in *rc=0*|"") e2e_fail "mpi-rsh: '$out' (want non-zero rc)";; esac
e2e_note "launcher: $out"
e2e_no_leftovers j7 30
e2e_pass
