# tests/lib/owner_refs.sh - whether the real API server's OwnerReferencesPermissionEnforcement
# admission knows MPIJobs yet. For some seconds after the CRD is created it refuses (403), for
# every user but cluster-admin, an object whose ownerReference to an MPIJob sets
# blockOwnerDeletion ("cannot set blockOwnerDeletion in this case because cannot find
# RESTMapping for APIVersion kubeflow.org/v2beta1"); an operator then retries with backoff.
# Users install the CRD long before their jobs: the e2e cases (tests/e2e/lib.sh) and the
# benchmarks (bench/peer_lib.bash) wait for it so that they measure the jobs, not this lag.

# owner_refs_probe KUBECTL NS SA_NAMESPACE SA_NAME: 0 when a server-side dry-run create, as that
# ServiceAccount, of a ConfigMap in NS owned (blockOwnerDeletion) by an MPIJob is accepted.
# KUBECTL: the caller's kubectl command or function.
owner_refs_probe() {
  printf '%s\n' "apiVersion: v1
kind: ConfigMap
metadata:
  name: owner-refs-probe
  namespace: $2
  ownerReferences: [{apiVersion: kubeflow.org/v2beta1, kind: MPIJob, name: owner-refs-probe, uid: 00000000-0000-0000-0000-000000000000, controller: true, blockOwnerDeletion: true}]" |
    "$1" create --dry-run=server --as="system:serviceaccount:$3:$4" -f - >/dev/null 2>&1
}
