#!/usr/bin/env bash
# 09: two controllers (own ServiceAccounts, leader election on). Only the Lease holder
# writes (the access log shows no write by the other except on the Lease); a job is
# served; the holder killed -> the standby takes the Lease and finishes a second job.
# timeout: 300
. "$(dirname "$0")/../lib.sh"
e2e_begin
e2e_up
e2e_op_start a
e2e_op_start b
holder() { kc -n mpi-operator get lease mpi-operator -o jsonpath='{.spec.holderIdentity}' 2>/dev/null; }
e2e_wait_for '[ -n "$(holder)" ]' 30 || { kc -n mpi-operator get leases -o yaml >&2; e2e_fail "no Lease holder"; }
e2e_create j9a
e2e_expect j9a Succeeded '^MPIJobSucceeded$' 'successfully completed' "$T_CREATE" 120
h=$(holder)
# which operator holds it? identities embed the host name and pid or the SA; find by writes
writes() { grep -E '^.* (POST|PUT|PATCH|DELETE) ' "$KS/apiserver.log" | grep -v '/leases' | grep -cE "ms system:serviceaccount:mpi-operator:op-$1\$" || true; }
wa=$(writes a); wb=$(writes b)
e2e_log "lease holder '$h'; writes (not Lease) a=$wa b=$wb"
if [ "$wa" -gt 0 ] && [ "$wb" -gt 0 ]; then e2e_fail "both controllers wrote (a=$wa b=$wb)"; fi
[ $((wa + wb)) -gt 0 ] || e2e_fail "no controller wrote anything"
if [ "$wa" -gt 0 ]; then leader=a standby=b; else leader=b standby=a; fi
before=$(writes $standby)
e2e_op_stop $leader KILL
t0=$(e2e_now_ms)
e2e_create j9b
e2e_expect j9b Succeeded '^MPIJobSucceeded$' 'successfully completed' "$t0" 60
[ "$(writes $leader)" -ge 1 ] || true
[ "$(writes $standby)" -gt "$before" ] || e2e_fail "the standby never wrote after the leader died"
e2e_note "leader=$leader writes=$((wa + wb)) standbyWritesBeforeFailover=$before failover+job=${E2E_SECS}s"
e2e_no_leftovers j9a 30
e2e_no_leftovers j9b 30
e2e_pass
