#!/usr/bin/env bash
# lib_client: the C client library (libkube) against kubesim: CRUD, Status
# decoding (404/409/422), pagination, the status subresource, and an informer
# that must keep working across `kubesim fault restart-apiserver`. The checks
# live in tests/unit/test_lib_kubesim.c (skipped outside kubesim); this script
# runs it inside the cluster and performs the restart between marker files.
# timeout: 180
set -euo pipefail
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
MODE=${MODE:-release}
KS=$ROOT/tests/kubesim/kubesim
T=$ROOT/build/$MODE/tests/test_lib_kubesim
log() { printf '%s [lib_client] %s\n' "$(date -u +%H:%M:%S.%3N)" "$*" >&2; }
[ -x "$KS" ] || { echo "no kubesim"; exit 77; }
make -s -C "$ROOT" MODE="$MODE" "build/$MODE/tests/test_lib_kubesim" >/dev/null || { log "cannot build $T"; exit 1; }
D=$(mktemp -d /tmp/lib-it-XXXXXX)
pid=
cleanup() {
  rc=$?
  [ -n "$pid" ] && kill "$pid" 2>/dev/null || true
  if [ $rc -ne 0 ]; then
    [ -f "$D/out" ] && { log "--- test output"; tail -n 40 "$D/out" >&2; }
    [ -f "$D/apiserver.log" ] && { log "--- apiserver.log"; tail -n 15 "$D/apiserver.log" >&2; }
  fi
  timeout 60 "$KS" down --dir "$D" >/dev/null 2>&1 || true
  rm -rf "$D"
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM
timeout 60 "$KS" up --dir "$D" >"$D/up.log" 2>&1 || { cat "$D/up.log" >&2; log "kubesim up failed"; exit 1; }
timeout -k 5 120 "$KS" run --dir "$D" -- "$T" >"$D/out" 2>&1 & pid=$!
for _ in $(seq 600); do [ -e "$D/lib-ready" ] && break; kill -0 $pid 2>/dev/null || break; sleep 0.1; done
[ -e "$D/lib-ready" ] || { wait $pid || true; log "the test never reached the restart point"; exit 1; }
log "restarting the API server"
timeout 60 "$KS" fault --dir "$D" restart-apiserver >/dev/null
touch "$D/lib-restarted"
rc=0; wait $pid || rc=$?; pid=
cat "$D/out"
[ $rc -eq 0 ] || { log "test_lib_kubesim failed (rc $rc)"; exit 1; }
grep -q "PASSED  \] 4 test(s)" "$D/out" || { log "not all 4 tests ran (skipped?)"; exit 1; }
log "ok"
