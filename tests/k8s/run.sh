#!/usr/bin/env bash
# tests/k8s/run.sh: the real-cluster suite (`make test-k8s`, part of `make test`). Builds the
# cluster's components (cached by version: tests/k8s/build.sh) and the images (`make
# docker-images`), then runs tests/k8s/cases/*.sh and, with KUBE_BACKEND=k8s, the
# e2e cases listed in tests/k8s/e2e.list and the integration tests listed in
# tests/k8s/integration.list: each starts its own real cluster, bounded by its "# timeout:"
# line, and removes it on exit. K8S_JOBS of them run at once (tests/run-integration.sh;
# docs/k8s.md has the measurement that chose the default). ONLY=pattern runs a subset.
set -euo pipefail
cd "$(dirname "$0")/../.."
[ "$(id -u)" = 0 ] || { echo "k8s suite: skipped (needs root)"; exit 0; }
command -v docker >/dev/null && docker info >/dev/null 2>&1 ||
  { echo "k8s suite: no Docker Engine answers: cannot build the images" >&2; exit 1; }
t0=$SECONDS
tests/k8s/build.sh
echo "k8s suite: components ready ($((SECONDS - t0)) s)"
t1=$SECONDS
make --no-print-directory docker-images >/dev/null
# the variants (tests/k8s/versions.env: Debian 13's Open MPI 5), cached by content like the others
# shellcheck disable=SC2086
(. tests/k8s/versions.env && ENGINE=docker images/build-images.sh $K8S_IMAGE_VARIANTS >/dev/null)
echo "k8s suite: images ready ($((SECONDS - t1)) s)"
list=$(ls tests/k8s/cases/*.sh)
listed() {  # LIST DIR: the tests a list file names
  sed -e 's/#.*//' -e '/^[[:space:]]*$/d' -e 's/[[:space:]]*$//' -e "s#^#$2/#" -e 's#$#.sh#' "$1"
}
list+=" $(listed tests/k8s/e2e.list tests/e2e/cases)"
list+=" $(listed tests/k8s/integration.list tests/integration)"
export KUBE_BACKEND=k8s
SUITE=k8s JOBS=${K8S_JOBS:-2} TESTS="$list" tests/run-integration.sh
