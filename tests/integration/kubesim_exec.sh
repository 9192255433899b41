#!/usr/bin/env bash
# timeout: 240
# `kubectl exec` against kubesim pods (real kubectl, WebSocket v5) plus an independent
# aiohttp client for v4 / base64 / 403 / ping: exit codes 0, 3, 255, killed by signal
# (137, 143), command not found (InternalError), stdin to EOF (10 MB through wc -c and
# sha256sum), large stdout/stderr checksums, the container's env/workingDir/user (not
# the caller's), the pod's namespaces (hostname, private /tmp), container selection
# errors, completed pods, a tty, and the exec-drop-after fault.
set -u
: "${ROOT:=$(cd "$(dirname "$0")/../.." && pwd)}"
. "$ROOT/tests/lib/kubesim.sh"
ks_skip_unless_root
command -v kubectl >/dev/null || { echo "skip: kubectl not installed"; exit 77; }
WSEXEC=$ROOT/tests/integration/kubesim_data/wsexec.py
pass=0
fail=0

check() {   # check NAME COND_RESULT(0/1) DETAIL
  if [ "$2" -eq 0 ]; then pass=$((pass + 1)); else echo "FAIL: $1: $3"; fail=$((fail + 1)); fi
}
kx() { timeout 60 "$KUBESIM" run --dir "$KS_DIR" -- kubectl exec "$@"; }

ks_up
W=$(mktemp -d) || ks_fail mktemp
ks_on_exit "rm -rf $W"
ks_kubectl apply -f - >/dev/null <<'YAML' || ks_fail "apply"
apiVersion: v1
kind: Pod
metadata: {name: ex}
spec:
  containers:
  - name: main
    image: debian:bookworm
    command: [sh, -c, "echo from-container > /tmp/marker; exec sleep 3600"]
    workingDir: /tmp/work
    env:
    - {name: MYVAR, value: my-value}
---
apiVersion: v1
kind: Pod
metadata: {name: two}
spec:
  containers:
  - {name: a, image: debian:bookworm, command: [sleep, "3600"]}
  - name: b
    image: debian:bookworm
    command: [sleep, "3600"]
    securityContext: {runAsUser: 1000}
---
apiVersion: v1
kind: Pod
metadata: {name: done}
spec:
  restartPolicy: Never
  containers:
  - {name: main, image: debian:bookworm, command: ["true"]}
YAML
ks_kubectl wait --for=condition=Ready pod/ex pod/two --timeout=60s >/dev/null || ks_fail "pods not Ready"

# exit codes
kx ex -- true; check "exit 0" $? "rc $?"
out=$(kx ex -- sh -c 'echo out; exit 3' 2>&1); rc=$?
check "exit 3" $([ $rc -eq 3 ] && grep -q 'command terminated with exit code 3' <<<"$out"; echo $?) "rc $rc: $out"
kx ex -- sh -c 'exit 255' 2>/dev/null; rc=$?; check "exit 255" $([ $rc -eq 255 ]; echo $?) "rc $rc"
kx ex -- sh -c 'kill -9 $$' 2>/dev/null; rc=$?; check "SIGKILL -> 137" $([ $rc -eq 137 ]; echo $?) "rc $rc"
kx ex -- sh -c 'kill -TERM $$' 2>/dev/null; rc=$?; check "SIGTERM -> 143" $([ $rc -eq 143 ]; echo $?) "rc $rc"
out=$(kx ex -- no-such-command 2>&1); rc=$?
check "not found" $([ $rc -eq 1 ] && grep -q 'Internal error occurred: .*executable file not found' <<<"$out"; echo $?) "rc $rc: $out"

# stdin to EOF and large streams
head -c 10485760 /dev/urandom > "$W/in"
out=$(kx -i ex -- wc -c < "$W/in"); check "stdin wc -c" $([ "$out" = "10485760" ]; echo $?) "got '$out'"
want=$(sha256sum < "$W/in" | cut -d' ' -f1)
got=$(kx -i ex -- sha256sum < "$W/in" | cut -d' ' -f1)
check "stdin sha256" $([ "$want" = "$got" ]; echo $?) "$want != $got"
want=$(seq 1 3000000 | sha256sum | cut -d' ' -f1)
got=$(kx ex -- seq 1 3000000 | sha256sum | cut -d' ' -f1)
check "stdout 20 MB sha256" $([ "$want" = "$got" ]; echo $?) "$want != $got"
want=$(seq 1 300000 | sha256sum | cut -d' ' -f1)
got=$(kx ex -- sh -c 'seq 1 300000 >&2' 2>&1 >/dev/null | sha256sum | cut -d' ' -f1)
check "stderr sha256" $([ "$want" = "$got" ]; echo $?) "$want != $got"
out=$(kx -i ex -- cat < /dev/null); rc=$?
check "empty stdin EOF" $([ $rc -eq 0 ] && [ -z "$out" ]; echo $?) "rc $rc '$out'"

# the container's environment, not the caller's; its namespaces and working directory
out=$(CALLER_ONLY=leak timeout 60 "$KUBESIM" run --dir "$KS_DIR" -- env CALLER_ONLY=leak kubectl exec ex -- env)
check "container env" $(grep -qx 'MYVAR=my-value' <<<"$out" && grep -qx 'HOSTNAME=ex' <<<"$out" && ! grep -q CALLER_ONLY <<<"$out"; echo $?) "$out"
out=$(kx ex -- pwd); check "workingDir" $([ "$out" = /tmp/work ]; echo $?) "pwd '$out'"
out=$(kx ex -- hostname); check "hostname" $([ "$out" = ex ]; echo $?) "'$out'"
touch "/tmp/kubesim-exec-host-marker.$$"
out=$(kx ex -- sh -c "cat /tmp/marker; test -e /tmp/kubesim-exec-host-marker.$$ && echo host-tmp-visible")
rm -f "/tmp/kubesim-exec-host-marker.$$"
check "private /tmp" $([ "$out" = from-container ]; echo $?) "'$out'"
out=$(kx ex -- sh -c 'echo $$; cat /proc/1/cmdline | tr "\0" " "')
check "pid namespace" $(grep -q 'podinit.py' <<<"$out" && [ "$(head -1 <<<"$out")" -lt 100 ]; echo $?) "$out"

# containers
out=$(kx two -c b -- id -u); check "runAsUser" $([ "$out" = 1000 ]; echo $?) "'$out'"
out=$(kx two -- hostname 2>&1); check "default container" $(grep -q 'Defaulted container "a"' <<<"$out"; echo $?) "$out"
out=$(kx two -c nope -- true 2>&1); rc=$?
check "unknown container" $([ $rc -eq 1 ] && grep -q 'container nope is not valid for pod two' <<<"$out"; echo $?) "rc $rc: $out"
ks_wait_for "ks_kubectl get pod done -o jsonpath='{.status.phase}' | grep -qx Succeeded" 30
out=$(kx done -- true 2>&1); rc=$?
check "completed pod" $([ $rc -eq 1 ] && grep -q 'cannot exec into a container in a completed pod' <<<"$out"; echo $?) "rc $rc: $out"
out=$(timeout 60 "$KUBESIM" run --dir "$KS_DIR" -- script -qec "kubectl exec -it ex -- sh -c 'test -t 1 && echo is-a-tty'" /dev/null 2>&1 | tr -d '\r')
check "tty" $(grep -q 'is-a-tty$' <<<"$out"; echo $?) "$out"

# protocol details with an independent client
ws() { timeout 30 "$KUBESIM" run --dir "$KS_DIR" -- /usr/bin/python3 "$WSEXEC" "$KS_DIR/kubeconfig" default ex "$@"; }
j=$(ws v5.channel.k8s.io,v4.channel.k8s.io - sh -c 'echo hi; exit 3')
check "v5 status" $(python3 -c '
import json,sys; r=json.loads(sys.argv[1])
ok = r["protocol"]=="v5.channel.k8s.io" and r["first"]==[1,0] and r["stdout"]=="hi\n" and r["close"]==1000 and r["pong"] \
  and r["status"]["reason"]=="NonZeroExitCode" and r["status"]["details"]["causes"]==[{"reason":"ExitCode","message":"3"}]
sys.exit(0 if ok else 1)' "$j"; echo $?) "$j"
j=$(ws v4.channel.k8s.io hello head -c 5)
check "v4 stdin" $(python3 -c '
import json,sys; r=json.loads(sys.argv[1])
sys.exit(0 if r["protocol"]=="v4.channel.k8s.io" and r["stdout"]=="hello" and r["status"]=={"metadata":{},"status":"Success"} else 1)' "$j"; echo $?) "$j"
j=$(ws v4.base64.channel.k8s.io - sh -c 'echo b64 >&2')
check "v4 base64" $(python3 -c '
import json,sys; r=json.loads(sys.argv[1])
sys.exit(0 if r["protocol"]=="v4.base64.channel.k8s.io" and r["stderr"]=="b64\n" and r["status"]["status"]=="Success" else 1)' "$j"; echo $?) "$j"
j=$(ws v9.channel.k8s.io - true)
check "unsupported protocol 403" $(python3 -c '
import json,sys; sys.exit(0 if json.loads(sys.argv[1])["http"]==403 else 1)' "$j"; echo $?) "$j"

# fault: the stream drops after N output bytes, without a status
ks_fault exec-drop-after 1000 >/dev/null || ks_fail "fault exec-drop-after"
kx ex -- seq 1 100000 > "$W/dropped" 2>"$W/dropped.err"; rc=$?
size=$(stat -c %s "$W/dropped")
check "exec-drop-after" $([ $rc -ne 0 ] && [ "$size" -eq 1000 ]; echo $?) "rc $rc, $size bytes, $(cat "$W/dropped.err")"
ks_fault exec-drop-after 0 >/dev/null || ks_fail "fault exec-drop-after 0"
out=$(kx ex -- seq 1 100000 | wc -c); check "drop fault off" $([ "$out" -eq 588895 ]; echo $?) "$out bytes"

echo "kubesim_exec: $pass passed, $fail failed"
[ $fail -eq 0 ]
