#!/usr/bin/env bash
# 19 (real cluster only): API Priority and Fairness overloaded. A PriorityLevelConfiguration
# with the smallest share (nominalConcurrencyShares 1, nothing lent or borrowed, Reject: no
# queue) and a FlowSchema that puts only the operator's ServiceAccount on it: the real
# kube-apiserver gives the operator about 3 seats and answers the rest 429 with Retry-After.
# APF_JOBS (20) MPIJobs of one worker are created at once; the operator runs 8 reconcile
# workers so that its writes overlap. Expected: the API server rejected some of the
# operator's requests (apiserver_flowcontrol_rejected_requests_total of the FlowSchema > 0:
# else the case proves nothing and fails), the operator logged them and retried, every job
# ends Succeeded within APF_BOUND (600) s of the burst, and no status update is lost (each
# job's status has startTime, completionTime, Launcher succeeded 1, Created and Succeeded
# True, Running False or never set (a throttled operator may first see the launcher done),
# and the launch phases up to the agent's `finished`). The requests dispatched and rejected under the
# FlowSchema are the case's figures (docs/reliability.md).
# timeout: 1200
. "$(dirname "$0")/../lib.sh"
[ "$KUBE_BACKEND" = k8s ] || e2e_skip "API Priority and Fairness needs the real API server (KUBE_BACKEND=k8s)"
N=${APF_JOBS:-20} BOUND=${APF_BOUND:-600}
e2e_begin
e2e_up
e2e_op_identity a
kc apply -f - >/dev/null <<YAML || e2e_fail "PriorityLevelConfiguration/FlowSchema"
apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: PriorityLevelConfiguration
metadata: {name: e2e-tiny}
spec:
  type: Limited
  limited:
    nominalConcurrencyShares: 1
    lendablePercent: 0
    borrowingLimitPercent: 0
    limitResponse: {type: Reject}
---
apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: FlowSchema
metadata: {name: e2e-operator}
spec:
  matchingPrecedence: 500
  priorityLevelConfiguration: {name: e2e-tiny}
  distinguisherMethod: {type: ByUser}
  rules:
  - subjects:
    - kind: ServiceAccount
      serviceAccount: {name: op-a, namespace: mpi-operator}
    resourceRules:
    - {verbs: ["*"], apiGroups: ["*"], resources: ["*"], clusterScope: true, namespaces: ["*"]}
    nonResourceRules:
    - {verbs: ["*"], nonResourceURLs: ["*"]}
YAML
# fs_metric NAME: the sum of the API server's metric NAME for this FlowSchema
fs_metric() {
  kc get --raw /metrics | awk -v m="$1" -v f='flow_schema="e2e-operator"' \
    '$1 ~ "^" m "[{]" && index($0, f) { s += $2 } END { printf "%d\n", s }'
}
e2e_wait_for '[ "$(kc get flowschema e2e-operator -o jsonpath="{.status.conditions[?(@.type==\"Dangling\")].status}")" = False ]' 30 ||
  e2e_fail "FlowSchema e2e-operator not bound to its priority level"
e2e_op_start a --threadiness 8
e2e_wait_for "grep -q 'controller started' '$E2E_DIR/op-a.log'" 60 || e2e_fail "operator not started: $(tail -5 "$E2E_DIR/op-a.log")"
d0=$(fs_metric apiserver_flowcontrol_dispatched_requests_total)
r0=$(fs_metric apiserver_flowcontrol_rejected_requests_total)
for i in $(seq "$N"); do
  WORKERS=1 YIELD=1 PROG='[timeout, "120", mpirun, -np, "1", --bind-to, none, sh, -c, "echo rank-up"]' \
    e2e_job "apf-$i" >"$E2E_DIR/job-apf-$i.yaml"
done
T0=$(e2e_now_ms)
cat "$E2E_DIR"/job-apf-*.yaml | sed 's/^apiVersion:/---\napiVersion:/' | kc create -f - >/dev/null ||
  e2e_fail "kubectl create the $N MPIJobs"
# every job reaches a final state (bounded); all must be Succeeded
left=$N end=$(( $(date +%s) + BOUND ))
while [ "$(date +%s)" -lt $end ]; do
  left=$(kc get mpijobs -o jsonpath='{range .items[*]}{.status.conditions[?(@.status=="True")].type}{"\n"}{end}' |
    grep -cvE 'Succeeded|Failed' || true)
  [ "$left" -eq 0 ] && break
  sleep 2
done
secs=$(( ($(e2e_now_ms) - T0) / 1000 ))
[ "$left" -eq 0 ] || e2e_fail "$left of $N jobs not finished ${secs} s after the burst (HANG); bound $BOUND s"
d=$(( $(fs_metric apiserver_flowcontrol_dispatched_requests_total) - d0 ))
r=$(( $(fs_metric apiserver_flowcontrol_rejected_requests_total) - r0 ))
e2e_log "all $N jobs final in ${secs} s; operator requests under the FlowSchema: $d dispatched, $r rejected (429)"
e2e_note "jobs=$N final_in=${secs}s dispatched=$d rejected=$r"
[ "$r" -gt 0 ] || e2e_fail "the API server rejected none of the operator's requests: the overload did not happen"
grep -qE '429|[Tt]oo many requests|TooManyRequests' "$E2E_DIR/op-a.log" ||
  e2e_fail "$r requests rejected, but the operator logged no 429"
kc get mpijobs -o json >"$E2E_DIR/mpijobs.json" || e2e_fail "get mpijobs"
python3 - "$E2E_DIR/mpijobs.json" "$N" <<'PY' || e2e_fail "a status update was lost (above)"
import json, sys
items = json.load(open(sys.argv[1]))["items"]
assert len(items) == int(sys.argv[2]), "jobs: %d" % len(items)
bad = []
for j in items:
    s = j.get("status") or {}
    conds = {c["type"]: c["status"] for c in s.get("conditions", [])}
    # Running is False, or absent when the operator (throttled) first saw the launcher done
    miss = [k for k, v in {"Created": "True", "Succeeded": "True"}.items() if conds.get(k) != v]
    if conds.get("Running", "False") != "False" or conds.get("Failed"):
        miss.append("Running/Failed")
    ph = s.get("launchPhases") or {}
    miss += ["launchPhases." + k for k in ("created", "launcherStarted", "mpirunStarted", "finished") if k not in ph]
    if miss or not s.get("startTime") or not s.get("completionTime") or \
            (s.get("replicaStatuses") or {}).get("Launcher", {}).get("succeeded") != 1:
        bad.append("%s: conditions %s, startTime %s, completionTime %s, replicaStatuses %s" % (
            j["metadata"]["name"], conds, s.get("startTime"), s.get("completionTime"), s.get("replicaStatuses")))
for b in bad:
    print(b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
e2e_note "statuses complete"
kc delete mpijobs --all --wait=false >/dev/null || e2e_fail "delete the MPIJobs"
e2e_wait_for '[ -z "$(kc get pods,jobs -o name)" ]' 180 || e2e_fail "objects left after deleting the jobs: $(kc get pods,jobs -o name | head)"
E2E_SECS=$secs
e2e_pass
