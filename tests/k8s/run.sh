#!/usr/bin/env bash
# tests/k8s/run.sh: the real-cluster suite (`make test-k8s`, part of `make test`). Builds the
# cluster's components (cached by version: tests/k8s/build.sh) and the images (`make
# docker-images`), then runs tests/k8s/cases/*.sh and, with KUBE_BACKEND=k8s, the
# integration tests listed in tests/k8s/integration.list: each starts its own real
# cluster, bounded by its "# timeout:" line, and removes it on exit.
# ONLY=pattern runs a subset.
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
echo "k8s suite: images ready ($((SECONDS - t1)) s)"
list=$(ls tests/k8s/cases/*.sh)
list+=" $(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' -e 's#^#tests/integration/#' -e 's#$#.sh#' tests/k8s/integration.list)"
export KUBE_BACKEND=k8s
SUITE=k8s TESTS="$list" tests/run-integration.sh
