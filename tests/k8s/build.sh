#!/usr/bin/env bash
# tests/k8s/build.sh: build the real cluster's components from the Go module proxy, cached
# on this machine and keyed by version (tests/k8s/versions.env pins them).
#
#   tests/k8s/build.sh [kube|etcd|containerd|coredns|registry|kueue|mpi-operator|crictl]...
#                                   default: all but crictl (the benchmarks' CRI floor) and
#                                   mpi-operator (upstream's operator, for bench/peer_*.sh)
#   tests/k8s/build.sh --bindir C      the directory of component C's binaries
#   tests/k8s/build.sh --module C      resolve C's module (no build) and print its directory
#
# Each component is a Go module: tests/k8s/go/<component>/go.mod and go.sum for the pinned
# version (committed), or, for another version (K8S_VERSION=1.34.4 ...), a go.mod generated
# here and resolved with `go mod tidy` in the cache. Only Go modules are downloaded.
# Cache: $K8S_CACHE (default /var/cache/mpi-k8s): bin/<component>-<version>/ holds the
# binaries and a .stamp with the digest of the module files that built them.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=versions.env
. "$HERE/versions.env"
K8S_CACHE=${K8S_CACHE:-/var/cache/mpi-k8s}
export GOFLAGS="${GOFLAGS:-} -trimpath -buildvcs=false"
die() { echo "k8s build: $*" >&2; exit 1; }
command -v go >/dev/null || PATH=$PATH:/usr/local/go/bin
command -v go >/dev/null || die "go not found (expected /usr/local/go/bin/go)"

version_of() {  # component -> version
  case $1 in
    kube) echo "$K8S_VERSION" ;; etcd) echo "$ETCD_VERSION" ;;
    containerd) echo "$CONTAINERD_VERSION" ;; coredns) echo "$COREDNS_VERSION" ;;
    crictl) echo "$K8S_VERSION" ;; registry) echo "$REGISTRY_VERSION" ;;
    kueue) echo "$KUEUE_VERSION" ;;
    mpi-operator) echo "$MPI_OPERATOR_VERSION" ;;
    *) die "unknown component $1 (expected kube, etcd, containerd, coredns, registry, kueue, mpi-operator or crictl)" ;;
  esac
}
bindir() { echo "$K8S_CACHE/bin/$1-$(version_of "$1")"; }

# The go.mod of component $1 at version $2 (written to stdout).
gen_gomod() {
  local c=$1 v=$2 m s
  echo "module mpik8s.local/k8s-$c"
  echo "go $(go env GOVERSION | sed 's/^go\([0-9]*\.[0-9]*\).*/\1/').0"
  case $c in
    kube)
      echo "tool ("
      for t in kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl; do
        echo "	k8s.io/kubernetes/cmd/$t"; done
      echo ")"
      echo "require k8s.io/kubernetes v$v"
      # k8s.io/kubernetes requires its staging modules at v0.0.0 and replaces them with
      # ./staging: the same modules are published as k8s.io/<name> v0.<minor>.<patch>.
      m=$(GOFLAGS= go mod download -json "k8s.io/kubernetes@v$v" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",*$/\1/p')
      [ -f "$m" ] || die "k8s.io/kubernetes v$v: the module proxy served no go.mod"
      s=v0.${v#*.}
      echo "replace ("
      sed -n 's#^[[:space:]]*\(k8s.io/[a-z0-9-]*\) => ./staging/src/.*#\1#p' "$m" | while read -r p; do
        echo "	$p => $p $s"; done
      echo ")" ;;
    etcd)
      echo "tool go.etcd.io/etcd/server/v3"
      echo "require go.etcd.io/etcd/server/v3 v$v" ;;
    containerd)
      echo "tool ("
      for t in containerd containerd-shim-runc-v2 ctr; do echo "	github.com/containerd/containerd/v2/cmd/$t"; done
      echo ")"
      echo "require github.com/containerd/containerd/v2 v$v" ;;
    coredns)
      echo "require github.com/coredns/coredns v$v" ;;
    registry)
      echo "require github.com/distribution/distribution/v3 v$v" ;;
    kueue)
      echo "tool sigs.k8s.io/kueue/cmd/kueue"
      echo "require sigs.k8s.io/kueue v$v" ;;
    mpi-operator)
      # upstream's go.mod (v0.6.0) has no replace directives, so none is needed here
      echo "tool github.com/kubeflow/mpi-operator/cmd/mpi-operator"
      echo "require github.com/kubeflow/mpi-operator v$v" ;;
    crictl)
      echo "tool sigs.k8s.io/cri-tools/cmd/crictl"
      echo "require sigs.k8s.io/cri-tools v$(crictl_version "$v")" ;;
  esac
}
# cri-tools follows Kubernetes' minor versions: v1.<minor>.0.
crictl_version() { local mm=${1%.*}; echo "$mm.0"; }

# The module dir for component $1 at version $2: the committed one when it pins $2,
# else one generated and tidied in the cache.
module_dir() {
  local c=$1 v=$2 d="$HERE/go/$1" w
  if [ -f "$d/go.mod" ] && [ -f "$d/.version" ] && [ "$(cat "$d/.version")" = "$v" ]; then
    echo "$d"; return; fi
  w="$K8S_CACHE/mod/$c-$v"
  if [ ! -f "$w/go.sum" ]; then
    mkdir -p "$w"
    [ ! -f "$d/main.go" ] || cp "$d/main.go" "$w/"
    gen_gomod "$c" "$v" >"$w/go.mod.new"
    mv "$w/go.mod.new" "$w/go.mod"
    (cd "$w" && GOFLAGS= go mod tidy >&2) || die "$c v$v: go mod tidy failed (is v$v served?)"
  fi
  echo "$w"
}

# Version stamps, as upstream's builds set them (hack/lib/version.sh), so that `kubectl
# version` and /version show the real version, not v0.0.0-master.
ldflags() {  # component version
  local p mm=${2#*.}; mm=${mm%%.*}
  case $1 in
    kube|crictl)
      for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
        printf -- '-X %s.gitVersion=v%s -X %s.gitMajor=1 -X %s.gitMinor=%s -X %s.gitTreeState=clean ' \
          "$p" "$2" "$p" "$p" "$mm" "$p"
      done ;;
  esac
}

build_one() {
  local c=$1 v d out stamp digest pkgs
  v=$(version_of "$c"); d=$(module_dir "$c" "$v"); out=$(bindir "$c")
  digest=$(cd "$d" && cat go.mod go.sum $(ls ./*.go 2>/dev/null) | sha256sum | cut -c1-16)
  stamp="$out/.stamp"
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$digest" ]; then return 0; fi
  # one build of a component at a time (two `k8s up` on a cold machine each asked for it, and
  # both wrote into the same .tmp): a second caller waits here, then finds the stamp
  mkdir -p "$(dirname "$out")"
  local lk
  exec {lk}>"$out.lock"
  flock "$lk" || die "$c: cannot lock $out.lock"
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$digest" ]; then exec {lk}>&-; return 0; fi
  echo "k8s build: $c v$v (cold: minutes; cached in $out)" >&2
  rm -rf "$out.tmp"; mkdir -p "$out.tmp"
  local s=$SECONDS
  case $c in
    coredns|registry) pkgs=. ;;
    *) pkgs=tool ;;
  esac
  # Static where the binary runs in a container image (CoreDNS) or needs no cgo: containerd
  # without cgo has no btrfs/devmapper plugins (overlayfs and native remain).
  case $c in containerd|coredns|registry|kueue|mpi-operator) export CGO_ENABLED=0 ;; *) unset CGO_ENABLED ;; esac
  (cd "$d" && go build -ldflags "-s -w $(ldflags "$c" "$v")" -o "$out.tmp/" $pkgs) ||
    die "$c v$v: go build failed"
  case $c in coredns|registry) mv "$out.tmp/k8s-$c" "$out.tmp/$c" ;; esac
  [ "$c" != etcd ] || mv "$out.tmp/server" "$out.tmp/etcd"
  echo "$digest" >"$out.tmp/.stamp"
  rm -rf "$out"; mv "$out.tmp" "$out"
  exec {lk}>&-
  echo "k8s build: $c v$v built in $((SECONDS - s)) s" >&2
}

if [ "${1:-}" = --bindir ]; then bindir "${2:-kube}"; exit 0; fi
# --module C: resolve component C's module (no build) and print its dir
if [ "${1:-}" = --module ]; then module_dir "$2" "$(version_of "$2")"; exit 0; fi
comps=("$@"); [ ${#comps[@]} -gt 0 ] || comps=(kube etcd containerd coredns registry kueue)
for c in "${comps[@]}"; do build_one "$c"; done
