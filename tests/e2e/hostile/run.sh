#!/usr/bin/env bash
# tests/e2e/hostile/run.sh - the C clients against tests/e2e/hostile/server.py, one
# server per mode. For each mode and client (mpi-agent status, mpi-rsh, mpi-operator) it
# records exit code, seconds, peak RSS (/usr/bin/time -f %M) and the error's first line,
# and judges: no death by a signal, a non-zero exit within the bound for the one-shot
# clients (agent, rsh) - the operator instead must stay up (it retries) or exit cleanly -
# peak RSS under RSS_MAX_KB, and a clean error: at most MAX_ERR_LINES lines of stderr,
# none longer than MAX_LINE bytes, no raw control characters.
# Usage: run.sh [MODE...]   (default: all). Prints a table; exit 1 if any check failed.
# Needs no root and no kubesim. Env: BINDIR, BOUND (s, default 60), RSS_MAX_KB (131072: the
# library caps one reply at 64 MiB; a copy plus parsing stays below 128 MiB), OP_RSS_MAX_KB
# (98304 for mpi-operator: its caches list one at a time, so at most one capped reply is held
# whatever the number of caches), CLIENTS (default "agent rsh operator"), OP_SECS (how long the operator runs, 12).
set -u
here=$(cd "$(dirname "$0")" && pwd)
ROOT=${ROOT:-$(cd "$here/../../.." && pwd)}
BINDIR=${BINDIR:-$ROOT/bin}
BOUND=${BOUND:-60}
RSS_MAX_KB=${RSS_MAX_KB:-131072}
OP_RSS_MAX_KB=${OP_RSS_MAX_KB:-98304}
# under `make asan`, ASan's quarantine (256 MB) keeps freed reply buffers mapped and would
# count against the RSS bounds; harmless for release binaries
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0
MAX_ERR_LINES=${MAX_ERR_LINES:-12}
MAX_LINE=${MAX_LINE:-2048}
OP_SECS=${OP_SECS:-12}
modes=("$@")
[ ${#modes[@]} -gt 0 ] || modes=(truncated short-body wrong-types enormous huge-header huge-status slow-drip
                                  garbage deep-nesting watch-garbage chunked-lie close)
W=$(mktemp -d /tmp/e2e-hostile.XXXXXX)
SRV=
cleanup() {
  [ -n "$SRV" ] && kill "$SRV" 2>/dev/null
  [ -n "$SRV" ] && wait "$SRV" 2>/dev/null
  [ -n "${KEEP:-}" ] || rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
for b in mpi-agent mpi-rsh mpi-operator; do
  [ -x "$BINDIR/$b" ] || { echo "missing $BINDIR/$b (run make)"; exit 77; }
done

fails=0
printf '| mode | client | rc | s | peak RSS MB | verdict | first error line |\n|---|---|---|---|---|---|---|\n'
for m in "${modes[@]}"; do
  rm -f "$W/port"
  python3 "$here/server.py" "$m" "$W/port" 2>"$W/server-$m.log" &
  SRV=$!
  for _ in $(seq 400); do [ -s "$W/port" ] && break; sleep 0.05; done
  [ -s "$W/port" ] || { echo "hostile server ($m) did not start"; cat "$W/server-$m.log"; exit 1; }
  port=$(cat "$W/port")
  cat >"$W/kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters: [{name: h, cluster: {server: "http://127.0.0.1:$port"}}]
users: [{name: h, user: {token: hostile-secret-token-0123456789}}]
contexts: [{name: h, context: {cluster: h, user: h, namespace: default}}]
current-context: h
EOF
  for c in ${CLIENTS:-agent rsh operator}; do
    case $c in
      agent) cmd=("$BINDIR/mpi-agent" status -n default --kubeconfig "$W/kubeconfig" j); lim=$BOUND ;;
      rsh) cmd=("$BINDIR/mpi-rsh" --kubeconfig "$W/kubeconfig" --namespace default j-worker-0 true); lim=$BOUND ;;
      operator) cmd=("$BINDIR/mpi-operator" --kubeconfig "$W/kubeconfig" --leader-elect=false --namespace default); lim=$OP_SECS ;;
    esac
    start=$(date +%s%N)
    if [ "$c" = operator ]; then
      # long-running: sample its peak RSS while it runs, then SIGTERM; it must exit
      # (gracefully) within 10 s
      "${cmd[@]}" </dev/null >"$W/out" 2>"$W/err" &
      opid=$!
      sleep "$lim"
      rss=$(awk '/^VmHWM/ { print $2 }' "/proc/$opid/status" 2>/dev/null || echo 0)
      alive=0; kill -0 "$opid" 2>/dev/null && alive=1
      kill -TERM "$opid" 2>/dev/null
      for _ in $(seq 50); do kill -0 "$opid" 2>/dev/null || break; sleep 0.2; done
      termed=1; kill -0 "$opid" 2>/dev/null && { termed=0; kill -KILL "$opid"; }
      { wait "$opid"; } 2>/dev/null; rc=$?
      sig=; [ $rc -gt 128 ] && [ $rc -lt 160 ] && [ $rc -ne 143 ] && [ $rc -ne 137 ] && sig=$((rc - 128))
    else
      MPI_JOB_TRANSPORT=exec MPI_JOB_WORKER_CONTAINER=worker \
        /usr/bin/time -f '%M' -o "$W/rss" timeout -k 5 "$lim" "${cmd[@]}" </dev/null >"$W/out" 2>"$W/err"
      rc=$?
      rss=$(tail -n1 "$W/rss" 2>/dev/null | grep -E '^[0-9]+$' || echo 0)
      # a death by signal: timeout re-raises it and /usr/bin/time notes "terminated by signal N"
      sig=$(grep -ao 'terminated by signal [0-9]*' "$W/rss" 2>/dev/null | grep -o '[0-9]*$')
    fi
    ms=$(( ($(date +%s%N) - start) / 1000000 ))
    rss=${rss:-0}
    first=$(grep -av '^\s*$' "$W/err" | head -n1 | cut -c1-150 | tr '|' '/')
    nlines=$(wc -l <"$W/err")
    longest=$(awk '{ if (length($0) > m) m = length($0) } END { print m + 0 }' "$W/err")
    verdict=ok
    if [ -n "$sig" ] && [ "$sig" != 15 ] && [ "$sig" != 9 ]; then verdict="died by signal $sig"
    elif [ "$c" != operator ] && { [ $rc -eq 124 ] || [ $rc -eq 137 ]; }; then verdict="HANG (killed after ${lim}s)"
    elif [ "$c" != operator ] && [ $rc -eq 0 ]; then verdict="exit 0 on a hostile server"
    elif [ "$c" = operator ] && [ "$rss" -gt "$OP_RSS_MAX_KB" ]; then verdict="peak RSS ${rss} kB > ${OP_RSS_MAX_KB}"
    elif [ "$rss" -gt "$RSS_MAX_KB" ]; then verdict="peak RSS ${rss} kB > ${RSS_MAX_KB}"
    elif [ "$c" = operator ] && [ "$alive" = 0 ] && [ $rc -eq 0 ]; then verdict="operator exited 0 on its own"
    elif [ "$c" = operator ] && [ "$termed" = 0 ]; then verdict="no exit within 10 s of SIGTERM"
    elif [ "$nlines" -gt "$MAX_ERR_LINES" ] && [ "$c" != operator ]; then verdict="$nlines lines of errors"
    elif [ "$longest" -gt "$MAX_LINE" ]; then verdict="error line of $longest bytes"
    elif LC_ALL=C grep -q $'[\x01-\x08\x0b\x0c\x0e-\x1f\x7f]' "$W/err"; then verdict="raw control characters in errors"
    elif grep -aq 'hostile-secret-token' "$W/err" "$W/out"; then verdict="token printed"
    fi
    [ "$verdict" = ok ] || fails=$((fails + 1))
    printf '| %s | %s | %s | %s | %s | %s | %s |\n' "$m" "$c" "$rc" "$((ms / 1000)).$(( (ms % 1000) / 100 ))" \
      "$((rss / 1024))" "$verdict" "$first"
    cp "$W/err" "$W/err-$m-$c"
  done
  kill "$SRV" 2>/dev/null; wait "$SRV" 2>/dev/null; SRV=
done
echo
echo "hostile: $fails failed checks"
[ $fails -eq 0 ]
