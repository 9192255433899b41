#!/usr/bin/env bash
# timeout: 420
# The seed's journey with the real kubectl on a TLS 1.3-only API server, the operator running as a pod with
# its own ServiceAccount and least-privilege RBAC (in-cluster config):
#   kubectl create -f deploy/v1alpha2/mpi-operator.yaml; kubectl get crd;
#   kubectl create -f examples/v1alpha2/pi.yaml; kubectl get pods;
#   kubectl get -o yaml mpijobs pi  (apiVersion kubeflow.org/v1alpha2: deploy/v1alpha2 serves
#   v1alpha2 alone and the operator found it by API discovery; Created / Running False / Succeeded, the seed's
#   reasons and messages, replicaStatuses {Launcher: {succeeded: 1}, Worker: {}});
#   kubectl logs on the pod selected by mpi_job_name=pi,mpi_role_type=launcher;
#   the operator's /metrics: counters moved, job_info and the seed's job_infos
#   join label, promtool check metrics.
# JOURNEY_IMAGE: the example's image replaced by this one, whose pi is /home/mpiuser/pi (an
# mpik8s/mpi-pi variant: tests/k8s/cases/journey_openmpi5.sh runs it on Open MPI 5).
set -u
. "$(dirname "$0")/controller_common.bash"
ks_skip_unless_root
command -v promtool >/dev/null || { echo "skip: promtool (Debian prometheus) not installed"; exit 77; }
# an API server that accepts only TLS 1.3 (kube-apiserver --tls-min-version=VersionTLS13, as
# hardened profiles set): kubectl, the operator, the agent and mpi-rsh all speak it
ks_up --tls-min-version VersionTLS13
DEPLOY=$ROOT/deploy/v1alpha2/mpi-operator.yaml
if kc api-resources --api-group=apps 2>/dev/null | grep -q '^deployments'; then
  kc create -f "$DEPLOY" || ks_fail "kubectl create -f deploy/v1alpha2/mpi-operator.yaml"
  sel=app=mpi-operator
else
  # kubesim without apps/v1: everything but the Deployment, then the Deployment's own pod template as a Pod.
  echo "note: no apps/v1 Deployments on this kubesim; running the Deployment's pod template as a Pod"
  python3 - "$DEPLOY" "$KS_DIR/split" <<'PY' || ks_fail "splitting the deploy manifest"
import sys, yaml, json
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
rest = [d for d in docs if d["kind"] != "Deployment"]
dep = [d for d in docs if d["kind"] == "Deployment"][0]
pod = {"apiVersion": "v1", "kind": "Pod", "metadata": dict(dep["spec"]["template"]["metadata"],
       name="mpi-operator-0", namespace=dep["metadata"]["namespace"]), "spec": dep["spec"]["template"]["spec"]}
yaml.safe_dump_all(rest, open(sys.argv[2] + "-rest.yaml", "w"))
json.dump(pod, open(sys.argv[2] + "-pod.json", "w"))
PY
  kc create -f "$KS_DIR/split-rest.yaml" >/dev/null || ks_fail "creating namespace/CRD/RBAC"
  kc create -f "$KS_DIR/split-pod.json" >/dev/null || ks_fail "creating the operator pod"
  sel=app=mpi-operator
fi
kc get crd | grep -q '^mpijobs.kubeflow.org ' || ks_fail "kubectl get crd does not show mpijobs.kubeflow.org"
ks_wait_for "kc get pods -n mpi-operator -l $sel -o jsonpath='{.items[0].status.conditions[?(@.type==\"Ready\")].status}' | grep -q True" 60 \
  || ks_fail "operator pod not Ready: $(kc get pods -n mpi-operator -o wide; kc logs -n mpi-operator -l $sel --tail 20)"
OP=$(kc get pods -n mpi-operator -l $sel -o jsonpath='{.items[0].metadata.name}')
OPIP=$(kc get pods -n mpi-operator "$OP" -o jsonpath='{.status.podIP}')

EX=$ROOT/examples/v1alpha2/pi.yaml
if [ -n "${JOURNEY_IMAGE:-}" ]; then
  sed -e "s|image: mpik8s/nccl-benchmarks:latest|image: $JOURNEY_IMAGE|" -e 's|"mpi-pi"\]|"/home/mpiuser/pi"]|' "$EX" >"$KS_DIR/pi.yaml.in"
  [ "$(grep -c "image: $JOURNEY_IMAGE" "$KS_DIR/pi.yaml.in")" = 2 ] && grep -q '"/home/mpiuser/pi"\]' "$KS_DIR/pi.yaml.in" ||
    ks_fail "$EX no longer names mpik8s/nccl-benchmarks:latest twice and mpi-pi"
  EX=$KS_DIR/pi.yaml.in
fi
kc create -f "$EX" || ks_fail "kubectl create -f examples/v1alpha2/pi.yaml"
ks_wait_for "[ \$(kc get pods -l mpi_job_name=pi -o name | wc -l) -ge 3 ]" 60 || ks_fail "launcher and workers not created"
kc get pods | tee "$KS_DIR/pods.txt"
grep -q '^pi-worker-0 ' "$KS_DIR/pods.txt" && grep -q '^pi-worker-1 ' "$KS_DIR/pods.txt" && grep -q '^pi-launcher-' "$KS_DIR/pods.txt" \
  || ks_fail "kubectl get pods does not show the launcher and 2 workers"
wait_cond pi Succeeded True 180
# the workers' cleanup after success reaches replicaStatuses once they are gone (a worker that
# ignores SIGTERM goes at its terminationGracePeriodSeconds, 30, the default) and one sync later
# (pod events are batched for 1 s): wait for it, bounded by that grace period + 30 s (15 s missed
# it on Kubernetes 1.34.4 at load 8 in a CI rehearsal), then take the status the assertions read
rs_settled() { kc get -o yaml mpijobs pi | grep -A4 '^  replicaStatuses:' | tr -d ' ' | tr '\n' '|' | grep -q 'Worker:{}|'; }
ks_wait_for rs_settled 60 || true
kc get -o yaml mpijobs pi | tee "$KS_DIR/pi.yaml"
grep -qx 'apiVersion: kubeflow.org/v1alpha2' "$KS_DIR/pi.yaml" || ks_fail "kubectl get -o yaml mpijobs pi: apiVersion is not kubeflow.org/v1alpha2"
kc logs -n mpi-operator "$OP" | grep -q 'MPIJobs at kubeflow.org/v1alpha2 (API discovery)' \
  || ks_fail "the operator did not discover v1alpha2: $(kc logs -n mpi-operator "$OP" | head -5)"
kc logs -n mpi-operator "$OP" | grep -q 'RBAC: full mode' \
  || ks_fail "our deploy's ClusterRole did not give the RBAC probe's full mode: $(kc logs -n mpi-operator "$OP" | grep 'RBAC:')"
types=$(kc get mpijob pi -o jsonpath='{range .status.conditions[*]}{.type}:{.status}:{.reason} {end}')
[ "$types" = "Created:True:MPIJobCreated Running:False:MPIJobRunning Succeeded:True:MPIJobSucceeded " ] \
  || ks_fail "conditions: $types"
[ "$(cond pi Created message)" = "MPIJob default/pi is created." ] || ks_fail "Created message"
[ "$(cond pi Running message)" = "MPIJob default/pi is running." ] || ks_fail "Running message"
[ "$(cond pi Succeeded message)" = "MPIJob default/pi successfully completed." ] || ks_fail "Succeeded message"
grep -A4 '^  replicaStatuses:' "$KS_DIR/pi.yaml" | tr -d ' ' | tr '\n' '|' | grep -q '^replicaStatuses:|Launcher:|succeeded:1|Worker:{}|' \
  || ks_fail "replicaStatuses not {Launcher: {succeeded: 1}, Worker: {}}"
for f in startTime completionTime launchPhases.mpirunStarted launchPhases.workersReady; do
  [ -n "$(kc get mpijob pi -o jsonpath="{.status.$f}")" ] || ks_fail "status.$f missing"
done
# cleanPodPolicy Running (the example's): the workers are gone, the launcher pod stays for its log.
# Bound: their terminationGracePeriodSeconds (30, the default: a worker that ignores SIGTERM is
# killed only then; CI ci4 missed a 30 s bound by a second) + 30 s
ks_wait_for '[ -z "$(kc get pods -l mpi_job_name=pi,mpi_role_type=worker -o name)" ]' 60 || ks_fail "workers not cleaned up within 60 s"
PODNAME=$(kc get pods -l mpi_job_name=pi,mpi_role_type=launcher -o name)
kc logs "$PODNAME" | tee "$KS_DIR/launcher.log" | tail -3
grep -q 'pi is approximately 3.14' "$KS_DIR/launcher.log" || ks_fail "launcher log lacks the program's output"
# the launch waited once: mpi-agent run trusted what the init container recorded
grep -q 'as mpi-agent init found them' "$KS_DIR/launcher.log" || ks_fail "mpi-agent run waited for the workers again"

# an IPv6 address in brackets (K8S_IP_FAMILY=ipv6: tests/k8s/cases/ipv6.sh)
OPHOST=$OPIP; [[ $OPIP != *:* ]] || OPHOST="[$OPIP]"
m=$(ks_run curl -gsf "http://$OPHOST:8080/metrics") || ks_fail "no /metrics on the operator pod"
echo "$m" | promtool check metrics || ks_fail "promtool check metrics"
echo "$m" | grep -qx 'mpi_operator_jobs_created_total [1-9][0-9]*' || ks_fail "created_total did not move"
echo "$m" | grep -qx 'mpi_operator_jobs_successful_total [1-9][0-9]*' || ks_fail "successful_total did not move"
echo "$m" | grep -qx 'mpi_operator_is_leader 1' || ks_fail "is_leader"
lp=${PODNAME#pod/}
echo "$m" | grep -qx "mpi_operator_job_infos{launcher=\"$lp\",namespace=\"default\"} 1" || ks_fail "job_infos lacks launcher=$lp"
echo "$m" | grep -qx "mpi_operator_job_info{launcher=\"$lp\",namespace=\"default\"} 1" || ks_fail "job_info lacks launcher=$lp"
echo "$m" | grep -q '^mpi_operator_launch_latency_seconds_count 1$' || ks_fail "launch latency not observed"
kc delete -f "$EX" >/dev/null
echo "PASS: seed journey (operator pod $OP${JOURNEY_IMAGE:+, image $JOURNEY_IMAGE})"
