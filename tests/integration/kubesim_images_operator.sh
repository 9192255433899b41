#!/usr/bin/env bash
# timeout: 1200
# The seed's journey (controller_journey.sh, unchanged) with the operator pod running from
# the built mpik8s/mpi-operator image (images/mpi-operator/Dockerfile, `make images
# IMAGES=mpi-operator`: the tree's own build, in the image's filesystem, as user 65532,
# with only the image's libraries) instead of build/stage. The launcher and workers of the
# pi example stay mapped to build/stage. Also checks that the operator pod really ran from
# the store (imageID, and the image's USER). The image build is cached by layers: seconds
# when the tree is unchanged, minutes cold (see README, `make images`).
set -u
: "${ROOT:=$(cd "$(dirname "$0")/../.." && pwd)}"
. "$ROOT/tests/integration/kubesim_images.bash"
img_skip_unless_tools
command -v promtool >/dev/null || { echo "skip: promtool (Debian prometheus) not installed"; exit 77; }
W=$(mktemp -d /tmp/ks-images-op.XXXXXX)
trap 'rm -rf "$W"' EXIT
t0=$(date +%s)
"$ROOT/images/build-images.sh" mpi-operator || { echo "FAIL: make images IMAGES=mpi-operator" >&2; exit 1; }
echo "image mpik8s/mpi-operator:latest ready in $(( $(date +%s) - t0 )) s"
printf '%s\n' "mpik8s/mpi-operator store" "mpik8s/* build/stage/usr/local/bin" >"$W/images.conf"
# controller_journey.sh's own checks, then ours on the operator pod before it is torn down
cat >"$W/after.bash" <<'EOF2'
op_checks() {
  local id uid
  id=$(kc get pods -n mpi-operator "$OP" -o jsonpath='{.status.containerStatuses[0].imageID}')
  [[ $id == docker.io/mpik8s/mpi-operator@sha256:* ]] || ks_fail "operator imageID $id is not the store's image"
  uid=$(kc exec -n mpi-operator "$OP" -- /bin/sh -c 'id -u; test -e /usr/local/bin/mpi-agent || echo only-operator' 2>&1)
  [ "$uid" = $'65532\nonly-operator' ] || ks_fail "operator pod not in its image (id/contents: $uid)"
  echo "operator pod $OP ran from $id"
}
EOF2
KS_UP_ARGS="--set images_conf=$W/images.conf" bash -c '
  set -u
  src=$(sed "s|^kc delete -f \"\$ROOT/examples/v1alpha2/pi.yaml\".*|op_checks\n&|" "$1")
  grep -q "^op_checks$" <<<"$src" || { echo "FAIL: controller_journey.sh changed: no place for the operator checks" >&2; exit 1; }
  . "$2"
  cd "$(dirname "$1")" && eval "$src"' _ "$ROOT/tests/integration/controller_journey.sh" "$W/after.bash"
