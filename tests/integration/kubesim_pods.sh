#!/usr/bin/env bash
# timeout: 400
# The kubesim kubelet and scheduler seen through the real kubectl: pod lifecycle and
# status, init containers in order, volumes (emptyDir, configMap items and modes, secret,
# downwardAPI, service-account token), env valueFrom and $(VAR) expansion, restartPolicy
# with back-off and --previous logs, readiness probes (exec, tcpSocket), termination
# message, graceful termination (SIGTERM, grace period, SIGKILL), an unschedulable GPU
# request, ImagePullBackOff, scheduling retry when capacity frees, hostnames and the
# /etc/hosts DNS stand-in between pods, pods calling the API server at 10.250.0.1 with
# their token (403 then 200 after a RoleBinding), `kubectl logs -f/-l/--tail`, and the
# kill-containers, pause-node and delete-pod-now faults.
set -u
: "${ROOT:=$(cd "$(dirname "$0")/../.." && pwd)}"
. "$ROOT/tests/lib/kubesim.sh"
ks_skip_unless_root
command -v kubectl >/dev/null || { echo "skip: kubectl not installed"; exit 77; }
pass=0
fail=0
check() {   # check NAME RESULT(0 = ok) DETAIL
  if [ "$2" -eq 0 ]; then pass=$((pass + 1)); else echo "FAIL: $1: $3"; fail=$((fail + 1)); fi
}
k() { timeout 60 "$KUBESIM" run --dir "$KS_DIR" -- kubectl "$@"; }
jp() { k get pod "$1" -o jsonpath="$2" 2>&1; }
is() { [ "$1" = "$2" ]; echo $?; }
has() { grep -Eq -- "$2" <<<"$1"; echo $?; }
waitjp() {  # waitjp POD JSONPATH REGEX SECS
  ks_wait_for "jp $1 '$2' | grep -Eq -- '$3'" "${4:-30}"
}

ks_up --set crash_backoff=1 --set image_backoff=1
k apply -f "$ROOT/tests/integration/kubesim_data/pods.yaml" >/dev/null || ks_fail "apply pods.yaml"

# ---- lifecycle and status
waitjp once '{.status.phase}' '^Succeeded$' 30
check "once Succeeded" "$(is "$(jp once '{.status.phase}')" Succeeded)" "$(jp once '{.status}')"
st=$(jp once '{.status.containerStatuses[0].state.terminated.reason}/{.status.containerStatuses[0].state.terminated.exitCode}/{.status.podIP}/{.status.hostIP}')
check "once terminated" "$(has "$st" '^Completed/0/10\.250\.[0-9]+\.[0-9]+/10\.250\.0\.1$')" "$st"
conds=$(jp once '{range .status.conditions[*]}{.type}={.status}/{.reason} {end}')
check "once conditions" "$(has "$conds" 'PodReadyToStartContainers=False/ Initialized=True/ Ready=False/PodCompleted ContainersReady=False/PodCompleted PodScheduled=True/')" "$conds"
ev=$(k get events --field-selector involvedObject.name=once -o jsonpath='{range .items[*]}{.reason} {end}')
check "once events" "$(ok=0; for r in Scheduled Pulled Created Started; do grep -qw $r <<<"$ev" || ok=1; done; echo $ok)" "$ev"
check "once logs" "$(is "$(k logs once)" done-once)" "$(k logs once 2>&1)"

# ---- init containers run in order, then the main container
waitjp inits '{.status.phase}' '^Succeeded$' 30
check "init order" "$(is "$(k logs inits)" 12)" "$(k logs inits 2>&1)"
st=$(jp inits '{range .status.initContainerStatuses[*]}{.name}:{.state.terminated.reason} {end}')
check "init statuses" "$(is "$st" 'first:Completed second:Completed ')" "$st"

# ---- volumes and env
waitjp vols '{.status.phase}' '^Running$' 30
out=$(k exec vols -- sh -c 'cd /etc/kubesim-test; cat cm/sub/a.txt; echo; stat -L -c %a cm/sub/a.txt cm/c.txt sec/password; cat sec/password; echo; ls cm; cat down/name; echo; cat down/labels; echo; touch sec/x 2>/dev/null && echo writable')
want=$'alpha\n400\n440\n400\ns3cret\nc.txt\nsub\nvols\napp="vols"\ncolor="blue"'
check "configMap/secret/downwardAPI volumes" "$(is "$out" "$want")" "$out"
out=$(k exec vols -- sh -c 'echo $FIRST $EXPANDED $POD_NAME $NODE $COLOR $FROM_CM $FROM_SECRET $MEM_MI $KUBERNETES_SERVICE_HOST; test "$POD_IP" = "$(hostname -i 2>/dev/null || true)" && echo ip-ok')
check "env valueFrom" "$(has "$out" '^one one-two vols kubesim-node-0 blue beta s3cret 64 10\.250\.0\.1')" "$out"
ip=$(jp vols '{.status.podIP}')
out=$(k exec vols -- printenv POD_IP)
check "env podIP" "$(is "$out" "$ip")" "$out vs $ip"
sa=/var/run/secrets/kubernetes.io/serviceaccount
out=$(k exec vols -- sh -c "cat $sa/namespace; echo; test -s $sa/token && echo token; grep -c BEGIN $sa/ca.crt")
check "SA token volume" "$(is "$out" $'default\ntoken\n1')" "$out"

# ---- pods reach the API server at 10.250.0.1 with their token (in-cluster kubectl)
out=$(k exec vols -- kubectl get pods 2>&1); rc=$?
check "in-pod 403" "$([ $rc -ne 0 ] && grep -q 'forbidden: User "system:serviceaccount:default:default" cannot list resource "pods"' <<<"$out"; echo $?)" "rc $rc: $out"
k create role pod-reader --verb=get,list --resource=pods >/dev/null &&
  k create rolebinding pod-reader --role=pod-reader --serviceaccount=default:default >/dev/null
out=$(k exec vols -- kubectl get pod vols -o jsonpath='{.metadata.name}' 2>&1); rc=$?
check "in-pod 200" "$([ $rc -eq 0 ] && [ "$out" = vols ]; echo $?)" "rc $rc: $out"
out=$(k exec vols -- sh -c "curl -s --cacert $sa/ca.crt -H \"Authorization: Bearer \$(cat $sa/token)\" https://10.250.0.1:6443/api/v1/namespaces/default/pods/vols -o /dev/null -w %{http_code}")
check "in-pod curl 200" "$(is "$out" 200)" "$out"

# ---- restartPolicy OnFailure with back-off, --previous
waitjp crash '{.status.containerStatuses[0].restartCount}' '^[2-9]' 40
st=$(jp crash '{.status.containerStatuses[0].lastState.terminated.exitCode}/{.status.phase}')
check "crash restarts" "$(is "$st" 1/Running)" "$st"
ks_wait_for "jp crash '{.status.containerStatuses[0].state.waiting.reason}' | grep -qx CrashLoopBackOff" 30
check "CrashLoopBackOff" $? "$(jp crash '{.status.containerStatuses[0].state}')"
ev=$(k get events --field-selector involvedObject.name=crash,reason=BackOff -o jsonpath='{.items[0].message}')
check "BackOff event" "$(has "$ev" '^Back-off restarting failed container main in pod crash_default')" "$ev"
# As the kubelet: --previous is lastState's run; during CrashLoopBackOff the current logs
# are lastState's run too (the run that crashed last). The status read before and after
# brackets the two requests: a restart in between is seen, and the pair is read again.
lp_ok=1 lp_info=
for _ in 1 2 3 4 5; do
  s1=$(jp crash '{.status.containerStatuses[0].restartCount}/{.status.containerStatuses[0].state.waiting.reason}/{.status.containerStatuses[0].lastState.terminated.containerID}')
  cur=$(k logs crash 2>&1); prev=$(k logs crash --previous 2>&1)
  s2=$(jp crash '{.status.containerStatuses[0].restartCount}/{.status.containerStatuses[0].state.waiting.reason}/{.status.containerStatuses[0].lastState.terminated.containerID}')
  lp_info="status '$s1' then '$s2', cur '$cur' prev '$prev'"
  [ "$s1" = "$s2" ] && [[ $s1 == */CrashLoopBackOff/containerd://* ]] || { sleep 0.3; continue; }
  [ "$cur" = "$prev" ] && grep -qx 'run-[0-9]*' <<<"$prev"; lp_ok=$?
  break
done
check "logs --previous in CrashLoopBackOff" "$lp_ok" "$lp_info"

# ---- readiness: exec probe, tcpSocket probe
sleep 2
check "not ready before probe passes" "$(is "$(jp ready '{.status.conditions[?(@.type=="Ready")].status}')" False)" "$(jp ready '{.status.conditions}')"
k exec ready -- touch /tmp/ready
ks_wait_for "jp ready '{.status.conditions[?(@.type==\"Ready\")].status}' | grep -qx True" 15
check "exec probe -> Ready" $? "$(jp ready '{.status.conditions}')"
ks_wait_for "jp web '{.status.containerStatuses[0].ready}' | grep -qx true" 40
check "tcpSocket probe -> ready" $? "$(jp web '{.status.containerStatuses[0]}')"

# ---- hostnames and /etc/hosts between pods; pod-to-pod TCP
waitjp client '{.status.phase}' '^Running$' 30
webip=$(jp web '{.status.podIP}')
out=$(k exec client -- sh -c 'hostname; getent hosts web.sub.default.svc.cluster.local; getent hosts web.sub')
check "hostname + DNS stand-in" "$(has "$out" "^client"$'\n'"$webip +web\.sub\.default\.svc\.cluster\.local")" "$out"
out=$(k exec client -- curl -s -o /dev/null -w '%{http_code}' http://web.sub.default.svc:8080/)
check "pod to pod HTTP" "$(is "$out" 200)" "$out"
out=$(k exec web -- hostname -f 2>/dev/null || k exec web -- hostname)
check "web hostname" "$(has "$out" '^web')" "$out"
k delete pod web --grace-period=1 >/dev/null
ks_wait_for "! k exec client -- grep -q web.sub /etc/hosts" 15
check "hosts entry removed with the pod" $? "$(k exec client -- cat /etc/hosts)"

# ---- termination message
waitjp termmsg '{.status.phase}' '^Failed$' 30
st=$(jp termmsg '{.status.containerStatuses[?(@.name=="main")].state.terminated.exitCode}/{.status.containerStatuses[?(@.name=="main")].state.terminated.message}/{.status.containerStatuses[?(@.name=="fallback")].state.terminated.message}')
check "terminationMessage" "$(is "$st" 4/bye-message/last-words)" "$st"

# ---- unschedulable GPU, ImagePullBackOff
ks_wait_for "jp gpu '{.status.conditions[?(@.type==\"PodScheduled\")].reason}' | grep -qx Unschedulable" 15
msg=$(jp gpu '{.status.conditions[?(@.type=="PodScheduled")].message}')
check "GPU unschedulable" "$(has "$msg" '^0/1 nodes are available: 1 Insufficient nvidia\.com/gpu\.')" "$msg"
ev=$(k get events --field-selector involvedObject.name=gpu,reason=FailedScheduling -o jsonpath='{.items[0].message}')
check "FailedScheduling event" "$(has "$ev" 'Insufficient nvidia\.com/gpu')" "$ev"
check "gpu Pending" "$(is "$(jp gpu '{.status.phase}')" Pending)" "$(jp gpu '{.status.phase}')"
ks_wait_for "jp noimage '{.status.containerStatuses[0].state.waiting.reason}' | grep -qx ImagePullBackOff" 20
check "ImagePullBackOff" $? "$(jp noimage '{.status.containerStatuses[0].state}')"
out=$(k logs noimage 2>&1)
check "logs of unpulled image" "$(has "$out" 'is waiting to start: trying and failing to pull image')" "$out"

# ---- scheduling retry when capacity frees (node cpu allocatable 16 by default)
cpu=$(k get node kubesim-node-0 -o jsonpath='{.status.allocatable.cpu}')
half=$(( cpu / 2 + 1 ))
for p in big1 big2; do
  k run $p --image=debian:bookworm --restart=Never --overrides="{\"spec\":{\"terminationGracePeriodSeconds\":1,\"containers\":[{\"name\":\"$p\",\"image\":\"debian:bookworm\",\"command\":[\"sleep\",\"3600\"],\"resources\":{\"requests\":{\"cpu\":\"$half\"}}}]}}" >/dev/null
done
ks_wait_for "jp big2 '{.status.conditions[?(@.type==\"PodScheduled\")].message}' | grep -q 'Insufficient cpu'" 15
check "cpu unschedulable" $? "$(jp big2 '{.status.conditions}')"
k delete pod big1 >/dev/null
ks_wait_for "jp big2 '{.spec.nodeName}' | grep -qx kubesim-node-0" 20
check "scheduled after capacity freed" $? "$(jp big2 '{.status.conditions}')"

# ---- logs -f, -l, --tail, -c, --timestamps
out=$(timeout 30 "$KUBESIM" run --dir "$KS_DIR" -- kubectl logs -f ticker 2>&1)
check "logs -f follows to the end" "$(is "$out" $'line-1\nline-2\nline-3\nline-4\nline-5\nerr-line')" "$out"
out=$(k logs -l app=ticker --tail=2)
check "logs -l --tail" "$(is "$out" $'line-5\nerr-line')" "$out"
out=$(k logs ticker -c main --timestamps | head -1)
check "logs --timestamps" "$(has "$out" '^20[0-9-]+T[0-9:.]+Z line-1$')" "$out"

# ---- graceful termination: SIGTERM ignored -> SIGKILL after the grace period
k run stubborn --image=debian:bookworm --restart=Never --overrides='{"spec":{"terminationGracePeriodSeconds":3,"containers":[{"name":"stubborn","image":"debian:bookworm","command":["sh","-c","trap \"\" TERM; while :; do sleep 0.2; done"]}]}}' >/dev/null
k run polite --image=debian:bookworm --restart=Never --overrides='{"spec":{"terminationGracePeriodSeconds":20,"containers":[{"name":"polite","image":"debian:bookworm","command":["sh","-c","trap \"exit 0\" TERM; while :; do sleep 0.2; done"]}]}}' >/dev/null
k wait --for=condition=Ready pod/stubborn pod/polite --timeout=30s >/dev/null
t0=$(date +%s%N); k delete pod stubborn >/dev/null; t1=$(date +%s%N)
ms=$(( (t1 - t0) / 1000000 ))
check "grace then SIGKILL" "$([ $ms -ge 2800 ] && [ $ms -lt 10000 ]; echo $?)" "delete took ${ms} ms (grace 3 s)"
t0=$(date +%s%N); k delete pod polite >/dev/null; t1=$(date +%s%N)
ms=$(( (t1 - t0) / 1000000 ))
check "SIGTERM honoured" "$([ $ms -lt 5000 ]; echo $?)" "delete took ${ms} ms (grace 20 s)"
ev=$(k get events --field-selector involvedObject.name=stubborn,reason=Killing -o jsonpath='{.items[0].message}')
check "Killing event" "$(is "$ev" 'Stopping container stubborn')" "$ev"

# ---- faults: kill-containers, pause-node, delete-pod-now
ks_fault kill-containers default/ready >/dev/null || ks_fail "fault kill-containers"
ks_wait_for "jp ready '{.status.containerStatuses[0].restartCount}' | grep -qx 1" 20
st=$(jp ready '{.status.containerStatuses[0].lastState.terminated.exitCode}/{.status.containerStatuses[0].lastState.terminated.reason}')
check "kill-containers -> 137" "$(is "$st" 137/Error)" "$st"
ks_wait_for "jp client '{.status.conditions[?(@.type==\"Ready\")].status}' | grep -qx True" 10
ks_fault pause-node kubesim-node-0 >/dev/null || ks_fail "fault pause-node"
ks_wait_for "jp client '{.status.conditions[?(@.type==\"Ready\")].status}' | grep -qx False" 10
check "paused node: pod not Ready" $? "$(jp client '{.status.conditions}')"
st=$(k get node kubesim-node-0 -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')
check "paused node NotReady" "$(is "$st" Unknown)" "$st"
pid=$(ps -eo pid,args | awk '$2=="sleep" && $3=="3600" {print $1}' | while read -r p; do
  [ "$(readlink /proc/$p/ns/uts)" != "$(readlink /proc/self/ns/uts)" ] && grep -q '^State:.*T' /proc/$p/status && echo "$p"; done | head -1)
check "paused processes stopped" "$([ -n "$pid" ]; echo $?)" "no stopped sleep process"
ks_fault unpause-node kubesim-node-0 >/dev/null || ks_fail "fault unpause-node"
ks_wait_for "jp client '{.status.conditions[?(@.type==\"Ready\")].status}' | grep -qx True" 10
check "unpaused: Ready again" $? "$(jp client '{.status.conditions}')"
ks_fault delete-pod-now default/client >/dev/null || ks_fail "fault delete-pod-now"
out=$(k get pod client 2>&1)
check "delete-pod-now" "$(has "$out" 'NotFound')" "$out"

echo "kubesim_pods: $pass passed, $fail failed"
[ $fail -eq 0 ]
