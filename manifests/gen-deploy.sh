#!/bin/sh
# Writes deploy/v1alpha2/mpi-operator.yaml and deploy/v2beta1/mpi-operator.yaml from
# manifests/base (one source of truth; tests/integration/controller_manifests.sh checks
# that the committed files are up to date). manifests/base/crd.yaml is itself generated,
# by manifests/gen-crd.py, which this runs (or checks) first.
# Usage: manifests/gen-deploy.sh [--check]
set -eu
cd "$(dirname "$0")/.."
rc=0
if [ "${1:-}" = "--check" ]; then
  manifests/gen-crd.py --check || rc=1
else
  manifests/gen-crd.py
fi
gen() {
  echo "# mpi-operator for MPIJob $1 (both kubeflow.org/v1alpha2 and v2beta1 are served;"
  echo "# the files for both API versions are the same). Install: kubectl create -f deploy/$1/mpi-operator.yaml"
  echo "# Generated from manifests/base by manifests/gen-deploy.sh; edit the base, not this file."
  first=1
  for f in namespace crd rbac deployment; do
    [ $first = 1 ] || echo "---"
    first=0
    cat "manifests/base/$f.yaml"
  done
}
for v in v1alpha2 v2beta1; do
  if [ "${1:-}" = "--check" ]; then
    gen $v | cmp -s - "deploy/$v/mpi-operator.yaml" || { echo "deploy/$v/mpi-operator.yaml is stale: run manifests/gen-deploy.sh" >&2; rc=1; }
  else
    mkdir -p "deploy/$v"
    gen $v > "deploy/$v/mpi-operator.yaml"
  fi
done
exit $rc
