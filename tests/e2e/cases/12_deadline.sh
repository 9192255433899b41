#!/usr/bin/env bash
# 12: activeDeadlineSeconds (45: startup under load stays inside it) reached during a run of a 100 s program: Failed with
# reason DeadlineExceeded within 30 s of the deadline; mpirun and its daemons are gone.
# timeout: 330
. "$(dirname "$0")/../lib.sh"
e2e_begin
e2e_up
e2e_op_start a
DEADLINE=45 PROG='[timeout, "150", mpirun, -np, "2", --bind-to, none, sh, -c, "echo rank-up; sleep 100"]' e2e_create j12
e2e_wait_log j12 '^rank-up' 2 180
# the deadline runs from the MPIJob's status.startTime (RFC 3339, whole seconds)
st=$(kc get mpijob j12 -o jsonpath='{.status.startTime}')
st_ms=$(( $(date -d "$st" +%s) * 1000 ))
[ "$st_ms" -gt 0 ] || e2e_fail "no status.startTime"
e2e_note "startTime=+$(( (st_ms - T_CREATE) / 1000 ))s"
e2e_expect j12 Failed 'DeadlineExceeded' '.+' "$((st_ms + 45000))" 30
e2e_no_leftovers j12 30
e2e_pass
