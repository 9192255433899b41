#!/usr/bin/env bash
# timeout: 1800
# The seed's journey (controller_journey.sh, unchanged) with the operator pod running from
# the built mpik8s/mpi-operator image (images/mpi-operator/Dockerfile, `make images
# IMAGES=mpi-operator`: the tree's own build, in the image's filesystem, as user 65532,
# with only the image's libraries) instead of build/stage, and the launcher's init
# container (`mpi-agent init`, which copies the mpi-rsh/mpi-agent bundle into /opt/kube)
# from the built mpik8s/mpi-agent image. The launcher's and workers' main containers of
# the pi example stay mapped to build/stage (they run the delivered bundle). Also checks
# that both really ran from the store (imageID; the operator image's USER and contents;
# the agent image's init ran and the launcher found its bundle). The two images share
# their build stage (buildah's layer cache): seconds when the tree is unchanged, minutes
# after a source change (see images/README.md, `make images`).
set -u
: "${ROOT:=$(cd "$(dirname "$0")/../.." && pwd)}"
. "$ROOT/tests/integration/kubesim_images.bash"
img_skip_unless_tools
command -v promtool >/dev/null || { echo "skip: promtool (Debian prometheus) not installed"; exit 77; }
W=$(mktemp -d /tmp/ks-images-op.XXXXXX)
trap 'rm -rf "$W"' EXIT
t0=$(date +%s)
"$ROOT/images/build-images.sh" mpi-operator mpi-agent ||
  { echo "FAIL: make images IMAGES=\"mpi-operator mpi-agent\"" >&2; exit 1; }
echo "images mpik8s/mpi-operator:latest and mpik8s/mpi-agent:latest ready in $(( $(date +%s) - t0 )) s"
printf '%s\n' "mpik8s/mpi-operator store" "mpik8s/mpi-agent store" "mpik8s/* build/stage/usr/local/bin" >"$W/images.conf"
# controller_journey.sh's own checks, then ours on the operator pod before it is torn down
cat >"$W/after.bash" <<'EOF2'
op_checks() {
  local id uid
  id=$(kc get pods -n mpi-operator "$OP" -o jsonpath='{.status.containerStatuses[0].imageID}')
  [[ $id == docker.io/mpik8s/mpi-operator@sha256:* ]] || ks_fail "operator imageID $id is not the store's image"
  uid=$(kc exec -n mpi-operator "$OP" -- /bin/sh -c 'id -u; test -e /usr/local/bin/mpi-agent || echo only-operator' 2>&1)
  [ "$uid" = $'65532\nonly-operator' ] || ks_fail "operator pod not in its image (id/contents: $uid)"
  echo "operator pod $OP ran from $id"
  # the launcher's init container ran in the agent image and delivered the bundle
  local lp st
  lp=$(kc get pods -l mpi_job_name=pi,mpi_role_type=launcher -o jsonpath='{.items[0].metadata.name}')
  id=$(kc get pod "$lp" -o jsonpath='{.status.initContainerStatuses[0].name} {.status.initContainerStatuses[0].imageID}')
  [[ $id == "mpi-agent-init docker.io/mpik8s/mpi-agent@sha256:"* ]] || ks_fail "launcher init '$id' is not the store's mpik8s/mpi-agent"
  st=$(kc get pod "$lp" -o jsonpath='{.status.initContainerStatuses[0].state.terminated.exitCode}')
  [ "$st" = 0 ] || ks_fail "launcher init (agent image) exit code '$st': $(kc logs "$lp" -c mpi-agent-init 2>&1 | tail -5)"
  echo "launcher $lp: init container ran from ${id#* }"
}
EOF2
KS_UP_ARGS="--set images_conf=$W/images.conf" bash -c '
  set -u
  src=$(sed "s|^kc delete -f \"\$EX\".*|op_checks\n&|" "$1")
  grep -q "^op_checks$" <<<"$src" || { echo "FAIL: controller_journey.sh changed: no place for the operator checks" >&2; exit 1; }
  . "$2"
  cd "$(dirname "$1")" && eval "$src"' _ "$ROOT/tests/integration/controller_journey.sh" "$W/after.bash"
