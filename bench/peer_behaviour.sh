#!/usr/bin/env bash
# bench/peer_behaviour.sh [OUTDIR]: upstream MPI Operator v$MPI_OPERATOR_VERSION and ours side
# by side on one real cluster (tests/k8s), the same MPIJob in each, and a diff of what users
# see. As root, from the repository root; needs `make docker-images` and the cluster's
# components (tests/k8s/build.sh; mpi-operator is built here when missing).
#
#  - one CRD: upstream's (its deploy/v2beta1/mpi-operator.yaml, from its Go module), as a
#    user replacing upstream keeps it; upstream's operator from that install, image swapped
#    for mpik8s/upstream-mpi-operator (built from its module), --namespace=up; ours from our
#    deploy/v2beta1 without the CRD, renamed mpi-operator-ours, --namespace=ours (bench/peer_lib.bash)
#  - the job: upstream's pi shape over SSH (examples/v2beta1/pi-upstream-image.yaml as
#    tests/k8s/cases/upstream_ssh.sh runs it: mpik8s/mpi-pi, uid 1000, sshd on 2222), cpu
#    200m a pod so that both jobs fit the 2-core node together, cleanPodPolicy None so that
#    the pods stay to be compared; created in both namespaces at once
#  - recorded: the MPIJobs every 0.5 s, then every object and Event of each namespace
#  - OUTDIR/diff.txt (also printed): bench/peer_normalise.py's normalised unified diffs
set -u
export KUBE_BACKEND=k8s
ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/tests/integration/controller_common.bash"
. "$ROOT/bench/peer_lib.bash"
ks_skip_unless_root
OUTD=${1:-/tmp/peer-behaviour-$(date -u +%Y%m%dT%H%M%S)}
mkdir -p "$OUTD" || exit 1
peer_image
ks_up
W=$KS_DIR/w; mkdir -p "$W"
peer_install_upstream up
peer_install_ours ours
kc get crd mpijobs.kubeflow.org -o jsonpath='{.metadata.annotations.controller-gen\.kubebuilder\.io/version}' |
  grep -q . || ks_fail "the CRD is not upstream's (no controller-gen annotation)"

sed -e 's|image: mpioperator/mpi-pi:openmpi|image: mpik8s/mpi-pi:latest|' -e 's/cleanPodPolicy: Running/cleanPodPolicy: None/' \
    -e 's/limits: {cpu: 1, memory: 1Gi}/limits: {cpu: 200m, memory: 512Mi}/' \
    -e 's/^  name: pi-upstream$/  name: pi/' "$ROOT/examples/v2beta1/pi-upstream-image.yaml" >"$W/pi.yaml"
grep -q 'cpu: 200m' "$W/pi.yaml" && grep -q '^  name: pi$' "$W/pi.yaml" || ks_fail "the pi example changed shape"

# the sampler: both namespaces' MPIJobs every 0.5 s, one JSON line each
sampler() {
  while :; do
    t=$(date +%s%3N)
    kc get mpijobs -A -o json 2>/dev/null | jq -c --argjson t "$t" '{t: $t, items: .items}' >>"$OUTD/samples.jsonl"
    sleep 0.5
  done
}
: >"$OUTD/samples.jsonl"
sampler & SPID=$!
ks_on_exit "kill $SPID 2>/dev/null"
kc -n up create -f "$W/pi.yaml" >/dev/null & c1=$!
kc -n ours create -f "$W/pi.yaml" >/dev/null & c2=$!
wait $c1 && wait $c2 || ks_fail "create the pi jobs"
done_() { local s; s=$(kc -n "$1" get mpijob pi -o jsonpath='{.status.conditions[?(@.status=="True")].type}'); [[ $s == *Succeeded* || $s == *Failed* ]]; }
# a job that does not finish within PEER_WAIT s (default 180) is recorded as it stands
end=$(( $(date +%s) + ${PEER_WAIT:-180} ))
for ns in up ours; do
  ks_wait_for "done_ $ns" $(( end - $(date +%s) > 1 ? end - $(date +%s) : 1 )) ||
    echo "peer_behaviour: pi in $ns did not finish within ${PEER_WAIT:-180} s" | tee -a "$OUTD/unfinished.txt"
done
sleep 3
kill "$SPID" 2>/dev/null; wait "$SPID" 2>/dev/null
for ns in up ours; do
  kc -n "$ns" get mpijobs,jobs,pods,services,configmaps,secrets,serviceaccounts,roles,rolebindings -o json >"$OUTD/$ns-objects.json" ||
    ks_fail "get $ns objects"
  kc -n "$ns" get events -o json >"$OUTD/$ns-events.json" || ks_fail "get $ns events"
  kc -n "$ns" get pods -o wide >"$OUTD/$ns-pods.txt" 2>&1
  L=$(kc -n "$ns" get pods -l training.kubeflow.org/job-role=launcher -o name | tail -1)
  [ -n "$L" ] || L=$(kc -n "$ns" get pods -o name | grep launcher | tail -1)
  { kc -n "$ns" logs "$L" --all-containers --tail 30; echo "-- previous:"; kc -n "$ns" logs "$L" --all-containers --previous --tail 30; } >"$OUTD/$ns-launcher.log" 2>&1
done
kc -n mpi-operator logs deploy/mpi-operator >"$OUTD/upstream-operator.log" 2>&1
kc -n mpi-operator-ours logs deploy/mpi-operator-ours >"$OUTD/ours-operator.log" 2>&1
# neither operator touched the other's namespace
! grep -q '"ours/' "$OUTD/upstream-operator.log" || ks_fail "upstream's operator synced a job in namespace ours"
! grep -q '"up/\| up/' "$OUTD/ours-operator.log" || ks_fail "our operator logged a job in namespace up"
python3 "$ROOT/bench/peer_normalise.py" "$OUTD" >"$OUTD/diff.txt" || ks_fail "peer_normalise.py"
cat "$OUTD/diff.txt"
for ns in up ours; do echo "---- $ns: pods"; cat "$OUTD/$ns-pods.txt"; echo "---- $ns: launcher log"; cat "$OUTD/$ns-launcher.log"; done
[ ! -f "$OUTD/unfinished.txt" ] || cat "$OUTD/unfinished.txt"
echo "peer_behaviour: commit $(git -C "$ROOT" rev-parse --short HEAD), MPI Operator v$MPI_OPERATOR_VERSION, load $(cut -d' ' -f1-3 /proc/loadavg); files in $OUTD"
