#!/usr/bin/env bash
# timeout: 420
# 14 upstream deploy (#15 done-when): upstream's v2beta1 install with only the image swapped runs our operator (#15): a
# Namespace, CRD, ServiceAccount, ClusterRoles and Deployment shaped as upstream MPI
# Operator's deploy/v2beta1/mpi-operator.yaml (its object names and labels, namespace
# mpi-operator, its ClusterRole rules verb for verb, the aggregated kubeflow-mpijobs-*
# roles, a Deployment with no command and upstream's args `-alsologtostderr
# --lock-namespace=mpi-operator`; written here from those facts) with
# image: mpik8s/mpi-operator:latest. The CRD serves v2beta1 alone, as upstream's (its
# schema is our generated v2beta1 one). The operator runs as that pod under that
# ServiceAccount with kubesim's RBAC, and examples/v2beta1/pi.yaml runs to Succeeded:
# the operator's RBAC probe (SelfSubjectAccessReviews, evaluated by kubesim's RBAC) finds
# no serviceaccounts/roles/rolebindings and no patch, and runs in its limited mode: the
# launcher runs without API access (mpi-agent's no-API mode) once every worker is Ready,
# updates instead of patches; nothing the operator asks is refused (docs/controller.md,
# "RBAC probe", "Upstream v2beta1 and us").
set -u
: "${ROOT:=$(cd "$(dirname "$0")/../../.." && pwd)}"
. "$ROOT/tests/integration/controller_common.bash"
ks_skip_unless_root
ks_up
kc api-resources --api-group=apps 2>/dev/null | grep -q '^deployments' || ks_fail "kubesim serves no apps/v1 Deployments"
M=$KS_DIR/upstream-v2beta1.yaml
python3 - "$ROOT/manifests/base/crd.yaml" >"$M" <<'PY' || ks_fail "writing the upstream-shaped manifest"
import sys, yaml
LABELS = {"app": "mpi-operator", "app.kubernetes.io/component": "mpijob",
          "app.kubernetes.io/name": "mpi-operator", "kustomize.component": "mpi-operator"}
def meta(name, ns=None, extra=None):
    m = {"name": name, "labels": dict(LABELS, **(extra or {}))}
    if ns:
        m["namespace"] = ns
    return m
def rule(groups, resources, verbs):
    return {"apiGroups": groups, "resources": resources, "verbs": verbs}
ours = yaml.safe_load(open(sys.argv[1]))
v2 = [v for v in ours["spec"]["versions"] if v["name"] == "v2beta1"][0]
crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
       "metadata": meta("mpijobs.kubeflow.org"),
       "spec": {"group": "kubeflow.org", "scope": "Namespaced",
                "names": {"kind": "MPIJob", "listKind": "MPIJobList", "plural": "mpijobs",
                          "singular": "mpijob"},
                "versions": [{"name": "v2beta1", "served": True, "storage": True,
                              "subresources": {"status": {}}, "schema": v2["schema"]}]}}
jobs_rw = ["get", "list", "watch", "create", "delete", "deletecollection", "patch", "update"]
docs = [
    {"apiVersion": "v1", "kind": "Namespace", "metadata": meta("mpi-operator")},
    crd,
    {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": meta("mpi-operator", "mpi-operator")},
    {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
     "metadata": meta("kubeflow-mpijobs-admin", None,
                      {"rbac.authorization.kubeflow.org/aggregate-to-kubeflow-admin": "true"}),
     "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {
         "rbac.authorization.kubeflow.org/aggregate-to-kubeflow-mpijobs-admin": "true"}}]},
     "rules": []},
    {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
     "metadata": meta("kubeflow-mpijobs-edit", None,
                      {"rbac.authorization.kubeflow.org/aggregate-to-kubeflow-edit": "true",
                       "rbac.authorization.kubeflow.org/aggregate-to-kubeflow-mpijobs-admin": "true"}),
     "rules": [rule(["kubeflow.org"], ["mpijobs", "mpijobs/status"], jobs_rw)]},
    {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
     "metadata": meta("kubeflow-mpijobs-view", None,
                      {"rbac.authorization.kubeflow.org/aggregate-to-kubeflow-view": "true"}),
     "rules": [rule(["kubeflow.org"], ["mpijobs", "mpijobs/status"], ["get", "list", "watch"])]},
    {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
     "metadata": meta("mpi-operator"),
     "rules": [
         rule([""], ["configmaps", "secrets", "services"], ["create", "list", "watch", "update"]),
         rule([""], ["pods"], ["create", "get", "list", "watch", "delete", "update", "patch"]),
         rule([""], ["pods/exec"], ["create"]),
         rule([""], ["endpoints"], ["create", "get", "update"]),
         rule([""], ["events"], ["create", "patch"]),
         rule(["batch"], ["jobs"], ["create", "list", "update", "watch"]),
         rule(["apiextensions.k8s.io"], ["customresourcedefinitions"], ["create", "get"]),
         rule(["kubeflow.org"], ["mpijobs", "mpijobs/finalizers", "mpijobs/status"], ["*"]),
         rule(["coordination.k8s.io"], ["leases"], ["*"]),
         rule(["scheduling.incubator.k8s.io", "scheduling.sigs.dev", "scheduling.volcano.sh"],
              ["queues", "podgroups"], ["*"]),
         rule(["scheduling.x-k8s.io"], ["podgroups"], ["*"]),
         rule(["scheduling.k8s.io"], ["priorityclasses"], ["get", "list", "watch"])]},
    {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
     "metadata": meta("mpi-operator"),
     "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "mpi-operator"},
     "subjects": [{"kind": "ServiceAccount", "name": "mpi-operator", "namespace": "mpi-operator"}]},
    {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta("mpi-operator", "mpi-operator"),
     "spec": {"replicas": 1, "selector": {"matchLabels": dict(LABELS)},
              "template": {"metadata": {"annotations": {"sidecar.istio.io/inject": "false"},
                                        "labels": dict(LABELS)},
                           "spec": {"serviceAccountName": "mpi-operator", "containers": [{
                               "name": "mpi-operator", "image": "mpik8s/mpi-operator:latest",
                               "args": ["-alsologtostderr", "--lock-namespace=mpi-operator"]}]}}}},
]
yaml.safe_dump_all(docs, sys.stdout, sort_keys=False)
PY
kc create -f "$M" >/dev/null || ks_fail "kubectl create -f (upstream-shaped v2beta1 install)"
sel=app=mpi-operator
ks_wait_for "kc get pods -n mpi-operator -l $sel -o jsonpath='{.items[0].status.phase}' | grep -q Running" 60 \
  || ks_fail "operator pod not Running: $(kc get pods -n mpi-operator -o wide; kc logs -n mpi-operator -l $sel --tail 20)"
OP=$(kc get pods -n mpi-operator -l $sel -o jsonpath='{.items[0].metadata.name}')
args=$(kc get pods -n mpi-operator "$OP" -o jsonpath='{.spec.containers[0].args}')
[ "$args" = '["-alsologtostderr","--lock-namespace=mpi-operator"]' ] || ks_fail "operator pod args changed: $args"
kc create -f "$ROOT/examples/v2beta1/pi.yaml" >/dev/null || ks_fail "kubectl create -f examples/v2beta1/pi.yaml"
if ! ks_wait_for '[ "$(cond pi Succeeded status)" = True ]' 180; then
  kc get pods -A -o wide
  kc get mpijob pi -o yaml
  kc logs -n mpi-operator "$OP" | grep -iE 'forbidden|error|warn' | head -20
  ks_fail "pi did not succeed under upstream's install"
fi
kc get mpijob pi -o yaml | grep -qx 'apiVersion: kubeflow.org/v2beta1' || ks_fail "apiVersion is not kubeflow.org/v2beta1"
kc logs -n mpi-operator "$OP" | grep -q 'MPIJobs at kubeflow.org/v2beta1 (API discovery)' || ks_fail "no discovery log line"
kc logs -n mpi-operator "$OP" | grep -q "RBAC: the operator's role grants no create on serviceaccounts, roles or rolebindings; no patch on configmaps and jobs: limited mode" \
  || ks_fail "no limited-mode RBAC line: $(kc logs -n mpi-operator "$OP" | grep 'RBAC:')"
if kc logs -n mpi-operator "$OP" | grep -i 'forbidden'; then
  ks_fail "the operator asked for something upstream's ClusterRole does not grant (above)"
fi
# the hostfile ConfigMap follows the workers through list + PUT (upstream grants no patch)
OPUSER=system:serviceaccount:mpi-operator:mpi-operator
grep -qE "PUT /api/v1/namespaces/default/configmaps/pi-config 200 [0-9.]+ms $OPUSER\$" "$KS_DIR/apiserver.log" \
  || ks_fail "the operator never updated (PUT) the ConfigMap pi-config"
grep -qE "POST /apis/authorization.k8s.io/v1/selfsubjectaccessreviews 201 [0-9.]+ms $OPUSER\$" "$KS_DIR/apiserver.log" \
  || ks_fail "the operator made no SelfSubjectAccessReview"
PODNAME=$(kc get pods -l mpi_job_name=pi,mpi_role_type=launcher -o name | tail -1)
kc logs "$PODNAME" | grep -q 'pi is approximately 3.14' || ks_fail "launcher log lacks the program's output"
kc logs "$PODNAME" -c mpi-agent-init | grep -q 'no-API mode: workers from /etc/mpi/hostfile' || ks_fail "the launcher's init did not run in the no-API mode"
kc logs "$PODNAME" -c mpi-agent-init | grep -q '2/2 workers reachable through ssh (no-API mode)' || ks_fail "no-API init did not check the workers"
kc delete mpijob pi >/dev/null
echo "E2E-RESULT: PASS upstream's v2beta1 install (only the image swapped) ran pi to Succeeded (operator pod $OP, RBAC limited mode, launcher without API access)"
