#!/usr/bin/env bash
# rsh_exec_ws.sh - mpi-rsh's exec client against an independent WebSocket peer
# (aiohttp, tests/integration/rsh_wsserver.py, which runs the command locally):
# exit codes, signals, stdin EOF, big stdout, stderr, ssh quoting, v4 fallback,
# abrupt close after the status, missing status, cut streams and the reattach after a cut, refusals and retries,
# pings both ways, TLS + token (wrong CA, bad token), SIGTERM with remote kill.
# timeout: 240
set -u
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
BINDIR=${BINDIR:-$ROOT/bin}
RSH=$BINDIR/mpi-rsh
PY=/usr/bin/python3
[ -x "$RSH" ] || { echo "no $RSH (build first)"; exit 1; }
$PY -c 'import aiohttp' 2>/dev/null || { echo "python3-aiohttp not installed"; exit 77; }
W=$(mktemp -d /tmp/rsh-ws.XXXXXX)
SRV_PID=
cleanup() { [ -n "$SRV_PID" ] && kill "$SRV_PID" 2>/dev/null; wait 2>/dev/null; rm -rf "$W"; }
trap cleanup EXIT
fails=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fails=$((fails+1)); }
check() { # check NAME WANT GOT
  if [ "$2" == "$3" ]; then ok "$1"; else bad "$1: want [$2] got [$3]"; fi
}

# start_server MODE [extra args] -> writes $W/kc (kubeconfig)
start_server() {
  local mode=$1; shift
  [ -n "$SRV_PID" ] && { kill "$SRV_PID" 2>/dev/null; wait "$SRV_PID" 2>/dev/null; }
  rm -f "$W/port" "$W/log"
  $PY "$ROOT/tests/integration/rsh_wsserver.py" --port-file "$W/port" --log "$W/log" --mode "$mode" "$@" \
    >>"$W/server.out" 2>&1 &
  SRV_PID=$!
  for _ in $(seq 100); do [ -s "$W/port" ] && break; sleep 0.05; done
  [ -s "$W/port" ] || { echo "server did not start"; cat "$W/server.out"; exit 1; }
  PORT=$(cat "$W/port")
  write_kc "http://127.0.0.1:$PORT" "" ""
}
write_kc() { # SERVER CA_DATA TOKEN
  { echo "apiVersion: v1"; echo "kind: Config"; echo "clusters:"; echo "- name: c"; echo "  cluster:"
    echo "    server: $1"; [ -n "$2" ] && echo "    certificate-authority-data: $2"
    echo "contexts:"; echo "- name: c"; echo "  context: {cluster: c, user: u, namespace: ns1}"
    echo "current-context: c"; echo "users:"; echo "- name: u"; echo "  user:"
    if [ -n "$3" ]; then echo "    token: $3"; else echo "    {}"; fi; } > "$W/kc"
}
export KUBECONFIG=$W/kc
unset MPI_JOB_NAMESPACE MPI_JOB_WORKER_CONTAINER MPI_JOB_TRANSPORT
export MPI_RSH_ATTEMPTS=3
R() { timeout 30 "$RSH" "$@"; }

start_server normal
# --- exit codes (never 0 unless remote 0), signal death
for c in 0 1 3 255; do R -n w-0 "exit $c"; check "exit $c" "$c" "$?"; done
R -n w-0 'kill -9 $$'; check "killed by SIGKILL -> 137" 137 $?
R -n w-0 'kill -TERM $$'; check "killed by SIGTERM -> 143" 143 $?
grep -q "command=%2Fbin%2Fsh&command=-c&command=export" "$W/log" || grep -q "command=/bin/sh&command=-c&command=export" "$W/log" \
  && ok "URL is command=/bin/sh&command=-c&command=..." || bad "URL shape: $(tail -3 "$W/log")"

# --- stdout / stderr separation, big stdout intact, stdin with EOF
out=$(R -n w-0 'echo to-out; echo to-err >&2' 2>"$W/err"); check "stdout only" "to-out" "$out"; check "stderr only" "to-err" "$(cat "$W/err")"
want=$(head -c 100000000 /dev/urandom | tee "$W/big" | sha256sum | cut -d' ' -f1)
got=$(R -n w-0 "cat $W/big" | sha256sum | cut -d' ' -f1); check "100 MB stdout sha256" "$want" "$got"
head -c 10000000 /dev/urandom > "$W/in10"
got=$(R w-0 'wc -c' < "$W/in10"); check "10 MB stdin + EOF (wc -c)" 10000000 "$got"
got=$(R w-0 'sha256sum' < "$W/in10" | cut -d' ' -f1); check "10 MB stdin intact" "$(sha256sum < "$W/in10" | cut -d' ' -f1)" "$got"
got=$(printf 'a\nb\n' | R w-0 'cat; echo done'); check "stdin then more output after EOF" "$(printf 'a\nb\ndone')" "$got"
got=$(R w-0 'cat' < /dev/null); check "stdin /dev/null" "" "$got"
grep -q "stdin EOF" "$W/log" && ok "[255,0] sent on EOF" || bad "no stdin EOF seen by server"

# --- quoting: identical to ssh, i.e. sh -c "<words joined by single spaces>"
q=0
while IFS= read -r -d '' line; do
  eval "set -- $line"
  want=$(/bin/sh -c "$*" 2>&1; echo "rc=$?")
  got=$(R -n w-0 "$@" 2>&1; echo "rc=$?")
  [ "$want" == "$got" ] || { bad "quoting [$line]: want [$want] got [$got]"; q=1; }
done < <(printf '%s\0' \
  "printf '<%s>\\\\n' 'a b' c" \
  "echo \"a  b\"   'c   d'" \
  "echo '\$HOME' \\\$0" \
  "echo one ';' echo two" \
  "'echo a; echo b'" \
  "echo /etc/host*" \
  "echo '/etc/host*'" \
  "printf '[%s]' '' x ''" \
  "'' echo empty-first" \
  "echo \"it's\" 'say \"hi\"'" \
  "echo \$'line1\\nline2'" \
  "'printf \"%s\\n\" \"\$@\"' x y" \
  "echo a\\ \\ b \\\\ \\\`" \
  "exit" \
  "'(exit 7)'")
[ $q -eq 0 ] && ok "quoting matches /bin/sh -c \"\$*\" for 15 argument sets"

# --- API refusals: Status message, 255, bounded retries
for code in 403 404 500; do
  start_server "http:$code"
  msg=$(R -n w-0 true 2>&1); rc=$?
  check "HTTP $code -> 255" 255 $rc
  case $code in 403) pat='forbidden';; 404) pat='not found';; 500) pat='boom 500';; esac
  [[ "$msg" == *"$pat"* && "$msg" == *"HTTP $code"* ]] && ok "HTTP $code message: $msg" || bad "HTTP $code message: $msg"
  n=$(grep -c '^upgrade' "$W/log")
  if [ $code = 500 ]; then check "500 retried MPI_RSH_ATTEMPTS=3 times" 3 "$n"; else check "$code not retried" 1 "$n"; fi
done
start_server "fail:2"
out=$(R -n w-0 'echo third-time'); check "503 twice then success" "third-time/0" "$out/$?"
start_server normal
kill "$SRV_PID"; wait "$SRV_PID" 2>/dev/null; SRV_PID=
t0=$(date +%s%N); msg=$(R -n w-0 true 2>&1); rc=$?; ms=$(( ($(date +%s%N)-t0)/1000000 ))
check "connection refused -> 255" 255 $rc
[[ "$msg" == *"gave up after 3 attempts"* ]] && ok "refused: $msg (${ms} ms)" || bad "refused message: $msg"

# --- protocol variants and broken streams
start_server v4pick
out=$(R -n w-0 'echo v4; exit 4'); check "v4 negotiated: output and exit code" "v4/4" "$out/$?"
grep -q "v5.channel.k8s.io', 'v4.channel.k8s.io'" "$W/log" && ok "offered v5 then v4" || bad "offer: $(cat "$W/log")"
start_server v5refuse403
out=$(R -n w-0 'echo fell-back'); check "v5 refused (403) -> retry with v4 only" "fell-back/0" "$out/$?"
grep -q "offered=\['v4.channel.k8s.io'\]" "$W/log" && ok "second upgrade offered v4 only" || bad "fallback log: $(cat "$W/log")"
start_server abrupt
out=$(R -n w-0 'echo x; exit 3'); check "status then abrupt TCP close -> status wins" "x/3" "$out/$?"
start_server badclose
R -n w-0 'exit 5'; check "status then close 4000 -> status wins" 5 $?
start_server nostatus
msg=$(MPI_RSH_REATTACH_S=0 R -n w-0 'exit 0' 2>&1); rc=$?; check "no status, no reattach -> 255 even though the command exited 0" 255 $rc
[[ "$msg" == *"without an exit status"* ]] && ok "no status message: $msg" || bad "no status message: $msg"
msg=$(R -n w-0 'exit 0' 2>&1); rc=$?; check "no status: the reattach reads the code the command left (0)" 0 $rc
[[ "$msg" == *"reattaching"* ]] && ok "  $msg" || bad "  no reattach line: $msg"

# --- reattach (docs/rsh.md "Reattach"): the stream cut without a status while the command runs
# on, as a kubelet restart does: mpi-rsh execs again, waits for the session, exits with its code
start_server cutonce:1
t0=$(date +%s%N); R -n w-0 'echo before; sleep 3; exit 7' >"$W/ra.out" 2>"$W/ra.err"; rc=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
check "cut, reattached: the command's exit code (${ms} ms)" 7 $rc
check "  output before the cut" before "$(cat "$W/ra.out")"
grep -q "reattaching (up to 60 s)" "$W/ra.err" && grep -q "reattached: the session runs on" "$W/ra.err" \
  && ok "  $(tr '\n' ' ' < "$W/ra.err")" || bad "  stderr: $(cat "$W/ra.err")"
check "  3 upgrades (the stream, the look, the wait)" 3 "$(grep -c '^upgrade' "$W/log")"
[ $ms -lt 8000 ] && ok "  within 8 s" || bad "  took $ms ms"
start_server cutonce:1
msg=$(MPI_RSH_REATTACH_S=0 R -n w-0 'sleep 3; exit 7' 2>&1); rc=$?
check "MPI_RSH_REATTACH_S=0: cut -> 255" 255 $rc
[[ "$msg" == *"without an exit status"* && "$msg" != *reattach* ]] && ok "  $msg" || bad "  $msg"
start_server cutonce:1
R -n w-0 'sleep 30' 2>"$W/rk.err" & rp=$!
for _ in $(seq 50); do grep -q '^cut' "$W/log" && break; sleep 0.1; done
rpid=$(sed -n 's/^pid //p' "$W/log" | head -1)
sleep 1.5; kill -KILL -- -"$rpid" 2>/dev/null
wait $rp; rc=$?
check "cut, then the session killed: 255" 255 $rc
grep -q "reattach failed: the session's processes are gone" "$W/rk.err" && ok "  $(tail -1 "$W/rk.err")" || bad "  $(cat "$W/rk.err")"
start_server cutonce:1:404
t0=$(date +%s%N); msg=$(R -n w-0 'sleep 3; exit 0' 2>&1); rc=$?; ms=$(( ($(date +%s%N) - t0) / 1000000 ))
check "cut, then the pod gone (404): 255 after the 15 s grace for a restarting kubelet (${ms} ms)" 255 $rc
[[ "$msg" == *"reattach failed"*"not found"*"(for 15 s)"* ]] && [ $ms -ge 15000 ] && [ $ms -lt 20000 ] && ok "  $msg" || bad "  $msg ($ms ms)"
start_server cutonce:1
MPI_RSH_REATTACH_S=3 R -n w-0 'sleep 3; exit 0' 2>"$W/rg.err" & rp=$!
for _ in $(seq 50); do grep -q '^cut' "$W/log" && break; sleep 0.1; done
kill "$SRV_PID"; wait "$SRV_PID" 2>/dev/null; SRV_PID=
t0=$(date +%s%N); wait $rp; rc=$?; ms=$(( ($(date +%s%N) - t0) / 1000000 ))
check "cut, then no API server: 255 within the bound" 255 $rc
grep -q "reattach failed: no answer within" "$W/rg.err" && ok "  $(tail -1 "$W/rg.err") (${ms} ms)" || bad "  $(cat "$W/rg.err")"
start_server cutonce:1
"$RSH" -n w-0 'sleep 30' 2>"$W/rt.err" & rp=$!
for _ in $(seq 50); do grep -q '^cut' "$W/log" && break; sleep 0.1; done
rpid=$(sed -n 's/^pid //p' "$W/log" | head -1)
sleep 1; kill -TERM $rp; wait $rp; check "SIGTERM while reattached -> 143" 143 $?
for _ in $(seq 30); do kill -0 "$rpid" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$rpid" 2>/dev/null; then bad "  session $rpid survived"; kill -9 -- -"$rpid"; else ok "  session killed by the kill exec"; fi
start_server dropafter:1000000
R -n w-0 "cat $W/big" > "$W/cut" 2>"$W/cut.err"; rc=$?
check "stream cut after 1 MB -> 255" 255 $rc
check "bytes before the cut delivered" 1000000 "$(stat -c %s "$W/cut")"
start_server internal
msg=$(R -n w-0 true 2>&1); rc=$?; check "InternalError status -> 255" 255 $rc
[[ "$msg" == *"Internal error occurred"* ]] && ok "internal message: $msg" || bad "internal message: $msg"
start_server textframe
msg=$(R -n w-0 'echo hi' 2>&1); rc=$?; check "text frame -> protocol error 255" 255 $rc
[[ "$msg" == *"text message"* ]] && ok "text frame message: $msg" || bad "text frame message: $msg"

# --- pings: we answer the server's (heartbeat drops non-answering clients); we ping and detect a dead peer
start_server heartbeat
out=$(R -n w-0 'sleep 1.5; echo alive'); check "answer server pings for 1.5 s" "alive/0" "$out/$?"
start_server noping
out=$(MPI_RSH_PING_MS=200 R -n w-0 'sleep 0.3; echo done'); check "client pings (unanswered, data in time)" "done/0" "$out/$?"
grep -q "ping (not answered)" "$W/log" && ok "client sent pings" || bad "no client ping seen"
msg=$(MPI_RSH_PING_MS=100 R -n w-0 'sleep 3' 2>&1); rc=$?; check "no pong, no data for 4 intervals -> 255" 255 $rc
[[ "$msg" == *"presumed dead"* ]] && ok "dead peer: $msg" || bad "dead peer message: $msg"

# --- SIGTERM: exit 143, the remote process is killed by the second exec
start_server orphan
"$RSH" -n w-0 'sleep 60' & rp=$!
for _ in $(seq 50); do grep -q '^pid' "$W/log" && break; sleep 0.1; done
rpid=$(sed -n 's/^pid //p' "$W/log" | head -1)
sleep 0.3
kill -TERM $rp; wait $rp; check "SIGTERM -> 143" 143 $?
for _ in $(seq 30); do kill -0 "$rpid" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$rpid" 2>/dev/null; then bad "remote process $rpid survived"; kill -9 "$rpid"; else ok "remote process killed by the kill exec"; fi
# signal once the remote command runs (an async command of a script starts with SIGINT ignored
# until mpi-rsh installs its handlers)
started() { for _ in $(seq 100); do [ "$(grep -c '^pid' "$W/log")" -ge "$1" ] && return 0; sleep 0.1; done; return 1; }
n=$(grep -c '^pid' "$W/log")
"$RSH" -n w-0 'sleep 60' & rp=$!; started $((n+1)); kill -INT $rp; wait $rp; check "SIGINT -> 130" 130 $?
n=$(grep -c '^pid' "$W/log")
"$RSH" -n w-0 'sleep 60' & rp=$!; started $((n+1)); kill -HUP $rp; wait $rp; check "SIGHUP -> 129" 129 $?
# SIGTERM while mpi-rsh is blocked writing to a reader that stopped reading (a stalled orted):
# it still ends at once with 143 (it used to sit in write() until the reader went away)
mkfifo "$W/stall"
sleep 60 <"$W/stall" & stall=$!          # holds the read end open, never reads
n=$(grep -c '^pid' "$W/log")
"$RSH" -n w-0 'yes stalled-reader-line' >"$W/stall" & rp=$!; started $((n+1))
sleep 1                                  # the 64 KiB pipe is full long before
t0=$(date +%s%N); kill -TERM $rp
for _ in $(seq 50); do kill -0 $rp 2>/dev/null || break; sleep 0.1; done
if kill -0 $rp 2>/dev/null; then bad "SIGTERM during a stalled write: mpi-rsh still running after 5 s"; kill -9 $rp; fi
wait $rp; rc=$?; ms=$(( ($(date +%s%N) - t0) / 1000000 ))
check "SIGTERM during a write to a stalled reader -> 143 (${ms} ms)" 143 $rc
kill $stall 2>/dev/null; wait $stall 2>/dev/null
sleep 1.5
for p in $(sed -n 's/^pid //p' "$W/log"); do kill -0 "$p" 2>/dev/null && { bad "orphan $p left"; kill -9 "$p"; }; done

# --- TLS with a token; wrong CA; bad token
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 -subj /CN=test-ca \
  -addext "subjectAltName=IP:127.0.0.1" -keyout "$W/key.pem" -out "$W/cert.pem" 2>/dev/null
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 -subj /CN=other-ca \
  -keyout "$W/okey.pem" -out "$W/other.pem" 2>/dev/null
start_server normal --cert "$W/cert.pem" --key "$W/key.pem" --token s3cret
write_kc "https://127.0.0.1:$PORT" "$(base64 -w0 < "$W/cert.pem")" s3cret
out=$(R -n w-0 'echo tls; exit 2'); check "HTTPS + token" "tls/2" "$out/$?"
got=$(R w-0 'sha256sum' < "$W/in10" | cut -d' ' -f1; echo "rc=${PIPESTATUS[0]}")
check "10 MB stdin over TLS (partial TLS writes retried with the same buffer)" "$(sha256sum < "$W/in10" | cut -d' ' -f1) rc=0" "$(echo $got)"
write_kc "https://127.0.0.1:$PORT" "$(base64 -w0 < "$W/other.pem")" s3cret
msg=$(R -n w-0 true 2>&1); rc=$?; check "wrong CA -> 255" 255 $rc
[[ "$msg" == *[Cc]ertificate* || "$msg" == *TLS* || "$msg" == *verif* ]] && ok "wrong CA: $msg" || bad "wrong CA message: $msg"
write_kc "https://127.0.0.1:$PORT" "$(base64 -w0 < "$W/cert.pem")" wrong-token
msg=$(R -n w-0 true 2>&1); rc=$?; check "bad token -> 255" 255 $rc
[[ "$msg" == *"HTTP 401"* ]] && ok "bad token: $msg" || bad "bad token message: $msg"


# --- the rest of the TLS configuration (lib/tls_ctx.c): client certificate from files and
# from -data, its absence, tls-server-name (right and wrong), insecure-skip-tls-verify
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 -subj /CN=client-ca \
  -keyout "$W/cakey.pem" -out "$W/ca.pem" 2>/dev/null
openssl req -x509 -CA "$W/ca.pem" -CAkey "$W/cakey.pem" -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 \
  -nodes -days 1 -subj /CN=user1 -keyout "$W/ukey.pem" -out "$W/ucert.pem" 2>/dev/null
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 -subj /CN=api \
  -addext "subjectAltName=DNS:api.example,IP:127.0.0.1" -keyout "$W/skey.pem" -out "$W/scert.pem" 2>/dev/null
start_server normal --cert "$W/scert.pem" --key "$W/skey.pem" --client-ca "$W/ca.pem"
kc_tls() { # SERVER-LINE-EXTRA USER-LINES
  { echo "apiVersion: v1"; echo "kind: Config"; echo "clusters:"; echo "- name: c"; echo "  cluster:"
    echo "    server: https://127.0.0.1:$PORT"; printf '%s\n' "$1"
    echo "contexts:"; echo "- name: c"; echo "  context: {cluster: c, user: u, namespace: ns1}"
    echo "current-context: c"; echo "users:"; echo "- name: u"; echo "  user:"; printf '%s\n' "$2"; } > "$W/kc"
}
CA="    certificate-authority: $W/scert.pem"
kc_tls "$CA" "    client-certificate: $W/ucert.pem
    client-key: $W/ukey.pem"
out=$(R -n w-0 'echo cert-files'); check "client certificate + key files" "cert-files/0" "$out/$?"
kc_tls "    certificate-authority-data: $(base64 -w0 < "$W/scert.pem")" "    client-certificate-data: $(base64 -w0 < "$W/ucert.pem")
    client-key-data: $(base64 -w0 < "$W/ukey.pem")"
out=$(R -n w-0 'echo cert-data'); check "client certificate + key data" "cert-data/0" "$out/$?"
kc_tls "$CA" "    {}"
msg=$(R -n w-0 true 2>&1); check "no client certificate -> 255" 255 $?
[[ "$msg" == *"TLS"* && "$msg" == *"client certificate"* && "$msg" != *attempts* ]] && ok "  $msg" || bad "  no client cert message: $msg"
kc_tls "$CA" "    client-certificate: $W/ucert.pem
    client-key: $W/okey.pem"
msg=$(R -n w-0 true 2>&1); check "key not matching the certificate -> 255" 255 $?
[[ "$msg" == *"client certificate/key"* && "$msg" == *"okey.pem"* && "$msg" == *"mismatch"* ]] && ok "  $msg" || bad "  mismatch message: $msg"
kc_tls "$CA" "    client-certificate: $W/nonexistent.pem
    client-key: $W/ukey.pem"
msg=$(R -n w-0 true 2>&1); check "missing client certificate file -> 255" 255 $?
[[ "$msg" == *"nonexistent.pem"* ]] && ok "  $msg" || bad "  missing file message: $msg"
kc_tls "$CA
    tls-server-name: api.example" "    client-certificate: $W/ucert.pem
    client-key: $W/ukey.pem"
out=$(R -n w-0 'echo sni'); check "tls-server-name matching the certificate" "sni/0" "$out/$?"
kc_tls "$CA
    tls-server-name: wrong.example" "    client-certificate: $W/ucert.pem
    client-key: $W/ukey.pem"
msg=$(R -n w-0 true 2>&1); check "tls-server-name not in the certificate -> 255" 255 $?
[[ "$msg" == *"not trusted"* && "$msg" == *"mismatch"* ]] && ok "  $msg" || bad "  name mismatch message: $msg"
kc_tls "    insecure-skip-tls-verify: true" "    client-certificate: $W/ucert.pem
    client-key: $W/ukey.pem"
out=$(R -n w-0 'echo insecure'); check "insecure-skip-tls-verify" "insecure/0" "$out/$?"

# --- TLS session resumption (lib/tls_session.c): the server (Python's ssl) says whether it resumed
resumed() { grep tls-resumed= "$W/log" | tail -1 | sed -n 's/.*tls-resumed=\([A-Za-z-]*\).*/\1/p'; }
export MPI_RSH_TLS_CACHE_DIR=$W/tls
kc_tls "$CA" "    client-certificate: $W/ucert.pem
    client-key: $W/ukey.pem"
out=$(R -n w-0 'echo s1'); check "session: first call" "s1/0/False" "$out/$?/$(resumed)"
check "session: cache directory is private" "700" "$(stat -c %a "$W/tls")"
check "session: one file, 0600" "1 600" "$(ls "$W/tls" | wc -l) $(stat -c %a "$W"/tls/*.tls)"
out=$(R -n w-0 'echo s2'); check "session: second call resumes" "s2/0/True" "$out/$?/$(resumed)"
for f in "$W"/tls/*.tls; do head -c 300 /dev/urandom > "$f"; done
out=$(R -n w-0 'echo s3'); check "session: garbage file -> full handshake" "s3/0/False" "$out/$?/$(resumed)"
out=$(R -n w-0 'echo s4'); check "session: rewritten, resumed again" "s4/0/True" "$out/$?/$(resumed)"
kc_tls "    certificate-authority-data: $(base64 -w0 < "$W/scert.pem")" "    client-certificate-data: $(base64 -w0 < "$W/ucert.pem")
    client-key-data: $(base64 -w0 < "$W/ukey.pem")"
out=$(R -n w-0 'echo s5'); check "session: another configuration is not resumed" "s5/0/False" "$out/$?/$(resumed)"
check "session: one file per configuration" "2" "$(ls "$W/tls" | wc -l)"
chmod 777 "$W/tls"; rm -f "$W"/tls/*.tls
out=$(R -n w-0 'echo s6'); check "session: world-writable directory unused" "s6/0/False/0" "$out/$?/$(resumed)/$(ls "$W/tls" | wc -l)"
out=$(R -n w-0 'echo s7'); check "session: ... and still no resumption" "s7/0/False" "$out/$?/$(resumed)"
chmod 700 "$W/tls"; ln -s "$W/elsewhere" "$W/tls2"; mkdir -p "$W/elsewhere"; chmod 700 "$W/elsewhere"
MPI_RSH_TLS_CACHE_DIR=$W/tls2 R -n w-0 true; check "session: symlinked directory unused" "0" "$(ls "$W/elsewhere" | wc -l)"
MPI_RSH_TLS_CACHE_DIR= R -n w-0 true; MPI_RSH_TLS_CACHE_DIR= R -n w-0 true
check "session: MPI_RSH_TLS_CACHE_DIR= turns it off" "False" "$(resumed)"
# a resumed session reads neither the CA nor the client certificate and key (lib/tls_ctx.c):
# spoilt after the first call, they still serve resumed calls; a full handshake names them
cp "$W/ucert.pem" "$W/lazycert.pem"; cp "$W/ukey.pem" "$W/lazykey.pem"; cp "$W/scert.pem" "$W/lazyca.pem"
mkdir -p "$W/tls3" && chmod 700 "$W/tls3"
kc_tls "    certificate-authority: $W/lazyca.pem" "    client-certificate: $W/lazycert.pem
    client-key: $W/lazykey.pem"
out=$(MPI_RSH_TLS_CACHE_DIR=$W/tls3 R -n w-0 'echo l1'); check "lazy: first call, full handshake" "l1/0/False" "$out/$?/$(resumed)"
# (the session's key covers each file's name, size and mtime: the spoilt copies keep those)
spoil() { head -c "$(stat -c %s "$1")" /dev/zero | tr '\0' x > "$1.tmp" && touch -r "$1" "$1.tmp" && mv "$1.tmp" "$1"; }
spoil "$W/lazykey.pem"; spoil "$W/lazycert.pem"; spoil "$W/lazyca.pem"
out=$(MPI_RSH_TLS_CACHE_DIR=$W/tls3 R -n w-0 'echo l2'); check "lazy: resumed without reading CA, cert or key" "l2/0/True" "$out/$?/$(resumed)"
rm -f "$W"/tls3/*.tls; cp "$W/scert.pem" "$W/lazyca.pem"; cp "$W/ucert.pem" "$W/lazycert.pem"
msg=$(MPI_RSH_TLS_CACHE_DIR=$W/tls3 R -n w-0 true 2>&1); check "lazy: full handshake with a spoilt key -> 255" 255 $?
[[ "$msg" == *"client certificate/key"* && "$msg" == *"lazykey.pem"* && "$msg" != *attempts* ]] && ok "  $msg" || bad "  spoilt key message: $msg"
echo garbage > "$W/lazyca.pem"
msg=$(MPI_RSH_TLS_CACHE_DIR=$W/tls3 R -n w-0 true 2>&1); check "lazy: full handshake with a spoilt CA file -> 255" 255 $?
[[ "$msg" == *"cannot load CA file"*"lazyca.pem"* && "$msg" != *attempts* ]] && ok "  $msg" || bad "  spoilt CA message: $msg"
unset MPI_RSH_TLS_CACHE_DIR

# --- an API server that accepts only TLS 1.3 (as --tls-min-version=VersionTLS13): it works
start_server normal --cert "$W/scert.pem" --key "$W/skey.pem" --tls13-only
kc_tls "$CA" "    {}"
out=$(R -n w-0 'echo over-tls13'); check "server accepting only TLS 1.3" "over-tls13/0" "$out/$?"

# --- a server certificate whose IP SANs do not include the address connected to
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 -subj /CN=127.0.0.1 \
  -addext "subjectAltName=DNS:api.example,IP:10.9.9.9" -keyout "$W/s2key.pem" -out "$W/s2cert.pem" 2>/dev/null
start_server normal --cert "$W/s2cert.pem" --key "$W/s2key.pem"
kc_tls "    certificate-authority: $W/s2cert.pem" "    {}"
msg=$(R -n w-0 true 2>&1); check "IP not in the certificate's IP SANs (CN ignored) -> 255" 255 $?
[[ "$msg" == *"not trusted"* && "$msg" == *"mismatch"* && "$msg" == *'"127.0.0.1"'* ]] && ok "  $msg" || bad "  IP mismatch message: $msg"

# --- the SSH transport is the sibling program mpi-rsh-ssh: without it, a clear error
mkdir -p "$W/alone" && cp "$RSH" "$W/alone/mpi-rsh"
msg=$(PATH=/nonexistent MPI_JOB_TRANSPORT=ssh MPI_K8S_BUNDLE_DIR= "$W/alone/mpi-rsh" -n w-0 true 2>&1)
check "ssh transport without mpi-rsh-ssh -> 255" 255 $?
[[ "$msg" == *"cannot start the SSH transport (mpi-rsh-ssh"* && "$msg" != *$'\n'* ]] && ok "  $msg" || bad "  no mpi-rsh-ssh message: $msg"

echo "failures: $fails"
[ $fails -eq 0 ]
