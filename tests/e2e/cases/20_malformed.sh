#!/usr/bin/env bash
# 20: malformed MPIJobs beyond the 26 of tests/integration/controller_api.sh (24 more, see
# tests/e2e/data/malformed.py). Each is either refused by the API server's CRD schema
# (kubectl create fails naming the field; nothing exists) or accepted and then marked
# Failed by the controller with a message naming the field. For every one: no pod, Job,
# ConfigMap, Service, ServiceAccount, Role, RoleBinding or Secret of the job exists (nothing
# half-created) and its resourceVersion stops changing (no retry loop). A valid job
# created right after them runs to Succeeded (the controller keeps serving), and the
# operator is still alive at the end.
# timeout: 420
. "$(dirname "$0")/../lib.sh"
e2e_begin
e2e_up
e2e_op_start a
python3 "$ROOT/tests/e2e/data/malformed.py" "$E2E_DIR/mal" >/dev/null || e2e_fail "generating the jobs"
mkdir -p "$E2E_DIR/maljobs" && cp "$E2E_DIR"/mal/*.json "$E2E_DIR/maljobs/"
kc create -f "$E2E_DIR/maljobs" >/dev/null 2>"$E2E_DIR/create.err" || true
e2e_create good
judge() {
  kc get mpijobs -o json >"$E2E_DIR/mpijobs.json" &&
  kc get pods,jobs,configmaps,services,serviceaccounts,roles,rolebindings,secrets -o json >"$E2E_DIR/objs.json" &&
  python3 "$ROOT/tests/e2e/data/judge_malformed.py" "$E2E_DIR/mal/cases.tsv" "$E2E_DIR/mpijobs.json" \
    "$E2E_DIR/create.err" "$E2E_DIR/objs.json" "$@" >"$E2E_DIR/judge.out"
}
e2e_wait_for 'judge && grep -q " pending=0 " "$E2E_DIR/judge.out"' 60 || true
e2e_expect good Succeeded '^MPIJobSucceeded$' 'successfully completed' "$T_CREATE" 150
judge --final; jrc=$?
cat "$E2E_DIR/judge.out" >&2
rv1=$(kc get mpijobs -o jsonpath='{range .items[*]}{.metadata.name}={.metadata.resourceVersion}{"\n"}{end}' | grep -v '^good=')
sleep 5
rv2=$(kc get mpijobs -o jsonpath='{range .items[*]}{.metadata.name}={.metadata.resourceVersion}{"\n"}{end}' | grep -v '^good=')
loops=$(comm -13 <(echo "$rv1" | sort) <(echo "$rv2" | sort) | cut -d= -f1 | tr '\n' ' ')
alive=yes; kill -0 "$(e2e_op_pid a)" 2>/dev/null || alive=no
e2e_note "$(tail -n1 "$E2E_DIR/judge.out") retryLoops=[${loops}] operatorAlive=$alive"
[ $jrc -eq 0 ] || e2e_fail "malformed jobs mishandled: $(head -n -1 "$E2E_DIR/judge.out" | tr '\n' ';')"
[ -z "$loops" ] || e2e_fail "status keeps changing for: $loops"
[ $alive = yes ] || e2e_fail "the operator died"
e2e_no_leftovers good 30
e2e_pass
