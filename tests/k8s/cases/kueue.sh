#!/usr/bin/env bash
# timeout: 900
# Kueue manages our MPIJobs on the real cluster, through its own kubeflow.org/mpijob
# integration: Kueue (sigs.k8s.io/kueue at KUEUE_VERSION, cmd/kueue built from its Go module
# by tests/k8s/build.sh, in a `docker import`ed image) installed from its own config/default
# (read from the module, rendered by `kubectl kustomize`, only the image swapped), beside our
# operator installed from deploy/v2beta1. A ClusterQueue whose one ResourceFlavor carries a
# node label; MPIJobs labelled with a LocalQueue:
#  1. two jobs that do not fit together: Kueue's webhook creates both suspended, the first is
#     admitted, runs with the flavour's nodeSelector on every pod and succeeds; the second
#     makes no pod until then, is admitted after it and succeeds;
#     `kubectl mpijob why` says why the second waits (Kueue, queue, Workload, QuotaReserved);
#  2. preemption: a running low-priority job is evicted by a high-priority one (a
#     WorkloadPriorityClass); ours suspends it, leaving none of its pods; the high one runs,
#     then the low one is admitted again, resumes and succeeds.
# The quota is scaled to this 2-core node: 1500m CPU, jobs of 1 CPU (a launcher of 200m and 2
# workers of 400m); the real scheduler counts requests, so a 4-CPU queue of 3-CPU jobs could
# not run here.
set -u
export KUBE_BACKEND=k8s
. "$(dirname "$0")/../../integration/controller_common.bash"
. "$ROOT/tests/k8s/versions.env"
ks_skip_unless_root
command -v go >/dev/null || PATH=$PATH:/usr/local/go/bin

# ---- Kueue: its binary, image and install, from the Go module ----
KB=$("$ROOT/tests/k8s/build.sh" --bindir kueue)
[ -x "$KB/kueue" ] || ks_fail "no Kueue binary in $KB: run tests/k8s/build.sh kueue"
mod=$(cd "$("$ROOT/tests/k8s/build.sh" --module kueue)" && go list -m -f '{{.Dir}}' sigs.k8s.io/kueue) ||
  ks_fail "sigs.k8s.io/kueue v$KUEUE_VERSION: module not resolved"
[ -f "$mod/config/default/kustomization.yaml" ] || ks_fail "Kueue v$KUEUE_VERSION has no config/default in its module"
IMG=mpik8s/kueue:$KUEUE_VERSION
stamp=$(cat "$KB/.stamp")
if [ "$(docker image inspect -f '{{index .Config.Labels "mpik8s.stamp"}}' "$IMG" 2>/dev/null)" != "$stamp" ]; then
  t=$(mktemp -d) || ks_fail mktemp
  mkdir -p "$t/root/tmp" && chmod 1777 "$t/root/tmp" && cp "$KB/kueue" "$t/root/manager" &&
    tar -C "$t/root" -cf "$t/kueue.tar" manager tmp &&
    docker import --change 'ENTRYPOINT ["/manager"]' --change 'USER 65532:65532' \
      --change "LABEL mpik8s.stamp=$stamp" "$t/kueue.tar" "$IMG" >/dev/null
  r=$?; rm -rf "$t"; [ $r -eq 0 ] || ks_fail "docker import $IMG"
fi

ks_up
W=$KS_DIR/w; mkdir -p "$W"
ctl_deploy

ks_run kubectl kustomize "$mod/config/default" >"$W/kueue-upstream.yaml" || ks_fail "kubectl kustomize Kueue's config/default"
n=$(grep -c 'image: .*/kueue/kueue:' "$W/kueue-upstream.yaml")
[ "$n" = 1 ] || ks_fail "Kueue's install names $n kueue images, expected 1"
sed "s|image: .*/kueue/kueue:.*|image: docker.io/$IMG|" "$W/kueue-upstream.yaml" >"$W/kueue.yaml"
kc apply --server-side -f "$W/kueue.yaml" >"$W/kueue-apply.log" 2>&1 || { cat "$W/kueue-apply.log"; ks_fail "install Kueue"; }
kc -n kueue-system wait --for=condition=Available deployment/kueue-controller-manager --timeout=180s >/dev/null || {
  kc -n kueue-system get pods -o wide; kc -n kueue-system logs deploy/kueue-controller-manager --tail 40
  ks_fail "Kueue is not Available"
}

NODE=$(kc get nodes -o jsonpath='{.items[0].metadata.name}')
kc label node "$NODE" mpik8s.io/pool=kueue-a >/dev/null || ks_fail "label node"
cat >"$W/queues.yaml" <<'YAML'
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: pool-a}
spec:
  nodeLabels: {mpik8s.io/pool: kueue-a}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  preemption: {withinClusterQueue: LowerPriority}
  resourceGroups:
  - coveredResources: [cpu, memory]
    flavors:
    - name: pool-a
      resources:
      - {name: cpu, nominalQuota: 1500m}
      - {name: memory, nominalQuota: 4Gi}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq, namespace: default}
spec: {clusterQueue: cq}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {name: high}
value: 1000
YAML
# Kueue's webhooks answer once its internal certificates are in place: retry the create
ks_wait_for "kc apply -f $W/queues.yaml" 90 >/dev/null || { kc apply -f "$W/queues.yaml"; ks_fail "create the queues"; }
ks_wait_for "[ \"\$(kc get clusterqueue cq -o jsonpath='{.status.conditions[?(@.type==\"Active\")].status}')\" = True ]" 60 ||
  ks_fail "ClusterQueue cq not Active: $(kc get clusterqueue cq -o yaml)"

# job NAME SECONDS [PRIORITY]: an MPIJob for the LocalQueue whose 2 ranks sleep SECONDS
job() {
  mpijob_yaml "$1" --label kueue.x-k8s.io/queue-name=lq ${3:+--label "kueue.x-k8s.io/priority-class=$3"} --slots 1 \
    --run-policy '{cleanPodPolicy: Running}' --image mpik8s/openmpi:latest --names launcher,worker \
    --launcher-pod 'terminationGracePeriodSeconds: 5' --worker-pod 'terminationGracePeriodSeconds: 2' \
    --command "[mpirun, -np, \"2\", --bind-to, none, sh, -c, \"sleep $2; echo rank-done\"]" \
    --launcher-container 'env: [{name: OMPI_ALLOW_RUN_AS_ROOT, value: "1"}, {name: OMPI_ALLOW_RUN_AS_ROOT_CONFIRM, value: "1"}]' \
    --launcher-container 'resources: {requests: {cpu: 200m, memory: 64Mi}}' \
    --worker-container 'resources: {requests: {cpu: 400m, memory: 64Mi}}'
}
pods_of() { kc get pods -l "mpi_job_name=$1" --no-headers 2>/dev/null | wc -l; }
suspended() { kc get mpijob "$1" -o jsonpath='{.spec.runPolicy.suspend}'; }
dump() {
  kc get mpijobs,workloads,pods -o wide; kc get mpijob "$1" -o yaml
  kc -n kueue-system logs deploy/kueue-controller-manager --tail 30; kc -n mpi-operator logs deploy/mpi-operator --tail 30
}
succeeded() { wait_cond "$1" Succeeded True "$2" || { dump "$1"; ks_fail "$1 did not succeed"; }; }
ms() { date +%s%3N; }

log() { echo "kueue: $*"; }
log "1. two jobs that do not fit together run one after the other"
job k1 8 | kc create -f - >/dev/null || ks_fail "create k1"
job k2 2 | kc create -f - >/dev/null || ks_fail "create k2"
# Kueue's webhook suspends both at creation; k1 is admitted (unsuspended), k2 waits
ks_wait_for "[ \"\$(suspended k1)\" = false ]" 60 || { dump k1; ks_fail "k1 was not admitted"; }
[ "$(suspended k2)" = true ] || { dump k2; ks_fail "k2 is not suspended while k1 holds the quota"; }
ks_wait_for "[ \"\$(kc get pods -l mpi_job_name=k1,mpi_role_type=worker --no-headers | wc -l)\" = 2 ]" 60 ||
  { dump k1; ks_fail "k1's workers were not made"; }
sel=$(kc get pods -l mpi_job_name=k1 -o jsonpath='{range .items[*]}{.metadata.name}={.spec.nodeSelector.mpik8s\.io/pool}{"\n"}{end}')
echo "$sel" | grep -qv '=kueue-a$' && { echo "$sel"; ks_fail "a pod of k1 lacks the flavour's nodeSelector"; }
[ "$(echo "$sel" | grep -c '=kueue-a$')" -ge 3 ] || { echo "$sel"; ks_fail "k1: fewer than 3 pods carry the nodeSelector"; }
[ "$(cond k2 Suspended status)" = True ] || { dump k2; ks_fail "k2 has no Suspended=True condition while it waits"; }
[ "$(pods_of k2)" = 0 ] || { dump k2; ks_fail "k2 made pods while suspended"; }
# `kubectl mpijob why` names Kueue, the queue, the Workload and its QuotaReserved reason and message
wl_of() { kc get workloads -o jsonpath="{range .items[?(@.metadata.ownerReferences[0].name==\"$1\")]}{.metadata.name}{end}"; }
why_k2() {
  local wl msg
  wl=$(wl_of k2) && [ -n "$wl" ] || return 1
  msg=$(kc get workload "$wl" -o jsonpath='{.status.conditions[?(@.type=="QuotaReserved")].reason}: {.status.conditions[?(@.type=="QuotaReserved")].message}')
  [ "$(ks_run sh -c 'PATH="$0:$PATH"; exec kubectl mpijob why k2' "$BINDIR")" = \
    "MPIJob default/k2 is not admitted by Kueue (queue lq, workload $wl): $msg" ]
}
ks_wait_for why_k2 30 || { ks_run sh -c 'PATH="$0:$PATH"; exec kubectl mpijob why k2' "$BINDIR"; kc get workloads -o yaml | tail -40
  ks_fail "kubectl mpijob why k2 does not say Kueue has not admitted it"; }
# the same against its golden file (the Workload's name hash normalised; UPDATE_GOLDEN=1 rewrites it);
# the objects kept for the unit tests' fixtures (KS_KEEP=1: tests/unit/data/plugin/README)
ks_run sh -c 'PATH="$0:$PATH"; exec kubectl mpijob why k2' "$BINDIR" | tee "$W/k2.why.raw" |
  sed -E 's/mpijob-k2-[a-z0-9]{5}\b/mpijob-k2-<hash>/' >"$W/kueue-k2.why"
if [ -n "${UPDATE_GOLDEN:-}" ]; then cp "$W/kueue-k2.why" "$ROOT/tests/golden/kubectl_mpijob/kueue-k2.why"; fi
diff -u "$ROOT/tests/golden/kubectl_mpijob/kueue-k2.why" "$W/kueue-k2.why" >&2 ||
  ks_fail "kubectl mpijob why k2 differs from tests/golden/kubectl_mpijob/kueue-k2.why"
kc get mpijob k2 -o json >"$W/k2.json" && kc get workload "$(wl_of k2)" -o json >"$W/k2.workload.json" ||
  ks_fail "saving k2's objects"
ks_run sh -c 'PATH="$0:$PATH"; exec kubectl mpijob describe k2' "$BINDIR" | sed -n '/^Kueue:/,/^Events:/p' | grep -q 'QuotaReserved  *False' ||
  ks_fail "kubectl mpijob describe k2: no QuotaReserved False in its Kueue section"
succeeded k1 180
t_k1=$(ms)
ks_wait_for "[ \"\$(suspended k2)\" = false ]" 60 || { dump k2; ks_fail "k2 was not admitted after k1 finished"; }
log "   k2 admitted $(( $(ms) - t_k1 )) ms after k1 succeeded"
succeeded k2 180
[ "$(cond k2 Suspended status)" = False ] || ks_fail "k2 still Suspended after it ran"
kc delete mpijob k1 k2 --wait=true --timeout=60s >/dev/null || ks_fail "delete k1 k2"

log "2. a running low-priority job is preempted by a high-priority one, then resumes"
job low 20 | kc create -f - >/dev/null || ks_fail "create low"
ks_wait_for "[ \"\$(cond low Running status)\" = True ]" 120 || { dump low; ks_fail "low never ran"; }
job high 2 high | kc create -f - >/dev/null || ks_fail "create high"
t0=$(ms)
ks_wait_for "[ \"\$(suspended low)\" = true ]" 60 || { dump low; ks_fail "Kueue did not preempt low"; }
ks_wait_for "[ \"\$(cond low Suspended status)\" = True ]" 30 || { dump low; ks_fail "low: no Suspended condition"; }
ks_wait_for "[ \"\$(pods_of low)\" = 0 ]" 60 || { dump low; ks_fail "low's pods outlived its suspension"; }
log "   low suspended with no pods left $(( $(ms) - t0 )) ms after high was created"
succeeded high 180
succeeded low 240
[ "$(kc get workloads -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Finished")].status}{"\n"}{end}' | grep -c True)" = 2 ] ||
  { kc get workloads -o yaml | tail -60; ks_fail "Kueue does not see both workloads Finished"; }
echo ok
