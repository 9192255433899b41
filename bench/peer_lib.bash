# bench/peer_lib.bash: upstream MPI Operator (github.com/kubeflow/mpi-operator at
# MPI_OPERATOR_VERSION) beside ours on one real cluster (tests/k8s), for bench/peer_*.sh.
# Source after tests/integration/controller_common.bash (KUBE_BACKEND=k8s).
#
#   peer_image                  build mpik8s/upstream-mpi-operator:$MPI_OPERATOR_VERSION
#                               (`docker import` of tests/k8s/build.sh mpi-operator's static
#                               binary, USER 65532, labelled with the build's stamp); before ks_up
#   peer_install_upstream NS    upstream's own deploy/v2beta1/mpi-operator.yaml (from its Go
#                               module): its CRD (the one CRD of the cluster), its RBAC, its
#                               Deployment with the image swapped and --namespace=NS added
#   peer_install_ours NS        our deploy/v2beta1/mpi-operator.yaml without its CRD and
#                               Namespace, renamed mpi-operator-ours (Namespace, ClusterRole,
#                               bindings, lock namespace) and --namespace=NS added; images
#                               mpik8s/mpi-operator and mpi-agent at tag PEER_OURS_TAG (default
#                               latest; `make docker-images IMAGE_TAG=x` builds a tree's own)
#   peer_pod_cgroup NS POD H    a pod's cgroup dir under hierarchy H (memory, cpuacct)
# Each operator watches only its own namespace (both honour --namespace: upstream's
# options.go, ours controller/options.c), so none reconciles the other's jobs.

. "$ROOT/tests/k8s/versions.env"
. "$ROOT/tests/lib/owner_refs.sh"
command -v go >/dev/null || PATH=$PATH:/usr/local/go/bin
PEER_IMG=mpik8s/upstream-mpi-operator:$MPI_OPERATOR_VERSION
PEER_MOD=$(GOFLAGS= go mod download -json "github.com/kubeflow/mpi-operator@v$MPI_OPERATOR_VERSION" 2>/dev/null |
  sed -n 's/^[[:space:]]*"Dir": "\(.*\)",*$/\1/p')

peer_image() {
  local b stamp t r
  b=$("$ROOT/tests/k8s/build.sh" --bindir mpi-operator)
  timeout 3000 "$ROOT/tests/k8s/build.sh" mpi-operator || ks_fail "tests/k8s/build.sh mpi-operator"
  [ -x "$b/mpi-operator" ] || ks_fail "no upstream operator binary in $b"
  stamp=$(cat "$b/.stamp")
  [ "$(docker image inspect -f '{{index .Config.Labels "mpik8s.stamp"}}' "$PEER_IMG" 2>/dev/null)" != "$stamp" ] || return 0
  t=$(mktemp -d) || ks_fail mktemp
  mkdir -p "$t/root/tmp" && chmod 1777 "$t/root/tmp" && cp "$b/mpi-operator" "$t/root/mpi-operator" &&
    tar -C "$t/root" -cf "$t/img.tar" mpi-operator tmp &&
    docker import --change 'ENTRYPOINT ["/mpi-operator"]' --change 'USER 65532:65532' \
      --change "LABEL mpik8s.stamp=$stamp" "$t/img.tar" "$PEER_IMG" >/dev/null
  r=$?; rm -rf "$t"; [ $r -eq 0 ] || ks_fail "docker import $PEER_IMG"
}

# peer_install_upstream NS [EXTRA_ARG...]
peer_install_upstream() {
  local ns=$1 y=$PEER_MOD/deploy/v2beta1/mpi-operator.yaml a extra=""; shift
  [ -f "$y" ] || ks_fail "github.com/kubeflow/mpi-operator v$MPI_OPERATOR_VERSION: no $y"
  [ "$(grep -c 'image: mpioperator/mpi-operator:' "$y")" = 1 ] || ks_fail "upstream's install no longer names one image"
  grep -q -- '- --lock-namespace=mpi-operator$' "$y" || ks_fail "upstream's install no longer passes --lock-namespace"
  for a in "--namespace=$ns" "$@"; do extra="$extra\\n        - $a"; done
  sed -e "s|image: mpioperator/mpi-operator:.*|image: docker.io/$PEER_IMG|" \
      -e "s|^\\(        - --lock-namespace=mpi-operator\\)$|\\1$extra|" "$y" >"$W/upstream.yaml"
  kc create namespace "$ns" >/dev/null || ks_fail "create namespace $ns"
  kc create -f "$W/upstream.yaml" >/dev/null || ks_fail "install upstream's operator"
  kc -n mpi-operator wait --for=condition=Available deployment/mpi-operator --timeout=180s >/dev/null ||
    ks_fail "upstream's operator is not Available: $(kc -n mpi-operator get pods; kc -n mpi-operator logs deploy/mpi-operator --tail 20)"
}

# peer_install_ours NS [EXTRA_ARG...]
peer_install_ours() {
  local ns=$1 extra="" a; shift
  for a in "--namespace=$ns" "$@"; do extra="$extra\\n        - $a"; done
  python3 - "$ROOT/deploy/v2beta1/mpi-operator.yaml" >"$W/ours-docs.yaml" <<'PY' || ks_fail "split our install"
import sys, re
docs = re.split(r'(?m)^---\s*$', open(sys.argv[1]).read())
keep = [d for d in docs if not re.search(r'(?m)^kind: (CustomResourceDefinition|Namespace)$', d)]
print('\n---\n'.join(keep))
PY
  sed -e 's/^\(  *\)\(name\|serviceAccountName\): mpi-operator$/\1\2: mpi-operator-ours/' \
      -e 's/^\(  *\)namespace: mpi-operator$/\1namespace: mpi-operator-ours/' \
      -e "s/^\\(        - --lock-namespace=\\)mpi-operator$/\\1mpi-operator-ours$extra/" \
      -e "s|mpik8s/mpi-operator:latest|mpik8s/mpi-operator:${PEER_OURS_TAG:-latest}|" \
      -e "s|mpik8s/mpi-agent:latest|mpik8s/mpi-agent:${PEER_OURS_TAG:-latest}|" \
      "$W/ours-docs.yaml" >"$W/ours.yaml"
  grep -q -- "--namespace=$ns" "$W/ours.yaml" || ks_fail "our install no longer passes --lock-namespace"
  kc create namespace "$ns" >/dev/null || ks_fail "create namespace $ns"
  kc create namespace mpi-operator-ours >/dev/null || ks_fail "create namespace mpi-operator-ours"
  kc create -f "$W/ours.yaml" >/dev/null || ks_fail "install our operator"
  kc -n mpi-operator-ours wait --for=condition=Available deployment/mpi-operator-ours --timeout=180s >/dev/null ||
    ks_fail "our operator is not Available: $(kc -n mpi-operator-ours get pods; kc -n mpi-operator-ours logs deploy/mpi-operator-ours --tail 20)"
}

# peer_pod_cgroup NS POD HIERARCHY: that pod's cgroup dir (cgroup v1, cgroupfs driver)
peer_pod_cgroup() {
  local uid d
  uid=$(kc -n "$1" get pod "$2" -o jsonpath='{.metadata.uid}')
  d=$(find "/sys/fs/cgroup/$3/" -maxdepth 6 -type d -name "pod$uid" 2>/dev/null | head -1)
  [ -n "$d" ] || ks_fail "no $3 cgroup for pod $2 ($uid) in $1"
  echo "$d"
}

# peer_install_crd: upstream's CRD alone (the ours-only phase of bench/peer_operator.sh)
peer_install_crd() {
  python3 - "$PEER_MOD/deploy/v2beta1/mpi-operator.yaml" >"$W/crd.yaml" <<'PY' || ks_fail "split upstream's install"
import sys, re
docs = re.split(r'(?m)^---\s*$', open(sys.argv[1]).read())
print('\n---\n'.join(d for d in docs if re.search(r'(?m)^kind: CustomResourceDefinition$', d)))
PY
  kc create -f "$W/crd.yaml" >/dev/null || ks_fail "create upstream's CRD"
  # (kubectl wait fails at once while the CRD has no status.conditions yet)
  ks_wait_for "[ \"\$(kc get crd mpijobs.kubeflow.org -o jsonpath='{.status.conditions[?(@.type==\"Established\")].status}')\" = True ]" 60 ||
    ks_fail "CRD not Established"
}

# peer_owner_refs_ready NS SA_NAMESPACE SA_NAME: waits (up to 120 s) until the API server's
# ownerReference admission knows MPIJobs for that ServiceAccount (tests/lib/owner_refs.sh).
# Without this wait a phase counted the operator's refused creates (2026-12-03: 369 of each
# kind for 200 jobs, 22.4 requests a job against 13.1 when the admission was ready), not its
# steady state.
peer_owner_refs_ready() {
  local t0=$SECONDS
  ks_wait_for "owner_refs_probe kc $1 $2 $3" 120 ||
    ks_fail "the API server's ownerReference admission never learned kubeflow.org/v2beta1 MPIJobs"
  echo "ownerReference admission ready $((SECONDS - t0)) s after the install" >&2
}

# peer_flowschema NAME SA_NAMESPACE SA_NAME: an APF FlowSchema that matches only that
# ServiceAccount (at the priority level its requests get by default, workload-low), so that
# apiserver_flowcontrol_dispatched_requests_total{flow_schema="NAME"} counts its requests
peer_flowschema() {
  kc apply -f - >/dev/null <<YAML || ks_fail "FlowSchema $1"
apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: FlowSchema
metadata: {name: $1}
spec:
  matchingPrecedence: 500
  priorityLevelConfiguration: {name: workload-low}
  distinguisherMethod: {type: ByUser}
  rules:
  - subjects:
    - kind: ServiceAccount
      serviceAccount: {name: $3, namespace: $2}
    resourceRules:
    - {verbs: ["*"], apiGroups: ["*"], resources: ["*"], clusterScope: true, namespaces: ["*"]}
    nonResourceRules:
    - {verbs: ["*"], nonResourceURLs: ["*"]}
YAML
}
# peer_requests NAME: the requests dispatched under FlowSchema NAME so far
peer_requests() {
  kc get --raw /metrics | awk -v f="flow_schema=\"$1\"" '/^apiserver_flowcontrol_dispatched_requests_total/ && index($0, f) { s += $2 } END { printf "%d\n", s }'
}
