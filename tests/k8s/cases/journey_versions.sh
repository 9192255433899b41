#!/usr/bin/env bash
# timeout: 600
# The seed's journey (tests/integration/controller_journey.sh) on the other Kubernetes
# versions this project supports, besides the pinned one (which the suite runs already):
# K8S_OTHER_VERSIONS (default 1.34.4, the oldest supported). A version whose build is not
# cached on this machine is skipped, naming the command that builds it (one `kube` build is
# 8-13 minutes on 2 cores, which a cold CI run cannot also afford); sessions warm it with
#   K8S_VERSION=1.34.4 tests/k8s/build.sh kube
set -u
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
rc=0 ran=0
for v in ${K8S_OTHER_VERSIONS:-1.34.4}; do
  b=$(K8S_VERSION=$v "$ROOT/tests/k8s/build.sh" --bindir kube)
  if [ ! -f "$b/.stamp" ]; then
    echo "journey on $v: not built here (K8S_VERSION=$v tests/k8s/build.sh kube); skipped"
    continue
  fi
  s=$SECONDS
  if K8S_VERSION=$v KUBE_BACKEND=k8s timeout -k 10 540 bash "$ROOT/tests/integration/controller_journey.sh"; then
    echo "journey on Kubernetes $v: passed ($((SECONDS - s)) s)"; ran=$((ran + 1))
  else
    echo "FAIL: journey on Kubernetes $v"; rc=1
  fi
done
[ $rc -ne 0 ] || [ $ran -gt 0 ] || exit 77
exit $rc
