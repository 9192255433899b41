#!/usr/bin/env bash
# The README's first set-up command (`make deps && make demo`): the seed's user
# journey on the embedded simulator. Starts kubesim, installs the operator with
# the real kubectl from deploy/, creates a CPU example MPIJob, waits (bounded)
# for it to finish, prints its status and the launcher's log, and tears down.
# CLUSTER=k8s (`make demo CLUSTER=k8s`): the same on the real cluster (tests/k8s/k8s), with
# the images `make docker-images` built, loaded into its node.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
JOB_FILE=${JOB_FILE:-examples/v1alpha2/cnn-bench-cpu.yaml}
# the deploy of the job's API version: deploy/v1alpha2 serves v1alpha2 alone (as the seed's
# install), deploy/v2beta1 serves both
ver=$(sed -n 's|^apiVersion: *kubeflow.org/||p' "$JOB_FILE" | head -1)
case "$ver" in
  v1alpha2|v2beta1) ;;
  *) echo "demo: $JOB_FILE: apiVersion must be kubeflow.org/v1alpha2 or v2beta1" >&2; exit 2 ;;
esac
DEPLOY=deploy/$ver/mpi-operator.yaml
DIR=$(mktemp -d /tmp/mpi-k8s-demo.XXXXXX)
case ${CLUSTER:-kubesim} in
  kubesim) KS=tests/kubesim/kubesim ;;
  k8s) KS=tests/k8s/k8s ;;
  *) echo "demo: CLUSTER=$CLUSTER: expected kubesim or k8s" >&2; exit 2 ;;
esac
cleanup() { "$KS" down --dir "$DIR" >/dev/null 2>&1 || true; rm -rf "$DIR"; }
trap cleanup EXIT
k() { "$KS" run --dir "$DIR" -- kubectl "$@"; }

say() { printf '\n\033[1m$ %s\033[0m\n' "$*"; }
"$KS" up --dir "$DIR"
if [ "$KS" = tests/k8s/k8s ]; then
  # the images the deploy and the job name, from the Docker Engine (make docker-images)
  imgs=$(sed -n 's/^ *-\{0,1\} *image: *"\{0,1\}\([^ {"]*:[^ {"]*\)"\{0,1\}$/\1/p' "$DEPLOY" "$JOB_FILE" | sort -u)
  imgs="$imgs mpik8s/mpi-agent:latest"
  for i in $imgs; do
    docker image inspect "$i" >/dev/null 2>&1 || { echo "demo: image $i not built: run make docker-images" >&2; exit 1; }
  done
  # shellcheck disable=SC2086
  "$KS" load --dir "$DIR" $imgs
fi
say kubectl create -f "$DEPLOY"
k create -f "$DEPLOY"
say kubectl get crd
k get crd
k -n mpi-operator wait --for=condition=Available deployment/mpi-operator --timeout=60s >/dev/null
name=$(sed -n 's/^  name: *//p' "$JOB_FILE" | head -1)
say kubectl create -f "$JOB_FILE"
k create -f "$JOB_FILE"
deadline=$((SECONDS + ${DEMO_TIMEOUT:-300}))
state=
while [ $SECONDS -lt $deadline ]; do
  state=$(k get mpijobs "$name" -o 'jsonpath={.status.conditions[?(@.status=="True")].type}' 2>/dev/null || true)
  case " $state " in *" Succeeded "*|*" Failed "*) break ;; esac
  sleep 1
done
say kubectl get pods
k get pods
say kubectl get -o yaml mpijobs "$name"
k get -o yaml mpijobs "$name"
say "kubectl logs \$(kubectl get pods -l mpi_job_name=$name,mpi_role_type=launcher -o name)"
k logs $(k get pods -l "mpi_job_name=$name,mpi_role_type=launcher" -o name | tail -1)
case " $state " in
  *" Succeeded "*) echo; echo "demo: MPIJob $name Succeeded" ;;
  *) echo; echo "demo: MPIJob $name did not succeed (conditions: ${state:-none})" >&2; exit 1 ;;
esac
