#!/usr/bin/env bash
# workload_images: the Dockerfiles under images/ must mirror `make install` (no Docker
# engine here, so check it statically): every path a final stage copies out of the
# build stage's /out must be produced by `make install DESTDIR=... PREFIX=/usr/local`,
# the build stage must run exactly `make` + `make install DESTDIR=/out PREFIX=/usr/local`,
# and every base image must have a tag that is not :latest (a versioned one, else a note),
# or be one of ours (mpik8s/NAME, built from images/NAME/Dockerfile first).
# timeout: 300
set -u
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$ROOT"
TMP=$(mktemp -d /tmp/workload-images.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
fails=0 pending=()
ok()  { echo "ok   - $*"; }
bad() { echo "FAIL - $*"; fails=$((fails+1)); }

if ! make -s install DESTDIR="$TMP/stage" PREFIX=/usr/local MODE="${MODE:-release}" >"$TMP/install.log" 2>&1; then
  tail -n 20 "$TMP/install.log"; bad "make install into a temporary DESTDIR failed"; exit 1
fi
for p in cnn-bench allreduce-bench mpi-pi; do
  [ -x "$TMP/stage/usr/local/bin/$p" ] && ok "make install puts $p in \$PREFIX/bin" || bad "make install lacks bin/$p"
done

# Which component or toolchain produces a path (for paths not built on this machine).
producer_missing() {
  case "$1" in
    */bin/mpi-operator) [ ! -f controller/main.c ] && echo "controller/main.c not written yet" ;;
    */bin/mpi-agent) [ ! -f agent/main.c ] && echo "agent/main.c not written yet" ;;
    */lib/mpi-k8s/bundle*) grep -qs install-rsh-bundle rsh/module.mk agent/module.mk || echo "no INSTALL_HOOKS target installs the bundle yet" ;;
    */bin/*-gpu) [ -x /usr/local/cuda/bin/nvcc ] || echo "no CUDA here (built in the image's CUDA stage)" ;;
    */bin/*-mpich) command -v mpicc.mpich >/dev/null || echo "no MPICH here (built in the image)" ;;
  esac
}

for df in images/*/Dockerfile; do
  name=$(basename "$(dirname "$df")")
  # Join continuation lines so multi-line RUN/COPY instructions read as one.
  joined=$(sed -e ':a' -e '/\\$/N; s/\\\n/ /; ta' "$df")
  while read -r _ image _; do
    # FROM ${ARG}: the ARG's default (what a plain `docker build` uses)
    if [[ $image =~ ^\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?$ ]]; then
      image=$(echo "$joined" | sed -n "s/^ARG ${BASH_REMATCH[1]}=//p" | head -1)
      [ -n "$image" ] || { bad "$df: FROM names an ARG without a default"; continue; }
    fi
    case "$image" in
      mpik8s/*|docker.io/mpik8s/*)   # ours: made by `make images` first, with its tag
        [ -f "images/$(basename "${image%%:*}")/Dockerfile" ] && ok "$df: base image $image is built here first" ||
          bad "$df: base image $image is not one of images/*/Dockerfile" ;;
      *:latest|*:latest-*) bad "$df: base image $image uses :latest" ;;
      *:*[0-9]*) ok "$df: base image $image is pinned" ;;
      *:*) echo "note - $df: base image $image follows a release name, not a point release" ;;
      *) bad "$df: base image $image has no tag" ;;
    esac
  done < <(echo "$joined" | grep -E '^FROM ')
  if echo "$joined" | grep -E '^RUN ' | grep -qE 'make[^&]* install DESTDIR=/out PREFIX=/usr/local'; then
    ok "$df: build stage runs make install DESTDIR=/out PREFIX=/usr/local"
  else
    if grep -q -- '--from=build /out' "$df"; then bad "$df: copies from /out but never runs make install DESTDIR=/out PREFIX=/usr/local"; fi
    continue
  fi
  srcs=$(echo "$joined" | grep -E '^COPY +--from=build ' | sed -E 's/^COPY +--from=build +//' |
         awk '{for (i = 1; i < NF; i++) print $i}' | grep '^/out/')
  [ -n "$srcs" ] || bad "$df: copies nothing out of /out"
  for s in $srcs; do
    rel=${s#/out}
    if [[ $rel == *[*?]* ]]; then    # a glob: it must match something make install produced
      if compgen -G "$TMP/stage$rel" >/dev/null; then
        ok "$name: $rel matches $(cd "$TMP/stage" && compgen -G "${rel#/}" | tr '\n' ' ')"
      else
        bad "$name: $df copies $rel, which matches nothing make install produces"
      fi
      continue
    fi
    if [ -e "$TMP/stage$rel" ]; then
      ok "$name: $rel is produced by make install"
    elif why=$(producer_missing "$rel") && [ -n "$why" ]; then
      echo "note - $name: $rel not installed here: $why"; pending+=("$name:$rel")
    else
      bad "$name: $df copies $rel, which make install does not produce"
    fi
  done
done

if [ $fails -ne 0 ]; then echo "workload_images: $fails check(s) failed"; exit 1; fi
if [ ${#pending[@]} -ne 0 ]; then
  echo "workload_images: skipped: waiting for other components: ${pending[*]}"; exit 77
fi
echo "workload_images: all checks passed"
