#!/usr/bin/env bash
# timeout: 300
# An operator restart posts no Event users already saw (issue #40): an Event goes with a
# condition's change, and on a restart the informers deliver MPIJobs whose status already holds
# their conditions. Under upstream's status schema (bench/peer_operator.sh's CRD, which prunes
# the operator's other status keys): 50 MPIJobs on kubesim whose pods stay Pending (a nodeSelector
# no node has: each job is Created and Blocked, as the bench's), 2 that Succeed and 1 that runs
# (tiny commands), and 1 whose launcher restarted once in place (its record, status.restarts, is
# pruned: each sync made it again, with an MPIJobRestarting Event, before the fix in
# launcher_restart.c); once the operator has been quiet for 5 s (one MPIJobRestarting Event), it
# is stopped and a new one started; once the new one has synced every job (its
# /metrics' reconcile count), no POST or PATCH on events may have come after the restart
# (kubesim's request log). Also counts the restart's requests, and every object's POSTs:
# each object of the jobs is created once (no create sent twice).
set -u
. "$(dirname "$0")/controller_common.bash"
N=${N:-50}
DONE=2
PORT_A=18191 PORT_B=18192
ctl_cluster
# upstream's status schema (v0.6.0: conditions, replicaStatuses and the times; no other key), as
# bench/peer_operator.sh installs it: the API server prunes the operator's other status keys
python3 - "$ROOT/manifests/base/crd.yaml" >"$KS_DIR/crd-upstream-status.yaml" <<'PY' || ks_fail "write the CRD"
import sys, yaml
crd = yaml.safe_load(open(sys.argv[1]))
t = {"type": "string", "format": "date-time"}
cond = {"type": "object", "required": ["status", "type"], "properties": {
    k: dict(t) if k.startswith("last") else {"type": "string"}
    for k in ("lastTransitionTime", "lastUpdateTime", "message", "reason", "status", "type")}}
rs = {"type": "object", "properties": {"active": {"type": "integer"}, "failed": {"type": "integer"},
      "succeeded": {"type": "integer"}, "selector": {"type": "string"},
      "labelSelector": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}
status = {"type": "object", "properties": {"completionTime": dict(t), "lastReconcileTime": dict(t),
          "startTime": dict(t), "conditions": {"type": "array", "items": cond},
          "replicaStatuses": {"type": "object", "additionalProperties": rs}}}
for v in crd["spec"]["versions"]:
    v["schema"]["openAPIV3Schema"]["properties"]["status"] = status
yaml.safe_dump(crd, sys.stdout)
PY
kc replace -f "$KS_DIR/crd-upstream-status.yaml" >/dev/null || ks_fail "replace the CRD"
ctl_start a --monitoring-port $PORT_A --leader-elect=false -v 1
log=$KS_DIR/apiserver.log

pending_job() {
  echo ---
  mpijob_yaml "$1" --slots 1 --names l,w --command '[mpirun, hostname]' --pod 'nodeSelector: {mpik8s.io/nowhere: "true"}'
}
done_job() {
  cat <<YAML
---
apiVersion: kubeflow.org/v1alpha2
kind: MPIJob
metadata: {name: $1, annotations: {mpi-k8s.io/agent-run: "false"}}
spec:
  cleanPodPolicy: Running
  mpiReplicaSpecs:
    Launcher:
      replicas: 1
      template: {spec: {containers: [{name: l, image: mpik8s/openmpi, command: [sh, -c, "sleep $2"]}]}}
    Worker:
      replicas: 1
      template: {spec: {containers: [{name: w, image: mpik8s/openmpi}]}}
YAML
}
# a launcher whose first run fails (exit 3) and whose rerun, in place (restartPolicy OnFailure),
# stays: its restart is recorded in status.restarts, which upstream's schema prunes
SHARED=$(mktemp -d /tmp/ks-restart-events.XXXXXX)
ks_on_exit "rm -rf $SHARED"
restarted_job() {
  cat <<YAML
---
apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata: {name: $1, annotations: {mpi-k8s.io/agent-run: "false"}}
spec:
  mpiReplicaSpecs:
    Launcher:
      replicas: 1
      restartPolicy: OnFailure
      template:
        spec:
          volumes: [{name: shared, hostPath: {path: "$SHARED", type: DirectoryOrCreate}}]
          containers:
          - name: l
            image: mpik8s/openmpi
            command: [sh, -c, '[ -e /shared/once ] && exec sleep 600; touch /shared/once; exit 3']
            volumeMounts: [{name: shared, mountPath: /shared}]
    Worker:
      replicas: 1
      template: {spec: {containers: [{name: w, image: mpik8s/openmpi}]}}
YAML
}
{
  restarted_job rs0
  for ((i = 0; i < N; i++)); do pending_job p$i; done
  for ((i = 0; i < DONE; i++)); do done_job d$i 1; done
  done_job r0 600
} | kc create -f - >/dev/null || ks_fail "create the MPIJobs"

blocked() { kc get mpijobs -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Blocked")].status}{"\n"}{end}' | grep -c True; }
ks_wait_for '[ "$(blocked)" -ge '$N' ]' 150 || ks_fail "only $(blocked) of $N MPIJobs Blocked"
for ((i = 0; i < DONE; i++)); do wait_cond d$i Succeeded True 120; done
wait_cond r0 Running True 120
wait_cond rs0 Restarting True 120
# quiet: no request of the operator's for 5 s (its status writes, Events and cleanup done)
writes() { grep -cE ' (POST|PUT|PATCH|DELETE) /api' "$log"; }
last=-1
for _ in $(seq 12); do
  now=$(writes)
  [ "$now" = "$last" ] && break
  last=$now
  sleep 5
done
[ "$now" = "$last" ] || { grep -E ' (POST|PUT|PATCH|DELETE) /api' "$log" | tail -n 20
  ks_fail "the first operator never went quiet: $now writes, still writing after 60 s"; }
restarting=$(kc get events --field-selector reason=MPIJobRestarting,involvedObject.name=rs0 -o name | grep -c .)
[ "$restarting" -eq 1 ] || ks_fail "$restarting MPIJobRestarting Events for rs0's one restart"
jobs=$((N + DONE + 2))
evs_before=$(grep -cE ' (POST|PATCH) /api/v1/namespaces/default/events' "$log")
echo "first operator: $evs_before Event writes for $jobs jobs"
for r in configmaps services serviceaccounts secrets; do
  posts=$(grep -cE " POST /api/v1/namespaces/default/$r " "$log")
  echo "POST $r: $posts"
done

ctl_stop a TERM
mark=$(wc -l <"$log")
ctl_start b --monitoring-port $PORT_B --leader-elect=false -v 1
synced() { metric $PORT_B mpi_operator_reconcile_duration_seconds_count; }
ks_wait_for '[ "$(synced)" -ge '$jobs' ] 2>/dev/null' 60 || ks_fail "the new operator synced $(synced) of $jobs jobs"
sleep 3 # Events are posted by a thread of their own, after the sync
after=$(tail -n +$((mark + 1)) "$log")
evs=$(grep -cE ' (POST|PATCH) /api/v1/namespaces/default/events' <<<"$after")
reqs=$(grep -cE ' (GET|POST|PUT|PATCH|DELETE) /api' <<<"$after")
echo "restart over $jobs jobs: $reqs requests, $evs Event writes"
grep -oE ' (POST|PUT|PATCH|DELETE) /api[^ ?]*' <<<"$after" | sed -E 's|/(p\|d)[0-9]+[^/ ]*||' | sort | uniq -c | sort -rn | head
[ "$evs" -eq 0 ] || { kc get events --sort-by=.lastTimestamp | tail -n 20; ks_fail "the restart posted $evs Events"; }
echo "PASS: a restart over $jobs jobs posted no Event ($reqs requests)"
