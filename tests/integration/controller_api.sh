#!/usr/bin/env bash
# timeout: 420
# The operator against kubesim's API with the real kubectl, no pods running
# needed: the CRD is served (shortNames, both versions), an MPIJob becomes
# exactly the objects of the contract (names, labels, owner references, RBAC),
# (the operator reaches the API server through an HTTP CONNECT proxy, tinyproxy, named by
# the kubeconfig's proxy-url, as client-go would);
# malformed MPIJobs that the CRD's structural schema refuses are refused by
# `kubectl create` with the API server's message (strict decoding of unknown fields,
# types, required fields; both versions); 15+ that it accepts each end
# Failed/ValidationError with their own message naming the field (plus a Warning event)
# while a valid job created after them is still served, metrics pass promtool, deletion removes everything; the
# deploy files match manifests/base and both kustomizations build.
set -u
. "$(dirname "$0")/controller_common.bash"
"$ROOT/manifests/gen-deploy.sh" --check || ks_fail "deploy/*/mpi-operator.yaml out of date with manifests/base"
kubectl kustomize "$ROOT/manifests/base" | grep -q '^kind: CustomResourceDefinition' || ks_fail "kubectl kustomize base"
kubectl kustomize "$ROOT/manifests/overlays/kubeflow" | grep -q -- '--lock-namespace=kubeflow' || ks_fail "kustomize overlay"
ctl_cluster
ctl_proxy
ctl_start a --kubeconfig "$KS_DIR/kubeconfig-proxy" --monitoring-port 18181 --leader-elect=false
kc get crd | grep -q '^mpijobs.kubeflow.org' || ks_fail "kubectl get crd does not list mpijobs.kubeflow.org"
kc get mj >/dev/null && kc get mpij >/dev/null || ks_fail "shortNames mj/mpij not served"

# --- malformed jobs: refused by the API server (CRD schema) or by the controller ---
W='{"replicas":1,"template":{"spec":{"containers":[{"name":"w","image":"mpik8s/openmpi"}]}}}'
L='{"replicas":1,"template":{"spec":{"containers":[{"name":"l","image":"mpik8s/openmpi","command":["mpirun","true"]}]}}}'
job() { # name apiVersion extra-metadata spec-json
  printf '{"apiVersion":"kubeflow.org/%s","kind":"MPIJob","metadata":{"name":"%s"%s},"spec":%s}' "$2" "$1" "$3" "$4"
}
declare -a NAMES SPECS WANTS RNAMES RSPECS RWANTS
add() { NAMES+=("$1"); SPECS+=("$2"); WANTS+=("$3"); }
refuse() { RNAMES+=("$1"); RSPECS+=("$2"); RWANTS+=("$3"); }
add bad-no-launcher "$(job bad-no-launcher v2beta1 '' "{\"mpiReplicaSpecs\":{\"Worker\":$W}}")" "spec.mpiReplicaSpecs.Launcher: required"
add bad-worker-restart "$(job bad-worker-restart v2beta1 '' "{\"mpiReplicaSpecs\":{\"Launcher\":$L,\"Worker\":{\"replicas\":1,\"restartPolicy\":\"ExitCode\",\"template\":{\"spec\":{\"containers\":[{\"name\":\"w\",\"image\":\"x\"}]}}}}}")" "spec.mpiReplicaSpecs.Worker.restartPolicy"
add bad-launcher-restart "$(job bad-launcher-restart v2beta1 '' "{\"mpiReplicaSpecs\":{\"Launcher\":{\"replicas\":1,\"restartPolicy\":\"Always\",\"template\":{\"spec\":{\"containers\":[{\"name\":\"l\",\"image\":\"x\"}]}}},\"Worker\":$W}}")" "spec.mpiReplicaSpecs.Launcher.restartPolicy"
add bad-no-containers "$(job bad-no-containers v2beta1 '' "{\"mpiReplicaSpecs\":{\"Launcher\":{\"replicas\":1,\"template\":{\"spec\":{\"containers\":[]}}},\"Worker\":$W}}")" "spec.mpiReplicaSpecs.Launcher.template.spec.containers: at least one"
add bad-no-template "$(job bad-no-template v2beta1 '' "{\"mpiReplicaSpecs\":{\"Launcher\":{\"replicas\":1},\"Worker\":$W}}")" "spec.mpiReplicaSpecs.Launcher.template: required"
add bad-no-image "$(job bad-no-image v2beta1 '' "{\"mpiReplicaSpecs\":{\"Launcher\":$L,\"Worker\":{\"replicas\":1,\"template\":{\"spec\":{\"containers\":[{\"name\":\"w\"}]}}}}}")" "spec.mpiReplicaSpecs.Worker.template.spec.containers[0].image: required"
refuse bad-no-cname "$(job bad-no-cname v2beta1 '' "{\"mpiReplicaSpecs\":{\"Launcher\":{\"replicas\":1,\"template\":{\"spec\":{\"containers\":[{\"image\":\"x\"}]}}},\"Worker\":$W}}")" "spec.mpiReplicaSpecs.Launcher.template.spec.containers[0].name: Required value"
refuse bad-command-string "$(job bad-command-string v2beta1 '' "{\"mpiReplicaSpecs\":{\"Launcher\":{\"replicas\":1,\"template\":{\"spec\":{\"containers\":[{\"name\":\"l\",\"image\":\"x\",\"command\":\"mpirun -n 2\"}]}}},\"Worker\":$W}}")" "spec.mpiReplicaSpecs.Launcher.template.spec.containers[0].command: Invalid value: \"string\": spec.mpiReplicaSpecs.Launcher.template.spec.containers[0].command in body must be of type array: \"string\""
refuse bad-args-number "$(job bad-args-number v2beta1 '' "{\"mpiReplicaSpecs\":{\"Launcher\":{\"replicas\":1,\"template\":{\"spec\":{\"containers\":[{\"name\":\"l\",\"image\":\"x\",\"args\":[\"-n\",2]}]}}},\"Worker\":$W}}")" "spec.mpiReplicaSpecs.Launcher.template.spec.containers[0].args[1]: Invalid value: \"integer\""
refuse bad-worker-template "$(job bad-worker-template v2beta1 '' "{\"mpiReplicaSpecs\":{\"Launcher\":$L,\"Worker\":{\"replicas\":1,\"template\":\"pod\"}}}")" "spec.mpiReplicaSpecs.Worker.template: Invalid value: \"string\""
refuse bad-replica-type "$(job bad-replica-type v2beta1 '' "{\"mpiReplicaSpecs\":{\"Launcher\":$L,\"Workers\":$W}}")" "MPIJob in version \"v2beta1\" cannot be handled as a MPIJob: strict decoding error: unknown field \"spec.mpiReplicaSpecs.Workers\""
add bad-transport "$(job bad-transport v2beta1 ',"annotations":{"mpi-k8s.io/transport":"rdma"}' "{\"mpiReplicaSpecs\":{\"Launcher\":$L,\"Worker\":$W}}")" "metadata.annotations[mpi-k8s.io/transport]"
add bad-agent-run "$(job bad-agent-run v2beta1 ',"annotations":{"mpi-k8s.io/agent-run":"maybe"}' "{\"mpiReplicaSpecs\":{\"Launcher\":$L,\"Worker\":$W}}")" "metadata.annotations[mpi-k8s.io/agent-run]"
add bad-timeout "$(job bad-timeout v2beta1 ',"annotations":{"mpi-k8s.io/worker-timeout":"10m"}' "{\"mpiReplicaSpecs\":{\"Launcher\":$L,\"Worker\":$W}}")" "metadata.annotations[mpi-k8s.io/worker-timeout]"
add bad-ssh-port "$(job bad-ssh-port v2beta1 ',"annotations":{"mpi-k8s.io/ssh-port":"0"}' "{\"mpiReplicaSpecs\":{\"Launcher\":$L,\"Worker\":$W}}")" "metadata.annotations[mpi-k8s.io/ssh-port]"
add bad-managed-by "$(job bad-managed-by v2beta1 '' "{\"runPolicy\":{\"managedBy\":\"someone\"},\"mpiReplicaSpecs\":{\"Launcher\":$L,\"Worker\":$W}}")" "spec.runPolicy.managedBy"
add bad-ssh-path "$(job bad-ssh-path v2beta1 '' "{\"sshAuthMountPath\":\"home/.ssh\",\"mpiReplicaSpecs\":{\"Launcher\":$L,\"Worker\":$W}}")" "spec.sshAuthMountPath: expected an absolute path"
add bad-ssh-path-sh "$(job bad-ssh-path-sh v2beta1 '' "{\"sshAuthMountPath\":\"/root/.ssh;reboot\",\"mpiReplicaSpecs\":{\"Launcher\":$L,\"Worker\":$W}}")" "spec.sshAuthMountPath: \"/root/.ssh;reboot\" contains ';'"
refuse bad-sched-policy "$(job bad-sched-policy v2beta1 '' "{\"runPolicy\":{\"schedulingPolicy\":5},\"mpiReplicaSpecs\":{\"Launcher\":$L,\"Worker\":$W}}")" "spec.runPolicy.schedulingPolicy: Invalid value: \"integer\""
add bad-main-container "$(job bad-main-container v1alpha2 '' "{\"mainContainer\":\"nope\",\"mpiReplicaSpecs\":{\"Launcher\":$L,\"Worker\":$W}}")" "spec.mainContainer: no container named"
refuse bad-env-type "$(job bad-env-type v1alpha2 '' "{\"mpiReplicaSpecs\":{\"Launcher\":{\"replicas\":1,\"template\":{\"spec\":{\"containers\":[{\"name\":\"l\",\"image\":\"x\",\"env\":\"A=1\"}]}}},\"Worker\":$W}}")" "spec.mpiReplicaSpecs.Launcher.template.spec.containers[0].env: Invalid value: \"string\""
add bad-progress "$(job bad-progress v1alpha2 ',"annotations":{"mpi-k8s.io/progress-timeout":"-1"}' "{\"mpiReplicaSpecs\":{\"Launcher\":$L,\"Worker\":$W}}")" "metadata.annotations[mpi-k8s.io/progress-timeout]"
add bad-too-many "$(job bad-too-many v2beta1 '' "{\"mpiReplicaSpecs\":{\"Launcher\":$L,\"Worker\":{\"replicas\":20000,\"template\":{\"spec\":{\"containers\":[{\"name\":\"w\",\"image\":\"x\"}]}}}}}")" "spec.mpiReplicaSpecs.Worker.replicas: must be from 1 to 10000"
long=a-very-long-mpijob-name-that-makes-worker-names-too-long-x
add "$long" "$(job $long v2beta1 '' "{\"mpiReplicaSpecs\":{\"Launcher\":$L,\"Worker\":$W}}")" "which must be a DNS-1035 label"
# the typos of a new user (issue #15): refused by name in both versions, nothing created
CMD='{"name":"l","image":"mpik8s/openmpi","comand":["mpirun","true"]}'
for v in v2beta1 v1alpha2; do
  refuse bad-typo-$v "$(job bad-typo-$v $v '' "{\"slotPerWorker\":2,\"mpiReplicaSpecs\":{\"Launcher\":{\"replicas\":1,\"template\":{\"spec\":{\"containers\":[$CMD]}}},\"Worker\":$W}}")" \
    "MPIJob in version \"$v\" cannot be handled as a MPIJob: strict decoding error: unknown field \"spec.mpiReplicaSpecs.Launcher.template.spec.containers[0].comand\", unknown field \"spec.slotPerWorker\""
done
[ ${#NAMES[@]} -ge 15 ] || ks_fail "fewer than 15 malformed cases for the controller"
[ ${#RNAMES[@]} -ge 9 ] || ks_fail "fewer than 9 malformed cases for the API server"
for i in "${!RNAMES[@]}"; do
  out=$(echo "${RSPECS[$i]}" | kc create -f - 2>&1) && ks_fail "API accepted ${RNAMES[$i]}"
  case "$out" in *"${RWANTS[$i]}"*) ;; *) ks_fail "${RNAMES[$i]}: kubectl said: $out (want: ${RWANTS[$i]})";; esac
  kc get mpijob "${RNAMES[$i]}" >/dev/null 2>&1 && ks_fail "${RNAMES[$i]} exists although refused"
done
# --validate=warn: the same typos are warned about by name, pruned, and the job is served
echo "${RSPECS[$((${#RSPECS[@]} - 1))]}" | sed 's/bad-typo-v1alpha2/typo-warned/' | kc create --validate=warn -f - >"$KS_DIR/warn.out" 2>&1 \
  || ks_fail "create --validate=warn: $(cat "$KS_DIR/warn.out")"
grep -q 'Warning: unknown field "spec.slotPerWorker"' "$KS_DIR/warn.out" || ks_fail "no warning: $(cat "$KS_DIR/warn.out")"
[ -z "$(kc get mpijob typo-warned -o jsonpath='{.spec.slotPerWorker}{.spec.mpiReplicaSpecs.Launcher.template.spec.containers[0].comand}')" ] \
  || ks_fail "unknown fields not pruned"
kc delete mpijob typo-warned >/dev/null || ks_fail "delete typo-warned"
# kubectl explain renders the published schema, pod templates included
kc explain mpijob.spec.mpiReplicaSpecs | grep -q 'Launcher' || ks_fail "kubectl explain mpijob.spec.mpiReplicaSpecs"
kc explain mpijob.spec.mpiReplicaSpecs.Worker.template.spec.containers --api-version=kubeflow.org/v1alpha2 \
  | grep -q 'command.*<\[\]string>' || ks_fail "kubectl explain of the v1alpha2 worker containers"
for i in "${!NAMES[@]}"; do
  echo "${SPECS[$i]}" | kc create -f - >/dev/null || ks_fail "API refused ${NAMES[$i]} (the controller should judge it)"
done
# a valid job created after the malformed ones is still served
kc create -f - >/dev/null <<YAML || ks_fail "create good job"
apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata: {name: good, annotations: {mpi-k8s.io/transport: exec}}
spec:
  slotsPerWorker: 2
  mpiReplicaSpecs:
    Launcher: $L
    Worker: {"replicas":2,"template":{"spec":{"containers":[{"name":"w","image":"mpik8s/openmpi"}]}}}
YAML
ks_wait_for "kc get pod good-worker-1 && kc get job good-launcher" 30 || ks_fail "valid job not served; log: $(ctl_log a | tail -5)"
# one listing per poll (kubectl is slow on a loaded machine): wait until every bad job is Failed
nfailed() { kc get mpijobs -o jsonpath='{range .items[*]}{.metadata.name} {.status.conditions[?(@.type=="Failed")].status}{"\n"}{end}' | grep -c '^bad-.* True$\|^a-very.* True$'; }
ks_wait_for "[ \$(nfailed) -ge ${#NAMES[@]} ]" 90 || ks_fail "only $(nfailed) of ${#NAMES[@]} malformed jobs Failed"
kc get mpijobs -o json >"$KS_DIR/all.json" || ks_fail "list mpijobs"
kc get pods -o json >"$KS_DIR/pods.json" || ks_fail "list pods"
for i in "${!NAMES[@]}"; do
  python3 - "$KS_DIR/all.json" "$KS_DIR/pods.json" "${NAMES[$i]}" "${WANTS[$i]}" <<'PY' || ks_fail "${NAMES[$i]}"
import json, sys
items = {o["metadata"]["name"]: o for o in json.load(open(sys.argv[1]))["items"]}
pods = [p for p in json.load(open(sys.argv[2]))["items"] if p["metadata"].get("labels", {}).get("mpi_job_name") == sys.argv[3]]
name, want = sys.argv[3], sys.argv[4]
conds = {c["type"]: c for c in items[name]["status"]["conditions"]}
f = conds.get("Failed", {})
if f.get("status") != "True" or f.get("reason") != "ValidationError":
    sys.exit("%s: Failed condition %r" % (name, f))
if want not in f.get("message", ""):
    sys.exit('%s: message "%s" does not name "%s"' % (name, f.get("message"), want))
if pods:
    sys.exit("%s: pods were created for an invalid job" % name)
PY
done
nmsg=$(kc get mpijobs -o jsonpath='{range .items[*]}{.status.conditions[-1:].message}{"\n"}{end}' | grep -c 'is invalid')
[ "$nmsg" -ge ${#NAMES[@]} ] || ks_fail "expected ${#NAMES[@]} invalid messages, got $nmsg"
kc get events --field-selector reason=ValidationError -o name | grep -q . || ks_fail "no ValidationError Warning events"
# no retry loop: the invalid jobs' status does not change any more
rv1=$(kc get mpijob bad-no-launcher -o jsonpath='{.metadata.resourceVersion}'); sleep 3
rv2=$(kc get mpijob bad-no-launcher -o jsonpath='{.metadata.resourceVersion}')
[ "$rv1" = "$rv2" ] || ks_fail "invalid job keeps being updated ($rv1 -> $rv2)"

# --- the objects of the contract ---
kc get configmap good-config -o jsonpath='{.data.hostfile}' | grep -qx 'good-worker-1.good.default.svc slots=2' \
  || ks_fail "hostfile: $(kc get configmap good-config -o jsonpath='{.data.hostfile}')"
kc get svc good -o jsonpath='{.spec.clusterIP}' | grep -qx None || ks_fail "headless service"
kc get sa good-launcher >/dev/null && kc get rolebinding good-launcher >/dev/null || ks_fail "launcher SA/RoleBinding"
kc get role good-launcher -o jsonpath='{.rules[1].resourceNames}' | grep -q '"good-worker-1"' || ks_fail "Role resourceNames"
[ "$(kc get pod good-worker-0 -o jsonpath='{.metadata.labels.mpi_role_type}/{.spec.hostname}/{.spec.subdomain}')" = worker/good-worker-0/good ] \
  || ks_fail "worker pod labels/hostname"
[ "$(kc get job good-launcher -o jsonpath='{.spec.template.spec.initContainers[0].command}')" = '["mpi-agent","init"]' ] \
  || ks_fail "launcher init container"
[ "$(kc get job good-launcher -o jsonpath='{.spec.template.spec.containers[0].command[0]}')" = /opt/kube/mpi-agent ] \
  || ks_fail "launcher command not wrapped"
[ "$(kc get pod good-worker-0 -o jsonpath='{.metadata.ownerReferences[0].kind}')" = MPIJob ] || ks_fail "ownerReference"
[ "$(cond good Created message)" = "MPIJob default/good is created." ] || ks_fail "Created message"

# --- metrics ---
m=$(metrics 18181) || ks_fail "no /metrics"
echo "$m" | promtool check metrics || ks_fail "promtool check metrics failed"
created=$(metric 18181 mpi_operator_jobs_created_total); failed=$(metric 18181 mpi_operator_jobs_failed_total)
[ "$created" -ge $(( ${#NAMES[@]} + 1 )) ] || ks_fail "created_total $created"
[ "$failed" -ge ${#NAMES[@]} ] || ks_fail "failed_total $failed"
# jobs by state: each invalid job once, as failed (ValidationError), however often it was synced
inv=$(echo "$m" | awk '$1 == "mpi_operator_jobs{state=\"failed\"}" { print $2 }')
[ "$inv" = ${#NAMES[@]} ] || ks_fail "mpi_operator_jobs{state=failed} $inv, want ${#NAMES[@]}"
for f in mpi_operator_reconcile_errors_total mpi_operator_workqueue_depth process_resident_memory_bytes; do
  echo "$m" | grep -q "^$f " || ks_fail "no $f in /metrics"
done
ks_run curl -sf http://127.0.0.1:18181/healthz | grep -q ok || ks_fail healthz
ks_run curl -sf http://127.0.0.1:18181/readyz | grep -q ok || ks_fail readyz

# --- deletion cascades ---
kc delete mpijob good >/dev/null || ks_fail "delete"
# (pods may stay Terminating until a kubelet confirms: count only those not being deleted)
left() { kc get pods,jobs,cm,sa,role,rolebinding,svc -l training.kubeflow.org/job-name=good \
  -o jsonpath='{range .items[?(@.metadata.deletionTimestamp)]}{end}{range .items[*]}{.kind}/{.metadata.name}={.metadata.deletionTimestamp}{"\n"}{end}' | grep '=$'; }
ks_wait_for '[ -z "$(left)" ]' 40 || ks_fail "objects left after delete: $(left)"
kc get mpijobs -o name | grep -q . || ks_fail "invalid jobs vanished"
ctl_log a | grep -qE 'segfault|Aborted' && ks_fail "operator crashed"
n=$(grep -c 'CONNECT' "$KS_DIR/proxy.log")
[ "$n" -ge 1 ] || ks_fail "the operator did not go through the proxy named by proxy-url (no CONNECT in its log)"
echo "PASS (the operator's $n connections went through the proxy): ${#NAMES[@]} malformed jobs rejected with their own messages; objects, metrics, deletion OK"
