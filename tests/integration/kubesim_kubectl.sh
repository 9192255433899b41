#!/usr/bin/env bash
# timeout: 900
# The real kubectl (the `kubectl` dispatcher and `kubectl.1.32` where present) against
# kubesim: a matrix of commands, each with its exit code and output asserted. Covers
# discovery, create/apply/re-apply/get/-o yaml/-o jsonpath/describe/label/annotate/patch,
# errors (NotFound, AlreadyExists, Invalid, 401, 403), CRDs (apply, printer columns,
# defaults and pruning, watch), a Job driven to BackoffLimitExceeded, cascading deletes,
# `kubectl wait`, `kubectl auth can-i`, service-account tokens and pagination.
set -u
: "${ROOT:=$(cd "$(dirname "$0")/../.." && pwd)}"
. "$ROOT/tests/lib/kubesim.sh"
ks_skip_unless_root
command -v kubectl >/dev/null || { echo "skip: kubectl not installed"; exit 77; }

T=$ROOT/tests/kubesim/testdata
pass=0
fail=0
OUT=

# expect RC REGEX ARGS...: run kubectl ARGS (stdout+stderr in $OUT), check rc and regex.
expect() {
  local want_rc=$1 pat=$2 t0
  shift 2
  t0=$(date +%s%N)
  OUT=$(timeout 40 "$KUBESIM" run --dir "$KS_DIR" -- "$KS_KUBECTL" "$@" 2>&1)
  local rc=$?
  if [ "$rc" -ne "$want_rc" ] || ! grep -Eq -- "$pat" <<<"$OUT"; then
    echo "FAIL [$KS_KUBECTL] kubectl $*"
    echo "     want rc $want_rc and /$pat/, got rc $rc:"
    sed 's/^/     | /' <<<"$OUT" | head -20
    fail=$((fail + 1))
    return 1
  fi
  [ -z "${KS_TIMING:-}" ] || echo "$(( ($(date +%s%N) - t0) / 1000000 )) ms: kubectl $*"
  pass=$((pass + 1))
  return 0
}

# expect_not REGEX ARGS...: rc 0 and output NOT matching REGEX.
expect_not() {
  local pat=$1
  shift
  OUT=$(timeout 40 "$KUBESIM" run --dir "$KS_DIR" -- "$KS_KUBECTL" "$@" 2>&1)
  local rc=$?
  if [ "$rc" -ne 0 ] || grep -Eq -- "$pat" <<<"$OUT"; then
    echo "FAIL [$KS_KUBECTL] kubectl $* (rc $rc; must not match /$pat/)"
    sed 's/^/     | /' <<<"$OUT" | head -20
    fail=$((fail + 1))
    return 1
  fi
  pass=$((pass + 1))
}

matrix() {
  local m=matrix
  # -- discovery and basics
  expect 0 'Server Version: v1\.32' version
  expect 0 '^default +Active' get ns
  expect 0 'mpi|jobs +batch/v1 +true +Job' api-resources
  expect 0 '"minor": ?"32"' get --raw /version
  expect 0 "namespace/$m created" create namespace $m
  ks_wait_for "ks_kubectl get sa default -n $m" 10 || { fail=$((fail + 1)); }
  # -- configmaps: create, errors, apply flow, label/annotate/patch
  expect 0 'configmap/cfg created' create configmap cfg -n $m --from-literal=k=v
  expect 1 'error: failed to create configmap: configmaps "cfg" already exists' \
    create configmap cfg -n $m --from-literal=k=v
  expect 0 '^v$' get configmap cfg -n $m -o 'jsonpath={.data.k}'
  expect 1 'Error from server \(NotFound\): configmaps "nope" not found' get configmap nope -n $m
  expect 0 'configmap/applied created' apply -f "$T/cm.yaml" -n $m
  expect 0 'configmap/applied unchanged' apply -f "$T/cm.yaml" -n $m
  expect 1 'Error from server \(AlreadyExists\): error when creating ".*cm.yaml": configmaps "applied" already exists' \
    create -f "$T/cm.yaml" -n $m
  sed 's/color: blue/color: green/' "$T/cm.yaml" >"$KS_DIR/cm2.yaml"
  expect 0 'configmap/applied configured' apply -f "$KS_DIR/cm2.yaml" -n $m
  expect 0 '^green$' get cm applied -n $m -o 'jsonpath={.data.color}'
  expect 0 'configmap/cfg labeled' label cm cfg -n $m tier=db
  expect 0 '^configmap/cfg$' get cm -n $m -l tier=db -o name
  expect 0 'configmap/cfg annotated' annotate cm cfg -n $m note=hello
  expect 0 'note: hello' get cm cfg -n $m -o yaml
  expect 0 'configmap/cfg patched' patch cm cfg -n $m --type=json \
    -p '[{"op":"replace","path":"/data/k","value":"w"}]'
  expect 0 '^w$' get cm cfg -n $m -o 'jsonpath={.data.k}'
  expect 0 'configmap/kube-root-ca.crt' get cm -n $m --chunk-size=1 -o name
  [ "$(wc -l <<<"$OUT")" -eq 3 ] || { echo "FAIL paginated list: $OUT"; fail=$((fail + 1)); }
  expect 0 'Labels: +tier=db' describe cm cfg -n $m
  expect 0 'configmap "cfg" deleted' delete cm cfg -n $m
  # -- CRD: apply, established, custom resources, printer columns, pruning/defaults, watch
  expect 0 'customresourcedefinition.apiextensions.k8s.io/mpijobs.kubeflow.org created' \
    apply -f "$T/mpijob-crd.yaml"
  expect 0 'condition met' wait --for=condition=Established crd/mpijobs.kubeflow.org \
    --timeout=10s
  expect 0 'mpijob.kubeflow.org/pi created' apply -f "$T/mpijob.yaml" -n $m
  expect 0 'mpijob.kubeflow.org/pi unchanged' apply -f "$T/mpijob.yaml" -n $m
  expect 0 'NAME +WORKERS +SLOTS +STATE +AGE' get mpijobs -n $m
  grep -Eq '^pi +3 +2 ' <<<"$OUT" || { echo "FAIL printer columns row: $OUT"; fail=$((fail + 1)); }
  expect 0 '^OpenMPI/None/2$' get mj pi -n $m \
    -o 'jsonpath={.spec.mpiImplementation}/{.spec.runPolicy.cleanPodPolicy}/{.spec.runPolicy.backoffLimit}'
  expect 1 'spec.slotsPerWorker: Invalid value: 0' patch mj pi -n $m --type=merge \
    -p '{"spec":{"slotsPerWorker":0}}'
  expect 0 'mpijob.kubeflow.org/pi patched' patch mj pi -n $m --subresource=status \
    --type=merge -p '{"status":{"conditions":[{"type":"Running","status":"True"}]}}'
  expect 0 '^pi +3 +2 +Running ' get mpijobs -n $m --no-headers
  # watch: start `get -w`, create a second resource, the watch must print it
  (ks_kubectl get mpijobs -n $m -w --output-watch-events --request-timeout=6s \
    >"$KS_DIR/watch.out" 2>&1 &)
  sleep 1.5
  sed 's/name: pi$/name: pi2/; s/^  runPolicy:.*/  unknownField: pruned/; /^    backoffLimit/d' \
    "$T/mpijob.yaml" >"$KS_DIR/pi2.yaml"
  # kubectl's default --validate=strict: the unknown field is refused by name (fieldValidation=Strict);
  # --validate=warn warns and prunes it
  expect 1 'MPIJob in version "v2beta1" cannot be handled as a MPIJob: strict decoding error: unknown field "spec.unknownField"' \
    create -f "$KS_DIR/pi2.yaml" -n $m
  expect 0 'Warning: unknown field "spec.unknownField"' create --validate=warn -f "$KS_DIR/pi2.yaml" -n $m
  if ks_wait_for "grep -Eq 'ADDED +pi2' '$KS_DIR/watch.out'" 8; then pass=$((pass + 1)); else
    echo "FAIL watch output:"; cat "$KS_DIR/watch.out"; fail=$((fail + 1)); fi
  expect 0 '^/$' get mj pi2 -n $m -o 'jsonpath={.spec.unknownField}/{.spec.runPolicy}'
  expect 0 'mpijob.kubeflow.org "pi2" deleted' delete mj pi2 -n $m
  # -- Job controller: pods bound to a node nobody serves, phases driven by the test
  expect 0 'job.batch/ghost created' create -f "$T/job-ghost.yaml" -n $m
  ks_wait_for "ks_kubectl get pods -n $m -l job-name=ghost -o name | grep -q pod/" 10
  expect 0 'ghost-' get pods -n $m -l batch.kubernetes.io/job-name=ghost \
    -o 'jsonpath={.items[0].metadata.name}'
  local p1=$OUT
  expect 0 "pod/$p1 patched" patch pod "$p1" -n $m --subresource=status --type=merge \
    -p '{"status":{"phase":"Failed"}}'
  ks_wait_for "[ \$(ks_kubectl get pods -n $m -l job-name=ghost --field-selector=status.phase!=Failed -o name | wc -l) -eq 1 ]" 15
  expect 0 'ghost-' get pods -n $m -l job-name=ghost --field-selector=status.phase!=Failed \
    -o 'jsonpath={.items[0].metadata.name}'
  local p2=$OUT
  expect 0 "pod/$p2 patched" patch pod "$p2" -n $m --subresource=status --type=merge \
    -p '{"status":{"phase":"Failed"}}'
  expect 0 'job.batch/ghost condition met' wait --for=condition=Failed job/ghost -n $m \
    --timeout=20s
  expect 0 'BackoffLimitExceeded' describe job ghost -n $m
  expect 0 '^ghost +Failed +0/1' get job ghost -n $m --no-headers
  expect 0 '^2$' get job ghost -n $m -o 'jsonpath={.status.failed}'
  expect 0 'job.batch "ghost" deleted' delete job ghost -n $m --cascade=foreground
  expect 0 'No resources found' get pods -n $m -l job-name=ghost
  # -- orphan cascade keeps the pods, without owner references
  expect 0 'job.batch/ghost created' create -f "$T/job-ghost.yaml" -n $m
  ks_wait_for "ks_kubectl get pods -n $m -l job-name=ghost -o name | grep -q pod/" 10
  expect 0 'job.batch "ghost" deleted' delete job ghost -n $m --cascade=orphan
  expect 0 '^ghost-[a-z0-9]+ *$' get pods -n $m -l job-name=ghost \
    -o 'jsonpath={.items[*].metadata.name} {.items[*].metadata.ownerReferences}'
  expect 0 'deleted' delete pods -n $m -l job-name=ghost --grace-period=0 --force
  # -- authorization, tokens
  expect 0 '^yes$' auth can-i create pods -n $m
  expect 1 '^no$' auth can-i create pods -n $m --as=system:serviceaccount:$m:default
  expect 0 'serviceaccount/robot created' create sa robot -n $m
  expect 0 '^kubesim-sa\.' create token robot -n $m
  local tok=$OUT
  expect 1 "pods is forbidden: User \"system:serviceaccount:$m:robot\" cannot list resource \"pods\" in API group \"\" in the namespace \"$m\"" \
    --token="$tok" get pods -n $m
  expect 0 'role.rbac.authorization.k8s.io/reader created' create role reader -n $m \
    --verb=get,list --resource=pods
  expect 0 'rolebinding.rbac.authorization.k8s.io/robot-reader created' create rolebinding \
    robot-reader -n $m --role=reader --serviceaccount=$m:robot
  expect 0 'No resources found' --token="$tok" get pods -n $m
  expect 0 '^yes$' --token="$tok" auth can-i list pods -n $m
  expect 1 '^no$' --token="$tok" auth can-i delete pods -n $m
  expect 1 'error: You must be logged in to the server \(Unauthorized\)' \
    --token=not-a-token get pods -n $m
  # -- pods through the API (kubelet independent)
  expect 0 'pod/solo created' run solo -n $m --image=busybox --restart=Never \
    --overrides='{"spec":{"nodeName":"ghost-node"}}' -- true
  expect 0 '^default /var/run/secrets/kubernetes.io/serviceaccount$' get pod solo -n $m \
    -o 'jsonpath={.spec.serviceAccountName} {.spec.containers[0].volumeMounts[0].mountPath}'
  expect 0 'pod "solo" force deleted' delete pod solo -n $m --grace-period=0 --force
  # -- apps/v1 and pod-dependent commands (need the node side's kubelet)
  if [ -f "$ROOT/tests/kubesim/sim/kubelet.py" ]; then
    expect 0 'deployment.apps/web created' create deployment web -n $m --image=busybox \
      --replicas=2 -- sleep 300
    expect 0 'deployment "web" successfully rolled out' rollout status deployment/web -n $m \
      --timeout=60s
    expect 0 'deployment.apps/web scaled' scale deployment web -n $m --replicas=1
    expect 0 'deployment "web" successfully rolled out' rollout status deployment/web -n $m \
      --timeout=60s
    expect 0 '^web +1/1 +1 +1 ' get deploy web -n $m --no-headers
    expect 3 'command terminated with exit code 3' exec deploy/web -n $m -- \
      sh -c 'echo out; exit 3'
    expect 0 'pod/logger created' run logger -n $m --image=busybox --restart=Never \
      --labels=role=logger -- sh -c 'echo hello-logs'
    expect 0 'condition met' wait --for=jsonpath='{.status.phase}'=Succeeded pod/logger -n $m \
      --timeout=60s
    expect 0 '^hello-logs$' logs -l role=logger -n $m
    expect 0 'deployment.apps "web" deleted' delete deployment web -n $m
  fi
  # -- namespace deletion removes what is left
  expect 0 "namespace \"$m\" deleted" delete ns $m --timeout=30s
  expect 1 "namespaces \"$m\" not found" get ns $m
  expect 0 'mpijobs.kubeflow.org" deleted' delete crd mpijobs.kubeflow.org
}

bins=(kubectl)
k132=$(command -v kubectl.1.32 || true)
[ -n "$k132" ] || k132=$(dirname "$(readlink -f "$(command -v kubectl)")")/kubectl.1.32
[ -x "$k132" ] && bins+=("$k132")
for b in "${bins[@]}"; do
  KS_KUBECTL=$b
  ks_up
  start=$(date +%s%N)
  matrix
  echo "[$b] matrix done in $(( ($(date +%s%N) - start) / 1000000 )) ms"
  ks_down
done
echo "kubesim_kubectl: $pass checks passed, $fail failed (${#bins[@]} kubectl binaries)"
[ "$fail" -eq 0 ] && [ "$pass" -ge 70 ]
