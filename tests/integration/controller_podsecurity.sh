#!/usr/bin/env bash
# timeout: 420
# Clusters that enforce Pod Security (kubesim enforces the namespace label
# pod-security.kubernetes.io/enforce as kube-apiserver's PodSecurity plugin does):
# - deploy/v2beta1/mpi-operator.yaml with its namespace labelled enforce=restricted: the
#   operator's pod is admitted and becomes Ready (the deploy manifests pass restricted);
# - in a namespace labelled enforce=restricted, an MPIJob whose own templates comply runs
#   to Succeeded over mpirun (what the operator adds, the mpi-agent-init container and the
#   volumes, passes restricted too);
# - a pod that does not comply is refused with the API server's wording (kubectl's output).
set -u
. "$(dirname "$0")/controller_common.bash"
ks_skip_unless_root
ks_up
DEPLOY=$ROOT/deploy/v2beta1/mpi-operator.yaml
python3 - "$DEPLOY" "$KS_DIR/deploy.yaml" <<'PY' || ks_fail "labelling the deploy manifest's namespace"
import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
for d in docs:
    if d["kind"] == "Namespace":
        d["metadata"].setdefault("labels", {})["pod-security.kubernetes.io/enforce"] = "restricted"
yaml.safe_dump_all(docs, open(sys.argv[2], "w"))
PY
kc create -f "$KS_DIR/deploy.yaml" >/dev/null || ks_fail "kubectl create -f deploy (restricted namespace)"
[ "$(kc get ns mpi-operator -o jsonpath='{.metadata.labels.pod-security\.kubernetes\.io/enforce}')" = restricted ] \
  || ks_fail "namespace mpi-operator is not labelled restricted"
ks_wait_for "kc get pods -n mpi-operator -l app=mpi-operator -o jsonpath='{.items[0].status.conditions[?(@.type==\"Ready\")].status}' | grep -q True" 90 \
  || ks_fail "operator pod not Ready in the restricted namespace: $(kc get pods -n mpi-operator -o wide; kc get events -n mpi-operator | tail -5)"

kc create namespace secure >/dev/null || ks_fail "create namespace secure"
kc label namespace secure pod-security.kubernetes.io/enforce=restricted >/dev/null || ks_fail "label namespace"

# a pod that does not comply: refused, as kube-apiserver words it
out=$(kc run bad -n secure --image=mpik8s/openmpi --restart=Never -- sleep 1 2>&1) && ks_fail "non-compliant pod admitted"
want='Error from server (Forbidden): pods "bad" is forbidden: violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false (container "bad" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container "bad" must set securityContext.capabilities.drop=["ALL"]), runAsNonRoot != true (pod or container "bad" must set securityContext.runAsNonRoot=true), seccompProfile (pod or container "bad" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")'
[ "$out" = "$want" ] || ks_fail "refusal: got '$out'"

# an MPIJob whose own templates comply runs to Succeeded
mpijob_yaml pi --ann mpi-k8s.io/transport=exec --ann mpi-k8s.io/worker-timeout=120 --slots 1 \
  --run-policy '{cleanPodPolicy: Running}' --restart Never --image mpik8s/nccl-benchmarks:latest --names pi,pi \
  --pod 'securityContext: {runAsNonRoot: true, runAsUser: 1000, runAsGroup: 1000, seccompProfile: {type: RuntimeDefault}}' \
  --container 'securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}' \
  --command '[mpirun, -np, "2", -x, PATH, -mca, pml, ob1, -mca, btl, "^openib", mpi-pi]' |
  kc create -n secure -f - >/dev/null || ks_fail "create MPIJob"
# a pod refused by Pod Security shows as the launcher Job's FailedCreate Event: fail at once
done_or_refused() {
  [ "$(kc get mpijob -n secure pi -o jsonpath='{.status.conditions[?(@.type=="Succeeded")].status}')" = True ] && return 0
  [ -z "$(kc get events -n secure --field-selector reason=FailedCreate -o name)" ] || return 0
  return 1
}
ks_wait_for done_or_refused 240 || true
refused=$(kc get events -n secure --field-selector reason=FailedCreate -o jsonpath='{.items[*].message}')
[ -z "$refused" ] || ks_fail "a pod of MPIJob secure/pi was refused: $refused"
ks_wait_for "[ \"\$(kc get mpijob -n secure pi -o jsonpath='{.status.conditions[?(@.type==\"Succeeded\")].status}')\" = True ]" 5 || {
  kc get pods -n secure -o wide >&2; kc get events -n secure | tail -20 >&2
  kc logs -n secure -l mpi_job_name=pi,mpi_role_type=launcher --all-containers --tail 30 >&2 || true
  ks_fail "MPIJob secure/pi did not succeed: $(kc get mpijob -n secure pi -o jsonpath='{.status.conditions}')"
}
L=$(kc get pods -n secure -l mpi_job_name=pi,mpi_role_type=launcher -o name | head -1)
kc logs -n secure "$L" | grep -q 'pi is approximately 3.14159' || ks_fail "launcher log has no pi"
# the launcher ran as the template's user, its init container too
[ "$(kc get -n secure "$L" -o jsonpath='{.spec.initContainers[0].securityContext.runAsNonRoot}')" = true ] \
  || ks_fail "mpi-agent-init without runAsNonRoot"
echo PASS
