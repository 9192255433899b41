#!/usr/bin/env bash
# images/build-images.sh: build the Dockerfiles of images/ into local images (`make images`).
#
#   images/build-images.sh [NAME...]        default: every images/*/Dockerfile
#   images/build-images.sh NAME:VARIANT...  a variant, tagged mpik8s/NAME:VARIANT (VARIANT_* below:
#                                           the MPI stack and Debian suite, e.g. openmpi5-trixie)
#   images/build-images.sh --base REF...    only make base images missing from the store
#                                           (tests build their own small images on them)
#
# Engine (ENGINE=buildah|docker, default: buildah where installed, else a Docker daemon):
#   buildah  `buildah bud --layers --isolation chroot --storage-driver vfs` into the local
#            containers-storage (STORAGE_ROOT, default /var/lib/containers/storage), tagged
#            docker.io/mpik8s/NAME:$IMAGE_TAG (kubesim's kubelet runs pods from that store).
#            No registry is needed: every base image a Dockerfile pulls that is not in the
#            store yet is made here. debian:<12.x|bookworm>[-slim] (likewise 11/bullseye,
#            13/trixie) is made with mmdebstrap (minbase variant, documentation left out)
#            from Debian's mirror (MIRROR) and tagged with the name the Dockerfile pulls: a
#            stand-in for the registry pull, with today's point release of that suite.
#            Other bases (nvidia/cuda) cannot be made here: the Dockerfiles that use them
#            take build arguments, and CPU_ARGS_<name> below builds their CPU variant on
#            the Debian base (the Dockerfiles' defaults stay for real clusters).
#   docker   `docker build` into the Docker Engine's image store (`make docker-images`), the
#            path users take. Base images missing from the store are made as for buildah
#            (mmdebstrap, then `docker import`); none is pulled.
# Order: an image built FROM one of ours (mpik8s/NAME with images/NAME/Dockerfile, e.g.
# mpi-pi FROM mpik8s/openmpi) is built after it; OWN_ARGS_<name> below points its FROM at
# docker.io/mpik8s/NAME:$IMAGE_TAG.
# Caching (buildah): an image whose label org.mpi-k8s.inputs equals the digest of its inputs
# (the Dockerfile, the context files its COPY/ADD instructions name, minus .dockerignore:
# the whole tree for `COPY . .`, only those files otherwise; build arguments; base image
# IDs) is not rebuilt (FORCE=1 rebuilds); otherwise buildah's layer cache reuses every step
# before the first changed one (typically the apt-get layers). Unchanged inputs: seconds.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
IMAGE_TAG=${IMAGE_TAG:-latest}
STORAGE_ROOT=${STORAGE_ROOT:-/var/lib/containers/storage}
MIRROR=${MIRROR:-http://deb.debian.org/debian}
LOG_DIR=${LOG_DIR:-$ROOT/build/images}; mkdir -p "$LOG_DIR"
# CPU variant of images whose default base cannot be made here (read through ${!var}).
# shellcheck disable=SC2034
CPU_ARGS_nccl_benchmarks="--build-arg BUILD_BASE=debian:12.11-slim --build-arg RUNTIME_BASE=debian:12.11-slim --build-arg WL_GPU=no"
# Images built on one of ours: their FROM names it with this run's tag, @TAG@ (both engines).
# shellcheck disable=SC2034
OWN_ARGS_mpi_pi="--build-arg OPENMPI_IMAGE=docker.io/mpik8s/openmpi:@TAG@"
# Variants, NAME:VARIANT (read through ${!var}, VARIANT_ + the variant with [-.] as _): build
# arguments for every image of ours they name, so the tag says the stack: upstream MPI
# Operator's images are Debian 13 "trixie" with Open MPI 5.0 (PRRTE) or MPICH 4.2.
# shellcheck disable=SC2034
VARIANT_openmpi5_trixie="--build-arg DEBIAN=trixie --build-arg MPI_PACKAGES=openmpi-bin --build-arg MPI_DEV_PACKAGES=libopenmpi-dev,openmpi-bin"
# shellcheck disable=SC2034
VARIANT_mpich4_2_trixie="--build-arg DEBIAN=trixie --build-arg MPI_PACKAGES=mpich --build-arg MPI_DEV_PACKAGES=libmpich-dev,mpich"
# Debian 12's MPICH 4.0 alone (bench/stacks.sh: its SSH and IPv6 cells)
# shellcheck disable=SC2034
VARIANT_mpich4_0_bookworm="--build-arg MPI_PACKAGES=mpich --build-arg MPI_DEV_PACKAGES=libmpich-dev,mpich"

die() { echo "build-images: $*" >&2; exit 1; }
say() { echo "build-images: $*" >&2; }

if [ -z "${ENGINE:-}" ]; then
  if command -v buildah >/dev/null; then ENGINE=buildah
  elif command -v docker >/dev/null && docker info >/dev/null 2>&1; then ENGINE=docker
  else die "neither buildah nor a running Docker daemon found: run \`make deps\` (installs buildah and mmdebstrap)"; fi
fi

# One build at a time per image store: the tests that build images run side by side
# (tests/run-integration.sh) and would each build the same cold stages; a second caller waits
# here and then finds the first one's images (the inputs label) or its layers.
lockdir=/run/lock; [ -w "$lockdir" ] || lockdir=${TMPDIR:-/tmp}
if [ "$ENGINE" = buildah ]; then lock=$lockdir/mpik8s-images-buildah-$(printf '%s' "$STORAGE_ROOT" | sha1sum | cut -c1-8).lock
else lock=$lockdir/mpik8s-images-docker.lock; fi
exec {lockfd}>"$lock" || die "cannot open the lock $lock"
flock "$lockfd" || die "cannot lock $lock"

names=("$@")
if [ ${#names[@]} -eq 0 ]; then
  for df in images/*/Dockerfile; do names+=("$(basename "$(dirname "$df")")"); done
fi

# Our images a Dockerfile builds on (FROM mpik8s/NAME or an ARG defaulting to it).
own_deps() {  # own_deps NAME
  sed -n -e 's/^FROM[[:space:]]\{1,\}\(docker\.io\/\)\{0,1\}mpik8s\/\([a-z0-9-]*\).*/\2/p' \
         -e 's/^ARG[[:space:]]\{1,\}[A-Za-z_0-9]*=\(docker\.io\/\)\{0,1\}mpik8s\/\([a-z0-9-]*\).*/\2/p' \
         "images/$1/Dockerfile"
}

# NAME[:VARIANT] -> its directory's name, and its tag (the variant, else IMAGE_TAG).
image_dir() { echo "${1%%:*}"; }
image_tag() { if [[ $1 == *:* ]]; then echo "${1#*:}"; else echo "$IMAGE_TAG"; fi; }
variant_args() {  # variant_args NAME[:VARIANT]: the variant's build arguments (none for NAME)
  [[ $1 == *:* ]] || return 0
  local v=${1#*:} var; var=VARIANT_${v//[-.]/_}
  [ -n "${!var:-}" ] || die "$1: no variant $v (VARIANT_* in $0)"
  echo "${!var}"
}

# The build order: every requested image after the images of ours it builds on (a variant
# after the same variant of them).
ordered=()
order_add() {  # order_add NAME[:VARIANT] [CHAIN...]
  local n=$1 d o dir sfx=; shift
  dir=$(image_dir "$n"); [[ $n == *:* ]] && sfx=:${n#*:}
  [ -f "images/$dir/Dockerfile" ] || die "images/$dir/Dockerfile: no such file"
  variant_args "$n" >/dev/null
  for o in "$@"; do [ "$o" != "$n" ] || die "images/$dir/Dockerfile: builds on itself (via $*)"; done
  for o in "${ordered[@]}"; do [ "$o" != "$n" ] || return 0; done
  for d in $(own_deps "$dir"); do order_add "$d$sfx" "$n" "$@"; done
  ordered+=("$n")
}
if [ "${names[0]:-}" != --base ]; then
  for n in "${names[@]}"; do order_add "$n"; done
  names=("${ordered[@]}")
fi

# Build arguments of image NAME: its CPU variant (CPU_ARGS_*) and its FROM ours (OWN_ARGS_*).
# The CPU variant is built only where the Dockerfile's own bases (CUDA's) are not in the
# engine's store: with them present (pulled from a registry), the GPU variant is built.
build_args() {  # build_args NAME[:VARIANT] -> the array args
  local dir; dir=$(image_dir "$1")
  local cpu=CPU_ARGS_${dir//-/_} own=OWN_ARGS_${dir//-/_} c b o all=1
  c=${!cpu:-}
  if [ -n "$c" ]; then
    for b in $(bases "images/$dir/Dockerfile" | sort -u); do have_image "$(full_ref "$b")" || all=; done
    if [ -n "$all" ]; then c=; else say "$1: its CUDA base images are not here: building the CPU variant (no GPU programs)"; fi
  fi
  o=${!own:-}
  read -r -a args <<<"$c ${o//@TAG@/$(image_tag "$1")} $(variant_args "$1")"
}

case $ENGINE in
  buildah)
    command -v buildah >/dev/null || die "buildah not found: run \`make deps\`"
    # buildah's settings for this kind of machine: the vfs driver (no overlay mounts needed),
    # chroot isolation (no runc, no cgroups) and ulimits the VM allows raising to.
    BUILDAH=(buildah --root "$STORAGE_ROOT" --storage-driver vfs)
    BUD_OPTS=(--layers --pull=never --isolation chroot
              --ulimit nproc=32768:32768 --ulimit nofile=20000:20000) ;;
  docker)
    docker info >/dev/null 2>&1 || die "no Docker engine answers (docker info failed)" ;;
  *) die "ENGINE=$ENGINE: expected buildah or docker" ;;
esac

# The engine's primitives: does an image exist, its ID, one of its labels, a tag, a build,
# and an image from a root filesystem tarball.
have_image() {
  if [ "$ENGINE" = docker ]; then docker image inspect "$1" >/dev/null 2>&1
  else "${BUILDAH[@]}" inspect --type image "$1" >/dev/null 2>&1; fi
}
image_id() {
  if [ "$ENGINE" = docker ]; then docker image inspect --format '{{.Id}}' "$1"
  else "${BUILDAH[@]}" inspect --type image --format '{{.FromImageID}}' "$1"; fi
}
remove_image() {  # remove_image ID: quietly, and not when a container or another tag holds it
  if [ "$ENGINE" = docker ]; then docker rmi "$1" >/dev/null 2>&1; else "${BUILDAH[@]}" rmi "$1" >/dev/null 2>&1; fi || true
}
tag_image() {
  if [ "$ENGINE" = docker ]; then docker tag "$1" "$2"; else "${BUILDAH[@]}" tag "$1" "$2"; fi
}
import_rootfs() {  # import_rootfs TARBALL NAME LABEL
  if [ "$ENGINE" = docker ]; then
    docker import --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
      --change 'CMD ["bash"]' --change "LABEL org.mpi-k8s.made-by=\"$3\"" "$1" "$2" >/dev/null
    return
  fi
  local c
  c=$("${BUILDAH[@]}" from scratch)
  "${BUILDAH[@]}" add "$c" "$1" / >/dev/null
  "${BUILDAH[@]}" config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    --cmd bash --label org.mpi-k8s.made-by="$3" "$c"
  "${BUILDAH[@]}" commit --quiet --rm "$c" "$2" >/dev/null
}
build_image() {  # build_image DOCKERFILE REF DIGEST LOG ARGS...
  local df=$1 ref=$2 digest=$3 log=$4; shift 4
  if [ "$ENGINE" = docker ]; then
    docker build "$@" --label org.mpi-k8s.inputs="$digest" -f "$df" -t "$ref" . >"$log" 2>&1
  else
    "${BUILDAH[@]}" bud "${BUD_OPTS[@]}" "$@" --label org.mpi-k8s.inputs="$digest" -f "$df" \
      -t "$ref" . >"$log" 2>&1
  fi
}

# debian:TAG -> suite name, or nothing when the tag names no suite we know.
debian_suite() {
  local tag=${1#*:}
  [ "$tag" != "$1" ] || tag=latest
  tag=${tag%-slim}
  case "$tag" in
    12|12.*|bookworm|bookworm-*) echo bookworm ;;
    11|11.*|bullseye|bullseye-*) echo bullseye ;;
    13|13.*|trixie|trixie-*) echo trixie ;;
  esac
}

make_base() {  # make_base REF (as written in FROM)
  local ref=$1 repo suite
  repo=${ref%%:*}; repo=${repo#docker.io/}; repo=${repo#library/}
  suite=
  if [ "$repo" = debian ]; then suite=$(debian_suite "$ref"); fi
  [ -n "$suite" ] ||
    die "base image $ref is not in $STORAGE_ROOT and cannot be made here (only debian:<release> is, with mmdebstrap); there is no registry to pull it from"
  # one root filesystem per suite, tagged with every name that asks for it
  local canon=localhost/mpi-k8s-base/debian:$suite
  if ! have_image "$canon"; then make_suite "$suite" "$canon"; fi
  tag_image "$canon" "$(full_ref "$ref")"
  say "base image $ref = $canon (mmdebstrap $suite)"
}

make_suite() {  # make_suite SUITE NAME
  local suite=$1 name=$2 tmp
  command -v mmdebstrap >/dev/null || die "base image $name: mmdebstrap not found: run \`make deps\`"
  tmp=$(mktemp -d /var/tmp/build-images.XXXXXX)
  # shellcheck disable=SC2064
  trap "rm -rf '$tmp'" EXIT
  say "making a $suite base image: mmdebstrap --variant=minbase $suite (stands in for a registry pull)"
  # shellcheck disable=SC2016  # "$1" is expanded by mmdebstrap's hook shell
  mmdebstrap --quiet --variant=minbase \
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
    --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/locale/*' \
    --dpkgopt='path-exclude=/usr/share/info/*' \
    --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*.bin' \
    "$suite" "$tmp/rootfs.tar" "$MIRROR" || die "mmdebstrap $suite failed (is $MIRROR reachable?)"
  import_rootfs "$tmp/rootfs.tar" "$name" "images/build-images.sh (mmdebstrap $suite)"
  rm -rf "$tmp"
  trap - EXIT
}

full_ref() {  # docker.io/library/debian:12 style, as a registry pull names it
  local r=$1 first=${1%%/*}
  if [[ $r != */* ]]; then r=docker.io/library/$r
  elif [[ $first != *.* && $first != *:* && $first != localhost ]]; then r=docker.io/$r; fi
  [[ ${r##*/} == *:* || $r == *@* ]] || r=$r:latest
  echo "$r"
}

# Base images of a Dockerfile with its build arguments applied (stage names left out).
bases() {  # bases DOCKERFILE ARGS...
  local df=$1; shift
  python3 - "$df" "$@" <<'EOF'
import re, sys
df, args = sys.argv[1], sys.argv[2:]
over = {}
for i, a in enumerate(args):
    if a == "--build-arg":
        k, _, v = args[i + 1].partition("=")
        over[k] = v
vals, stages = {}, set()
text = re.sub(r"\\\n", " ", open(df).read())
for line in text.splitlines():
    w = line.split()
    if not w or w[0].startswith("#"):
        continue
    if w[0].upper() == "ARG":
        k, _, v = w[1].partition("=")
        vals[k] = over.get(k, v)
    elif w[0].upper() == "FROM":
        img = [x for x in w[1:] if not x.startswith("--")][0]
        img = re.sub(r"\$\{?(\w+)\}?", lambda m: vals.get(m.group(1), ""), img)
        if img not in stages and img != "scratch":
            print(img)
        if len(w) >= 4 and w[-2].upper() == "AS":
            stages.add(w[-1])
EOF
}

if [ "${names[0]:-}" = --base ]; then
  for b in "${names[@]:1}"; do have_image "$(full_ref "$b")" || make_base "$b"; done
  exit 0
fi

# Digest of everything a build reads: the Dockerfile and .dockerignore, the context files
# its COPY/ADD instructions (other than --from=STAGE) name (the whole context minus
# .dockerignore for `COPY . .`), the build arguments and the base images' IDs.
context_digest() {  # context_digest DOCKERFILE ARGS... (base image IDs on stdin)
  python3 -c '
import fnmatch, glob, hashlib, json, os, re, shlex, stat, sys
df = sys.argv[1]
ign = []
if os.path.exists(".dockerignore"):
    ign = [l.strip().strip("/") for l in open(".dockerignore") if l.strip() and not l.startswith("#")]
skip = lambda rel: any(fnmatch.fnmatchcase(rel, p) for p in ign)
srcs = {df, ".dockerignore"}
for line in re.sub(r"\\\n", " ", open(df).read()).splitlines():
    w = line.strip()
    if not re.match(r"(?i)(COPY|ADD)\s", w):
        continue
    rest = w.split(None, 1)[1].strip()
    words = json.loads(rest) if rest.startswith("[") else shlex.split(rest)
    flags = [x for x in words if x.startswith("--")]
    if any(x.startswith("--from=") for x in flags):
        continue
    for src in [x for x in words if not x.startswith("--")][:-1]:
        src = os.path.normpath(src)
        if src.startswith(".."):
            sys.exit("%s: COPY source %s is outside the context" % (df, src))
        hits = glob.glob(src)
        if not hits:
            sys.exit("%s: COPY source %s matches nothing in the context" % (df, src))
        srcs.update(hits)
def files(top):
    if not os.path.isdir(top) or os.path.islink(top):
        yield os.path.normpath(top)
        return
    for dp, dns, fns in os.walk(top):
        rel = os.path.relpath(dp, ".")
        dns[:] = sorted(d for d in dns if not skip(os.path.normpath(os.path.join(rel, d))))
        for f in sorted(fns):
            yield os.path.normpath(os.path.join(rel, f))
h = hashlib.sha256()
for a in sys.argv[1:]:
    h.update(b"arg\0" + a.encode() + b"\0")
h.update(b"bases\0" + sys.stdin.read().encode())
for r in sorted({f for s in srcs for f in files(s) if os.path.lexists(f) and not skip(f)}):
    st = os.lstat(r)
    h.update(b"\0f\0" + r.encode() + b"\0%o\0" % st.st_mode)
    if stat.S_ISLNK(st.st_mode):
        h.update(os.readlink(r).encode())
    elif stat.S_ISREG(st.st_mode):
        with open(r, "rb") as fh:
            h.update(fh.read())
print("sha256:" + h.hexdigest())
' "$@"
}

label() {  # label IMAGE KEY
  if [ "$ENGINE" = docker ]; then
    docker image inspect --format "{{index .Config.Labels \"$2\"}}" "$1" 2>/dev/null || true
  else
    "${BUILDAH[@]}" inspect --type image --format "{{index .OCIv1.Config.Labels \"$2\"}}" "$1" 2>/dev/null || true
  fi
}

for n in "${names[@]}"; do
  df=images/$(image_dir "$n")/Dockerfile
  [ -f "$df" ] || die "$df: no such file"
  build_args "$n"
  ids=
  for b in $(bases "$df" "${args[@]}" | sort -u); do
    have_image "$(full_ref "$b")" || make_base "$b"
    ids+="$b=$(image_id "$(full_ref "$b")") "
  done
  tag=$(image_tag "$n"); lg=$LOG_DIR/build-images-${n/:/-}.log; n=$(image_dir "$n")
  ref=docker.io/mpik8s/$n:$tag
  digest=$(context_digest "$df" "${args[@]}" <<<"$ids") || die "cannot hash the build context"
  # Cached by content: an image built from exactly these inputs is kept as it is (buildah's
  # own layer cache would also reuse every step, but with the vfs driver it copies each
  # stage's root filesystem to do so: about a minute per image).
  if [ "${FORCE:-}" != 1 ] && [ "$(label "$ref" org.mpi-k8s.inputs)" = "$digest" ]; then
    say "mpik8s/$n:$tag is up to date (inputs $digest)"
    continue
  fi
  say "$ENGINE build mpik8s/$n:$tag ${args[*]}"
  t0=$(date +%s)
  old=; ! have_image "$ref" || old=$(image_id "$ref")
  build_image "$df" "$ref" "$digest" "$lg" "${args[@]}" ||
    { tail -n 30 "$lg" >&2; die "$df: build failed (log: $lg)"; }
  say "mpik8s/$n:$tag built in $(( $(date +%s) - t0 )) s"
  # The image this build replaced is now untagged: remove it (about 1 GB each; a machine that
  # rebuilt for weeks filled its disk with them). Kept when something still uses it.
  [ -z "$old" ] || [ "$old" = "$(image_id "$ref")" ] || remove_image "$old"
done
