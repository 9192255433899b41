#!/usr/bin/env bash
# 00 smoke: the healthy path end to end - the operator (a process), an exec-transport
# MPIJob of 2 workers running mpi-pi, Succeeded with the seed's reason, the program's
# output in the launcher log, nothing left behind after deletion.
# timeout: 330
. "$(dirname "$0")/../lib.sh"
e2e_begin
e2e_up
e2e_op_start a --leader-elect=false
e2e_create smoke
e2e_expect smoke Succeeded '^MPIJobSucceeded$' 'successfully completed' "$T_CREATE" 120
launcher_log smoke | grep -q 'pi is approximately 3.14' || e2e_fail "no pi output in the launcher log"
e2e_no_leftovers smoke 30
e2e_pass
