# Helpers for the integration tests that run kubesim pods in real images (sourced):
#   img_skip_unless_tools         exit 77 with a reason unless buildah is installed and the
#                                 Debian base can be had (in the store, or mmdebstrap)
#   img_tools_missing             the same as a status (0: usable), printing the reason
#   img_base                      make debian:12.11-slim in the store if missing (mmdebstrap)
#   img_build NAME CONTEXT_DIR    buildah bud CONTEXT_DIR/Dockerfile -> docker.io/kubesim-test/NAME:1
#   img_conf FILE [LINES...]      an image map for `kubesim up --set images_conf=FILE`:
#                                 kubesim-test/* from the store, then LINES
# The images live in the local containers-storage (vfs) that `make images` uses and are
# kept there as a build cache (a warm build takes seconds; removing the tag would remove
# its cached layers too). Remove them with
#   buildah --storage-driver vfs rmi $(buildah --storage-driver vfs images -q --filter reference='kubesim-test/*')
: "${ROOT:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
IMG_BASE=debian:12.11-slim
BUILDAH=(buildah --storage-driver vfs)

img_skip_unless_tools() {
  local why
  why=$(img_tools_missing) || { echo "skip: $why"; exit 77; }
}

# img_tools_missing: status 0 when real images can be built and run here; else prints why.
img_tools_missing() {
  [ "$(id -u)" -eq 0 ] || { echo "needs root (network namespaces, overlay mounts)"; return 1; }
  command -v kubectl >/dev/null || { echo "kubectl not installed"; return 1; }
  command -v buildah >/dev/null || { echo "buildah not installed (make deps)"; return 1; }
  "${BUILDAH[@]}" inspect --type image "docker.io/library/$IMG_BASE" >/dev/null 2>&1 ||
    command -v mmdebstrap >/dev/null ||
    { echo "mmdebstrap not installed (make deps) and no $IMG_BASE in the local store"; return 1; }
}

img_base() {
  "$ROOT/images/build-images.sh" --base "$IMG_BASE" || { echo "FAIL: cannot make the base image $IMG_BASE" >&2; exit 1; }
}

img_build() {
  local name=$1 dir=$2 log
  log=$(mktemp /tmp/img-build.XXXXXX)
  if ! timeout 900 "${BUILDAH[@]}" bud --layers --pull=never --isolation chroot \
       --ulimit nproc=32768:32768 --ulimit nofile=20000:20000 \
       -t "docker.io/kubesim-test/$name:1" "$dir" >"$log" 2>&1; then
    tail -n 30 "$log" >&2; rm -f "$log"
    echo "FAIL: building image kubesim-test/$name:1 from $dir/Dockerfile" >&2; exit 1
  fi
  rm -f "$log"
}

img_conf() {
  local f=$1; shift
  { echo "kubesim-test/* store"; printf '%s\n' "$@"; } >"$f"
}
