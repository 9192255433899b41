#!/usr/bin/env bash
# 25 (real cluster only): a worker preempted by the scheduler while mpirun runs. One node;
# the job's workers ask for CPU so that, with them running, the node has about 200m left;
# the launcher has a PriorityClass of 1000 (never the victim), the workers none (0). A pod
# of PriorityClass 1000000 asking for that 200m plus half a worker's request fits only if one
# worker goes: the scheduler sets the worker's DisruptionTarget condition
# (PreemptionByScheduler), deletes it and records a Preempted Event on it (related: the
# preemptor). The agent stops mpirun naming the worker and, from that Event, the preemptor.
# A: backoffLimit 0 -> Failed with "preempted by default/<preemptor>" within 30 s of the
#    condition's lastTransitionTime.
#    (The launcher's default restartPolicy OnFailure: the kubelet reruns the container, the Job
#    stops the rerun, and the rerun's message leads with the first run's: agent/prevrun.c.)
# B: backoffLimit 1, launcher restartPolicy Never -> the Job's second launcher pod; the restart
#    recorded in status.restarts naming the preemptor; the preemptor ends after 25 s, the
#    re-created worker gets its node back and the second launcher's run Succeeds.
# No leftovers after each. The victim as the watch saw it and the Events are kept in the
# case's directory (E2E_KEEP=1) for tests/unit/data/preemption/.
# timeout: 600
. "$(dirname "$0")/../lib.sh"
[ "$KUBE_BACKEND" = k8s ] || e2e_skip "preemption needs the real scheduler (KUBE_BACKEND=k8s)"
e2e_begin
e2e_up
e2e_op_start a
E2E_VARTMP=$(mktemp -d "/var/tmp/e2e-$E2E_CASE.XXXXXX") || e2e_fail mktemp
chmod 0777 "$E2E_VARTMP" || e2e_fail "chmod $E2E_VARTMP"

kc create -f - >/dev/null <<'YAML' || e2e_fail "create PriorityClasses"
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: e2e-launcher}
value: 1000
description: the MPIJob's launcher (not the victim)
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: e2e-preemptor}
value: 1000000
description: the pod that needs a worker's place
YAML

# free_mcpu: the node's allocatable CPU less the requests of the pods bound to it (millicores)
free_mcpu() {
  { kc get nodes -o json && echo '---' && kc get pods -A -o json; } | python3 -c '
import json, sys
a, b = sys.stdin.read().split("\n---\n")
def m(q):
    q = str(q)
    return int(float(q[:-1])) if q.endswith("m") else int(float(q) * 1000)
node = json.loads(a)["items"][0]
used = 0
for p in json.loads(b)["items"]:
    if p["spec"].get("nodeName") != node["metadata"]["name"] or p["status"].get("phase") in ("Succeeded", "Failed"):
        continue
    for c in p["spec"]["containers"]:
        used += m(c.get("resources", {}).get("requests", {}).get("cpu", "0"))
print(m(node["status"]["allocatable"]["cpu"]) - used)'
}
free0=$(free_mcpu) || e2e_fail "reading the node's CPU"
W=$(( (free0 - 200) / 2 ))
[ "$W" -ge 200 ] || e2e_fail "node has only ${free0}m CPU free"
e2e_log "node: ${free0}m CPU free; each worker requests ${W}m"

# job NAME: an MPIJob whose workers request W millicores, launcher of PriorityClass e2e-launcher;
# the ranks print rank-up and exit 0 once $E2E_VARTMP/NAME-second exists, else sleep
job() {
  PROG="[timeout, \"300\", mpirun, -np, \"2\", --bind-to, none, sh, -c, \"echo rank-up; [ -e $E2E_VARTMP/$1-second ] && exit 0; sleep 200\"]" \
    e2e_job "$1" | python3 -c '
import sys, yaml
j = yaml.safe_load(sys.stdin)
r = j["spec"]["mpiReplicaSpecs"]
r["Launcher"]["template"]["spec"]["priorityClassName"] = "e2e-launcher"
r["Worker"]["template"]["spec"]["containers"][0]["resources"] = {"requests": {"cpu": sys.argv[1] + "m"}}
print(yaml.safe_dump(j))' "$W" >"$E2E_DIR/job-$1.yaml" || e2e_fail "job $1 YAML"
  kc create -f "$E2E_DIR/job-$1.yaml" >/dev/null || e2e_fail "kubectl create MPIJob $1"
}

# preempt NAME SECONDS: the high-priority pod asking for what is free plus half a worker
preempt() {
  local need=$(( $(free_mcpu) + W / 2 ))
  kc create -f - >/dev/null <<YAML || e2e_fail "create preemptor $1"
apiVersion: v1
kind: Pod
metadata: {name: $1, namespace: default}
spec:
  priorityClassName: e2e-preemptor
  restartPolicy: Never
  terminationGracePeriodSeconds: 1
  containers:
  - name: p
    image: mpik8s/openmpi:latest
    command: [sleep, "$2"]
    resources: {requests: {cpu: ${need}m}}
YAML
  e2e_log "preemptor $1 asks for ${need}m CPU"
}

# watch_workers JOB: the job's worker pods as the API server sends them, into $E2E_DIR/JOB-watch.json
watch_workers() {
  setsid timeout 400 "$KUBESIM" run --dir "$KS" -- kubectl get pods -l "mpi_job_name=$1,mpi_role_type=worker" \
    --watch -o json >"$E2E_DIR/$1-watch.json" 2>/dev/null &
  E2E_PIDS+=("$!")
}

# victim JOB: "NAME LAST-TRANSITION-TIME" of the first worker the watch saw with DisruptionTarget
# True; its object (that first sight) into $E2E_DIR/victim-JOB.json
victim() {
  python3 - "$E2E_DIR/$1-watch.json" "$E2E_DIR/victim-$1.json" <<'PY'
import json, sys
text, dec, i = open(sys.argv[1]).read(), json.JSONDecoder(), 0
while i < len(text):
    while i < len(text) and text[i].isspace():
        i += 1
    if i >= len(text):
        break
    o, i = dec.raw_decode(text, i)
    for c in o.get("status", {}).get("conditions", []):
        if c["type"] == "DisruptionTarget" and c["status"] == "True":
            json.dump(o, open(sys.argv[2], "w"), indent=1)
            print(o["metadata"]["name"], c["lastTransitionTime"])
            sys.exit(0)
sys.exit(1)
PY
}

# await_victim JOB: waits (60 s) for a worker of JOB with DisruptionTarget; sets vname and t_dt
# (the condition's lastTransitionTime, epoch ms)
await_victim() {
  local vtime
  e2e_wait_for "victim $1" 60 || e2e_fail "no worker of $1 got DisruptionTarget: $(kc get pods -o wide)"
  read -r vname vtime <<<"$(victim "$1")"
  t_dt=$(( $(date -d "$vtime" +%s) * 1000 ))
  e2e_log "victim $vname: DisruptionTarget at $vtime"
}

# ---- A: backoffLimit 0 ----
watch_workers j25a
BACKOFF=0 job j25a
e2e_wait_log j25a '^rank-up' 2 180
preempt big-a 600
await_victim j25a
e2e_expect j25a Failed '.+' "preempted by default/big-a" "$t_dt" 30
kc get events --field-selector "involvedObject.name=$vname,reason=Preempted" -o json >"$E2E_DIR/events-j25a.json" 2>&1 || true
e2e_note "A:victim=$vname failed=${E2E_SECS}s-after-DisruptionTarget(±1)"
e2e_log "j25a: message: $FINAL_MSG"
[[ "$FINAL_MSG" == *"$vname"* ]] || e2e_fail "j25a: the message does not name the victim $vname: $FINAL_MSG"
kc delete pod big-a --grace-period=1 --wait=false >/dev/null || e2e_fail "delete big-a"
e2e_no_leftovers j25a 60
e2e_wait_for '! kc get pod big-a' 60 || e2e_fail "big-a not gone"

# ---- B: backoffLimit 1: one restart, then Succeeded once the preemptor is done ----
watch_workers j25b
BACKOFF=1 WORKER_TIMEOUT=240 LAUNCHER_RESTART=Never job j25b
e2e_wait_log j25b '^rank-up' 2 180
touch "$E2E_VARTMP/j25b-second" || e2e_fail "touch"   # the next launcher run's ranks exit 0
preempt big-b 25
await_victim j25b
e2e_expect j25b Succeeded '.+' '.*' "$t_dt" 180
kc get mpijob j25b -o json >"$E2E_DIR/j25b.json" || e2e_fail "get j25b"
python3 - "$E2E_DIR/j25b.json" "$vname" <<'PY' || e2e_fail "j25b: status.restarts does not name the preemption: $(kc get mpijob j25b -o jsonpath='{.status.restarts}')"
import json, sys
st = json.load(open(sys.argv[1]))["status"]
r = st.get("restarts", [])
named = [e for e in r if "preempted by default/big-b" in e.get("message", "") and sys.argv[2] in e["message"]]
print("restartCount", st.get("restartCount"), "restarts:", json.dumps(r))
assert named and st.get("restartCount", 0) >= 1
PY
e2e_note "B:victim=$vname succeeded=${E2E_SECS}s-after-DisruptionTarget restarts=$(kc get mpijob j25b -o jsonpath='{.status.restartCount}')"
e2e_no_leftovers j25b 60
e2e_wait_for '[ "$(kc get pod big-b -o jsonpath={.status.phase})" = Succeeded ]' 60 || e2e_fail "big-b did not end"
kc delete pod big-b --wait=false >/dev/null || true
e2e_pass
