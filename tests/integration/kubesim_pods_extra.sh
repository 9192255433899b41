#!/usr/bin/env bash
# timeout: 300
# More of the kubesim kubelet/scheduler on two nodes: nodeSelector and required node
# affinity (and the "didn't match" message), envFrom with prefix, subPath, hostPath,
# downwardAPI resourceFieldRef, an init container failing under restartPolicy Never
# (pod Failed), a command that does not exist (StartError 128), a missing ConfigMap key
# (CreateContainerConfigError), a missing ConfigMap volume (FailedMount, then Running once
# created, and the volume follows ConfigMap updates), liveness restarts, startup and
# readiness httpGet probes, and a sandbox re-created after its init process was killed.
set -u
: "${ROOT:=$(cd "$(dirname "$0")/../.." && pwd)}"
. "$ROOT/tests/lib/kubesim.sh"
ks_skip_unless_root
command -v kubectl >/dev/null || { echo "skip: kubectl not installed"; exit 77; }
pass=0
fail=0
check() { if [ "$2" -eq 0 ]; then pass=$((pass + 1)); else echo "FAIL: $1: $3"; fail=$((fail + 1)); fi; }
k() { timeout 60 "$KUBESIM" run --dir "$KS_DIR" -- kubectl "$@"; }
jp() { k get pod "$1" -o jsonpath="$2" 2>&1; }
is() { [ "$1" = "$2" ]; echo $?; }
waitjp() { ks_wait_for "jp $1 '$2' | grep -Eq -- '$3'" "${4:-30}"; }

ks_up --nodes 2 --set crash_backoff=1
n=$(k get nodes -o name | wc -l)
check "two nodes" "$(is "$n" 2)" "$n"
k apply -f "$ROOT/tests/integration/kubesim_data/pods-extra.yaml" >/dev/null || ks_fail "apply"

waitjp envfrom '{.status.phase}' '^Running$' 40
check "nodeSelector" "$(is "$(jp envfrom '{.spec.nodeName}')" kubesim-node-1)" "$(jp envfrom '{.spec.nodeName}')"
waitjp affinity '{.status.phase}' '^Running$' 40
check "node affinity" "$(is "$(jp affinity '{.spec.nodeName}')" kubesim-node-0)" "$(jp affinity '{.spec.nodeName}')"
ks_wait_for "jp nomatch '{.status.conditions[?(@.type==\"PodScheduled\")].message}' | grep -q 'match'" 15
msg=$(jp nomatch '{.status.conditions[?(@.type=="PodScheduled")].message}')
check "selector mismatch message" "$(grep -q "^0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector\." <<<"$msg"; echo $?)" "$msg"
out=$(k exec envfrom -- sh -c 'echo $CM_greeting $CM_other; cat /etc/kubesim-extra/greeting.txt; echo; test -e /etc/kubesim-extra/host/GPL-3 && echo host-ok; cat /etc/kubesim-extra/down/cpu')
check "envFrom/subPath/hostPath/resourceFieldRef" "$(is "$out" $'hello world\nhello\nhost-ok\n1000')" "$out"

waitjp initfail '{.status.phase}' '^Failed$' 30
st=$(jp initfail '{.status.initContainerStatuses[0].state.terminated.exitCode}/{.status.containerStatuses[0].state.waiting.reason}')
check "init failure with Never" "$(is "$st" 7/PodInitializing)" "$st"
waitjp nocmd '{.status.phase}' '^Failed$' 30
st=$(jp nocmd '{.status.containerStatuses[0].state.terminated.reason}/{.status.containerStatuses[0].state.terminated.exitCode}')
check "StartError" "$(is "$st" StartError/128)" "$st $(jp nocmd '{.status.containerStatuses[0].state.terminated.message}')"
waitjp badkey '{.status.containerStatuses[0].state.waiting.reason}' '^CreateContainerConfigError$' 30
msg=$(jp badkey '{.status.containerStatuses[0].state.waiting.message}')
check "CreateContainerConfigError" "$(is "$msg" "couldn't find key missing in ConfigMap default/cmx")" "$msg"

ks_wait_for "k get events --field-selector involvedObject.name=nocm,reason=FailedMount -o name | grep -q ." 20
msg=$(k get events --field-selector involvedObject.name=nocm,reason=FailedMount -o jsonpath='{.items[0].message}')
check "FailedMount" "$(is "$msg" 'MountVolume.SetUp failed for volume "v" : configmap "cm-created-later" not found')" "$msg"
check "nocm Pending" "$(is "$(jp nocm '{.status.phase}')" Pending)" "$(jp nocm '{.status.phase}')"
k create configmap cm-created-later --from-literal=key=v1 >/dev/null
waitjp nocm '{.status.phase}' '^Running$' 60
out=$(k exec nocm -- cat /etc/kubesim-extra/nocm/key)
check "volume after ConfigMap created" "$(is "$out" v1)" "$out"
k create configmap cm-created-later --from-literal=key=v2 --dry-run=client -o yaml | k replace -f - >/dev/null
ks_wait_for "k exec nocm -- cat /etc/kubesim-extra/nocm/key | grep -qx v2" 15
check "volume follows ConfigMap update" $? "$(k exec nocm -- cat /etc/kubesim-extra/nocm/key)"

waitjp live '{.status.phase}' '^Running$' 30
k exec live -- rm /tmp/alive
waitjp live '{.status.containerStatuses[0].restartCount}' '^[1-9]' 30
check "liveness restart" $? "$(jp live '{.status.containerStatuses[0]}')"
ev=$(k get events --field-selector involvedObject.name=live,reason=Killing -o jsonpath='{.items[0].message}')
check "liveness Killing event" "$(is "$ev" 'Container main failed liveness probe, will be restarted')" "$ev"
waitjp http '{.status.containerStatuses[0].ready}' '^true$' 60
check "startup+readiness httpGet" $? "$(jp http '{.status.containerStatuses[0]}')"
check "started" "$(is "$(jp http '{.status.containerStatuses[0].started}')" true)" "$(jp http '{.status.containerStatuses[0]}')"

# the pod's init process killed from outside: the kubelet re-creates the sandbox
waitjp sandbox '{.status.phase}' '^Running$' 30
uid=$(jp sandbox '{.metadata.uid}')
ip1=$(jp sandbox '{.status.podIP}')
inner=$(/usr/bin/python3 -c '
import glob, json, sys
for f in glob.glob(sys.argv[1] + "/state/node/sandboxes/*.json"):
    r = json.load(open(f))
    if r["uid"] == sys.argv[2]:
        print(r["pids"][-1][0])' "$KS_DIR" "$uid")
[ -n "$inner" ] && kill -9 "$inner"
waitjp sandbox '{.status.containerStatuses[0].restartCount}' '^1$' 30
ks_wait_for "jp sandbox '{.status.containerStatuses[0].ready}' | grep -qx true" 30
st=$(jp sandbox '{.status.phase}/{.status.containerStatuses[0].lastState.terminated.exitCode}')
check "sandbox re-created" "$(is "$st" Running/137)" "$st (old IP $ip1, now $(jp sandbox '{.status.podIP}'))"
ev=$(k get events --field-selector involvedObject.name=sandbox,reason=SandboxChanged -o jsonpath='{.items[0].message}')
check "SandboxChanged event" "$(is "$ev" 'Pod sandbox changed, it will be killed and re-created.')" "$ev"

echo "kubesim_pods_extra: $pass passed, $fail failed"
[ $fail -eq 0 ]
