#!/usr/bin/env bash
# tests/krew/build.sh: build krew, kubectl's plugin manager (sigs.k8s.io/krew), from the Go module
# proxy, cached on this machine and keyed by version, as tests/k8s/build.sh builds the real
# cluster's components; tests/integration/krew_install.sh installs `kubectl mpijob` with it.
#
#   tests/krew/build.sh           build kubectl-krew unless cached; print its directory
#   tests/krew/build.sh --bindir  print that directory (no build)
#
# KREW_VERSION (default: tests/krew/go/.version) picks the version: the pinned one's go.mod and
# go.sum are committed in tests/krew/go/; for another one a go.mod is generated and resolved with
# `go mod tidy` in the cache. Only Go modules are downloaded. Cache: $K8S_CACHE (default
# /var/cache/mpi-k8s): bin/krew-<version>/kubectl-krew (the name kubectl runs `kubectl krew` by)
# and a .stamp with the digest of the module files that built it. A cold build is niced.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
KREW_VERSION=${KREW_VERSION:-$(cat "$HERE/go/.version")}
K8S_CACHE=${K8S_CACHE:-/var/cache/mpi-k8s}
export GOFLAGS="${GOFLAGS:-} -trimpath -buildvcs=false"
die() { echo "krew build: $*" >&2; exit 1; }
out="$K8S_CACHE/bin/krew-$KREW_VERSION"
if [ "${1:-}" = --bindir ]; then echo "$out"; exit 0; fi
[ $# -eq 0 ] || die "usage: tests/krew/build.sh [--bindir]"
command -v go >/dev/null || PATH=$PATH:/usr/local/go/bin
command -v go >/dev/null || die "go not found (expected /usr/local/go/bin/go)"

# The module dir: the committed one when it pins KREW_VERSION, else one tidied in the cache.
module_dir() {
  local d="$HERE/go" w
  if [ "$(cat "$d/.version")" = "$KREW_VERSION" ]; then echo "$d"; return; fi
  w="$K8S_CACHE/mod/krew-$KREW_VERSION"
  if [ ! -f "$w/go.sum" ]; then
    mkdir -p "$w"
    printf 'module mpik8s.local/krew\ngo %s.0\ntool sigs.k8s.io/krew/cmd/krew\nrequire sigs.k8s.io/krew v%s\n' \
      "$(go env GOVERSION | sed 's/^go\([0-9]*\.[0-9]*\).*/\1/')" "$KREW_VERSION" >"$w/go.mod.new"
    mv "$w/go.mod.new" "$w/go.mod"
    (cd "$w" && GOFLAGS= go mod tidy >&2) || die "krew v$KREW_VERSION: go mod tidy failed (is v$KREW_VERSION served?)"
  fi
  echo "$w"
}

d=$(module_dir)
digest=$(cd "$d" && cat go.mod go.sum | sha256sum | cut -c1-16)
stamp="$out/.stamp"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$digest" ] && [ -x "$out/kubectl-krew" ]; then echo "$out"; exit 0; fi
# one build at a time: a second caller waits here, then finds the stamp
mkdir -p "$(dirname "$out")"
exec {lk}>"$out.lock"
flock "$lk" || die "cannot lock $out.lock"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$digest" ] || [ ! -x "$out/kubectl-krew" ]; then
  echo "krew build: krew v$KREW_VERSION (cold: 1 to 3 minutes; cached in $out)" >&2
  s=$SECONDS
  rm -rf "$out.tmp"; mkdir -p "$out.tmp"
  # the version stamp upstream's release sets (hack/make-binaries.sh), so that `kubectl krew
  # version` names it; pure Go, so static
  (cd "$d" && CGO_ENABLED=0 nice -n 19 go build \
    -ldflags "-s -w -X sigs.k8s.io/krew/internal/version.gitTag=v$KREW_VERSION" -o "$out.tmp/" tool) ||
    die "krew v$KREW_VERSION: go build failed"
  mv "$out.tmp/krew" "$out.tmp/kubectl-krew"
  echo "$digest" >"$out.tmp/.stamp"
  rm -rf "$out"; mv "$out.tmp" "$out"
  echo "krew build: krew v$KREW_VERSION built in $((SECONDS - s)) s" >&2
fi
exec {lk}>&-
echo "$out"
