#!/usr/bin/env bash
# timeout: 240
# kubesim controllers with real pods (node side's kubelet) and the real kubectl: the Job
# controller (Complete, BackoffLimitExceeded, DeadlineExceeded, suspend/resume,
# ttlSecondsAfterFinished, a pod deleted without grace counted as a failure), endpoints of
# a headless Service, and API-server behaviour under faults: restart-apiserver drops
# watches, a watch from a compacted resourceVersion gets 410 Expired.
set -u
: "${ROOT:=$(cd "$(dirname "$0")/../.." && pwd)}"
. "$ROOT/tests/lib/kubesim.sh"
ks_skip_unless_root
command -v kubectl >/dev/null || { echo "skip: kubectl not installed"; exit 77; }
[ -f "$ROOT/tests/kubesim/sim/kubelet.py" ] || { echo "skip: kubesim has no node side"; exit 77; }

pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
k() { timeout 60 "$KUBESIM" run --dir "$KS_DIR" -- kubectl "$@"; }
# is WANT "$(cmd)": compare a command's output
is() {
  local want=$1 got
  shift
  got=$("$@" 2>&1)
  if [ "$got" = "$want" ]; then ok; else bad "$* -> '$got' (want '$want')"; fi
}

ks_up --set watch_window=40
k apply -f - >/dev/null <<'EOF' || ks_fail "apply jobs"
apiVersion: batch/v1
kind: Job
metadata: {name: ok}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: main, image: busybox, command: [sh, -c, "echo done; exit 0"]}]
---
apiVersion: batch/v1
kind: Job
metadata: {name: ttl}
spec:
  ttlSecondsAfterFinished: 1
  template:
    spec:
      restartPolicy: Never
      containers: [{name: main, image: busybox, command: ["true"]}]
---
apiVersion: batch/v1
kind: Job
metadata: {name: bad}
spec:
  backoffLimit: 1
  template:
    spec:
      restartPolicy: Never
      containers: [{name: main, image: busybox, command: [sh, -c, "echo failing >&2; exit 3"]}]
---
apiVersion: batch/v1
kind: Job
metadata: {name: slow}
spec:
  activeDeadlineSeconds: 2
  template:
    spec:
      restartPolicy: Never
      terminationGracePeriodSeconds: 1
      containers: [{name: main, image: busybox, command: [sleep, "60"]}]
---
apiVersion: batch/v1
kind: Job
metadata: {name: sus}
spec:
  suspend: true
  template:
    spec:
      restartPolicy: Never
      containers: [{name: main, image: busybox, command: ["true"]}]
EOF

# success, logs, ttl
is "job.batch/ok condition met" k wait --for=condition=Complete job/ok --timeout=40s
is "done" k logs job/ok
is "1" k get job ok -o 'jsonpath={.status.succeeded}'
is "True True" k get job ok \
  -o 'jsonpath={.status.conditions[?(@.type=="SuccessCriteriaMet")].status} {.status.conditions[?(@.type=="Complete")].status}'
ks_wait_for "! k get job ttl" 40 && ok || bad "ttlSecondsAfterFinished did not delete job ttl"
ks_wait_for "[ -z \"\$(k get pods -l job-name=ttl -o name)\" ]" 20 && ok || bad "pods of job ttl left behind"

# failures
is "job.batch/bad condition met" k wait --for=condition=Failed job/bad --timeout=60s
is "BackoffLimitExceeded 2" k get job bad \
  -o 'jsonpath={.status.conditions[?(@.type=="Failed")].reason} {.status.failed}'
is "2" bash -c "$(declare -f k); KUBESIM=$KUBESIM KS_DIR=$KS_DIR; k get pods -l job-name=bad --no-headers | grep -c ' Error '"
is "job.batch/slow condition met" k wait --for=condition=Failed job/slow --timeout=40s
is "DeadlineExceeded" k get job slow -o 'jsonpath={.status.conditions[?(@.type=="Failed")].reason}'
ks_wait_for "[ -z \"\$(k get pods -l job-name=slow -o name)\" ]" 20 && ok || bad "deadline: pod not killed"

# suspend / resume
is "" k get pods -l job-name=sus -o name
is "True" k get job sus -o 'jsonpath={.status.conditions[?(@.type=="Suspended")].status}'
is "job.batch/sus patched" k patch job sus --type=merge -p '{"spec":{"suspend":false}}'
is "job.batch/sus condition met" k wait --for=condition=Complete job/sus --timeout=40s

# a running pod deleted without grace counts as a failure and is replaced
k create job victim --image=busybox -- sleep 60 >/dev/null || bad "create job victim"
ks_wait_for "k get pods -l job-name=victim -o jsonpath='{.items[0].status.phase}' | grep -q Running" 30 \
  || bad "victim pod never ran"
p=$(k get pods -l job-name=victim -o 'jsonpath={.items[0].metadata.name}')
ks_fault delete-pod-now "default/$p" && ok || bad "fault delete-pod-now"
ks_wait_for "[ \"\$(k get job victim -o jsonpath='{.status.failed}')\" = 1 ]" 20 && ok \
  || bad "deleted pod not counted as failed: $(k get job victim -o jsonpath='{.status}')"
ks_wait_for "k get pods -l job-name=victim -o name | grep -v $p | grep -q pod/" 20 && ok \
  || bad "no replacement pod"
k delete job victim >/dev/null || bad "delete job victim"
ks_wait_for "[ -z \"\$(k get pods -l job-name=victim -o name)\" ]" 30 && ok || bad "victim pods left"

# headless service endpoints
k apply -f - >/dev/null <<'EOF' || ks_fail "apply service"
apiVersion: v1
kind: Service
metadata: {name: w}
spec:
  clusterIP: None
  selector: {app: w}
---
apiVersion: v1
kind: Pod
metadata: {name: w-0, labels: {app: w}}
spec:
  hostname: w-0
  subdomain: w
  containers: [{name: main, image: busybox, command: [sleep, "60"]}]
EOF
ks_wait_for "k get endpoints w -o jsonpath='{.subsets[0].addresses[0].ip}' | grep -q '^10\\.250\\.'" 30 \
  && ok || bad "endpoints of w: $(k get endpoints w -o yaml)"
is "w-0 w-0" k get endpoints w \
  -o 'jsonpath={.subsets[0].addresses[0].hostname} {.subsets[0].addresses[0].targetRef.name}'
is "$(k get pod w-0 -o 'jsonpath={.status.podIP}')" k get endpoints w \
  -o 'jsonpath={.subsets[0].addresses[0].ip}'

# watch from a compacted resourceVersion: 410 Expired as a watch ERROR event
list_rv() { k get --raw "$1" | grep -o '"resourceVersion":"[0-9]*"' | head -1 | tr -dc 0-9; }
rv=$(list_rv /api/v1/namespaces/default/configmaps)
[ -n "$rv" ] || bad "no list resourceVersion"
for i in $(seq 1 45); do echo "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"c$i\"}}"; done \
  | k create -f - >/dev/null || bad "create configmaps"
out=$(k get --raw "/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=$rv&timeoutSeconds=2")
if grep -q '"type":"ERROR".*"code":410' <<<"$out" && grep -q '"reason":"Expired"' <<<"$out"; then ok;
else bad "watch from compacted RV: ${out:0:300}"; fi
out=$(k get --raw "/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=$(list_rv /api/v1/namespaces/default/configmaps)&timeoutSeconds=1")
[ -z "$out" ] && ok || bad "watch from current RV replayed: ${out:0:200}"

# restart-apiserver drops open watches; the API answers again afterwards
(k get pods -w --request-timeout=60s >"$KS_DIR/w.out" 2>&1; echo "rc=$?" >>"$KS_DIR/w.out") &
wpid=$!
# kubectl prints the current list, then opens the watch: wait for the list, then a moment
ks_wait_for "[ -s '$KS_DIR/w.out' ]" 30 || bad "kubectl get -w printed nothing"
sleep 2
ks_fault restart-apiserver && ok || bad "fault restart-apiserver"
if ks_wait_for "grep -q '^rc=' '$KS_DIR/w.out'" 15; then ok; else bad "watch survived a restart"; kill $wpid; fi
is "default" k get ns default -o 'jsonpath={.metadata.name}'
wait $wpid 2>/dev/null

echo "kubesim_jobs: $pass checks passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -ge 25 ]
