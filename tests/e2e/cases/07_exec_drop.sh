#!/usr/bin/env bash
# 07: an exec stream cut after N bytes. The launcher runs mpi-rsh straight into a worker
# (Open MPI's orted would carry rank output over its own TCP, not the exec stream) with
# 200 kB of output; kubesim drops every new exec stream after 3000 bytes and kills its
# command (the command then sleeps 5 s, so it is still running when the drop kills it).
# mpi-rsh reattaches (docs/rsh.md "Reattach"), finds the session gone without an exit code
# and must exit non-zero (never 0, never hang), so the MPIJob ends Failed within 30 s. (A
# command that had already exited 0 when its stream was cut is reported 0: its own code.)
# timeout: 330
. "$(dirname "$0")/../lib.sh"
e2e_begin
e2e_up
e2e_op_start a
e2e_ready_file
# (the launcher pod may be gone after the failure: the result goes to a host file)
res=$E2E_VARTMP/result
LAUNCHER_RESTART=Never BACKOFF=0 READY_FILE=$READY_FILE PROG="[sh, -c, \"/opt/kube/mpi-rsh j7-worker-0 \\\"seq 1 40000; sleep 5\\\" > /tmp/out 2> /tmp/err; rc=\$?; echo bytes=\$(wc -c < /tmp/out) rc=\$rc \$(tail -n1 /tmp/err) >> $res; exit \$rc\"]" e2e_create j7
e2e_wait_log j7 'workers? ready|waiting' 1 180
e2e_fault exec-drop-after 3000
touch "$READY_FILE"
t0=$(e2e_now_ms)
e2e_expect j7 Failed '.+' '.+' "$t0" 30
out=$(tail -n1 "$res" 2>/dev/null)
e2e_fault exec-drop-after 0
case $out in *rc=0\ *|"") e2e_fail "mpi-rsh: '$out' (want non-zero rc)";; esac
e2e_note "launcher: $out"
e2e_no_leftovers j7 30
e2e_pass
