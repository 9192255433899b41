#!/usr/bin/env bash
# timeout: 420
# images/openmpi/mpi-sshd (the worker pods' sshd entrypoint) against real OpenSSH:
# serves a Secret-like dir (files mode 0644, as a default Secret mount) as host key and
# authorized_keys on its own port; the real ssh client pinning ssh-publickey gets in,
# sees the container's environment (SetEnv), gets exit codes; bin/mpi-rsh (SSH
# transport, libssh2) does the same and refuses a different host key; as a non-root user
# it serves key logins too. Bad input fails with a one-line reason. Own temp dir and
# port; sshd killed by PID on exit.
set -u
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
BINDIR=${BINDIR:-$ROOT/bin}
ENTRY=$ROOT/images/openmpi/mpi-sshd
[ -x /usr/sbin/sshd ] || { echo "skip: /usr/sbin/sshd not installed (openssh-server)"; exit 77; }
command -v ssh >/dev/null || { echo "skip: ssh client not installed"; exit 77; }

work=$(mktemp -d /tmp/ssh-entry-XXXXXX)
pid=
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; [ -f "$work/sshd.log" ] && tail -n 20 "$work/sshd.log"; exit 1; }

free_port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }

# The "Secret": one ed25519 key pair as identity, host key and authorized key.
secret=$work/secret
mkdir -p "$secret"
ssh-keygen -q -t ed25519 -N '' -C job-ssh -f "$work/key" || fail "ssh-keygen"
cp "$work/key" "$secret/ssh-privatekey"
cp "$work/key.pub" "$secret/ssh-publickey"
cp "$work/key.pub" "$secret/authorized_keys"
chmod 0644 "$secret"/*        # as a Secret volume with defaultMode 0644 mounts them

# 1. bad input: one clear line, non-zero, nothing started
out=$(MPI_JOB_SSH_DIR=$work/nope "$ENTRY" 2>&1) && fail "missing dir accepted"
[[ $out == *"no readable private key in $work/nope"* ]] || fail "unclear error: $out"
out=$(MPI_JOB_SSH_PORT=22x "$ENTRY" --dir "$secret" 2>&1) && fail "bad port accepted"
[[ $out == *"'22x' is not a port number"* ]] || fail "unclear port error: $out"
"$ENTRY" --dir "$secret" --port 2222 --foreground-check >/dev/null || fail "config check"

# 2. start it (as a worker pod would) with a tricky variable in its environment
port=$(free_port)
export WEIRD_VALUE='a "quoted" $word \back; *'
mkdir -m 1777 "$work/tmp"                      # mpi-sshd's run dirs, removed with $work
export TMPDIR=$work/tmp
MPI_JOB_SSH_DIR=$secret MPI_JOB_SSH_PORT=$port PATH="/opt/from-image/bin:$PATH" \
  "$ENTRY" >"$work/sshd.log" 2>&1 &
pid=$!
for _ in $(seq 100); do
  (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
  kill -0 "$pid" 2>/dev/null || fail "mpi-sshd exited"
  sleep 0.1
done

echo "[127.0.0.1]:$port $(cat "$secret/ssh-publickey")" > "$work/known_hosts"
SSH=(ssh -q -p "$port" -i "$work/key" -o UserKnownHostsFile="$work/known_hosts"
     -o StrictHostKeyChecking=yes -o BatchMode=yes -o ConnectTimeout=30 127.0.0.1)

# 3. OpenSSH's client: pinned host key accepted, exit codes, environment handed over
"${SSH[@]}" 'exit 3' </dev/null; rc=$?
[ "$rc" = 3 ] || fail "ssh exit 3 gave $rc"
got=$("${SSH[@]}" 'printf %s "$WEIRD_VALUE"' </dev/null) || fail "ssh printf"
[ "$got" = "$WEIRD_VALUE" ] || fail "environment: got [$got] want [$WEIRD_VALUE]"
got=$("${SSH[@]}" 'echo "$PATH"' </dev/null) || fail "ssh PATH"
[[ $got == *"/opt/from-image/bin"* ]] || fail "container PATH not in the session: $got"
n=$(head -c 3000000 /dev/urandom | "${SSH[@]}" 'wc -c') || fail "ssh stdin"
[ "$n" = 3000000 ] || fail "ssh stdin: $n bytes"

# 4. our transport (bin/mpi-rsh --transport ssh) against the same sshd
if [ -x "$BINDIR/mpi-rsh" ]; then
  RSH=("$BINDIR/mpi-rsh" --transport ssh --ssh-dir "$secret" -p "$port")
  "${RSH[@]}" 127.0.0.1 exit 3 </dev/null; rc=$?
  [ "$rc" = 3 ] || fail "mpi-rsh exit 3 gave $rc"
  got=$("${RSH[@]}" 127.0.0.1 'printf %s "$WEIRD_VALUE"' </dev/null) || fail "mpi-rsh printf"
  [ "$got" = "$WEIRD_VALUE" ] || fail "mpi-rsh environment: got [$got]"
  n=$(head -c 3000000 /dev/urandom | "${RSH[@]}" 127.0.0.1 wc -c) || fail "mpi-rsh stdin"
  [ "$n" = 3000000 ] || fail "mpi-rsh stdin: $n bytes"
  # a dir pinning another key: refused, 255, the reason names host key and host
  other=$work/other
  mkdir -p "$other"
  ssh-keygen -q -t ed25519 -N '' -f "$other/id_ed25519" || fail "ssh-keygen other"
  cp "$secret/ssh-privatekey" "$other/ssh-privatekey"
  err=$("$BINDIR/mpi-rsh" --transport ssh --ssh-dir "$other" -p "$port" 127.0.0.1 true 2>&1 </dev/null); rc=$?
  [ "$rc" = 255 ] || fail "mpi-rsh with a wrong pin exited $rc"
  [[ $err == *"host key"*"127.0.0.1"* ]] || fail "mpi-rsh wrong pin message: $err"
else
  echo "note: $BINDIR/mpi-rsh not built; libssh2 side covered by tests/unit/test_lib_ssh*.c"
fi
# 5. not root (as upstream's mpiuser images): sshd as user "daemon" on its own port serves
#    the same dir; a key login as daemon passes auth and reaches its shell (nologin: exit 1).
#    (Not "nobody": nss-systemd answers getspnam(nobody) with a locked entry when
#    /etc/shadow is unreadable, so a non-root sshd refuses it as "account is locked".)
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null && id daemon >/dev/null 2>&1; then
  chmod 0755 "$work" "$secret"
  port2=$(free_port)
  MPI_JOB_SSH_DIR=$secret MPI_JOB_SSH_PORT=$port2 HOME=/tmp TMPDIR=$work/tmp \
    setpriv --reuid=daemon --regid=daemon --clear-groups "$ENTRY" >"$work/sshd2.log" 2>&1 &
  pid2=$!
  for _ in $(seq 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$port2") 2>/dev/null && break
    kill -0 "$pid2" 2>/dev/null || { cat "$work/sshd2.log"; fail "mpi-sshd as daemon exited"; }
    sleep 0.1
  done
  echo "[127.0.0.1]:$port2 $(cat "$secret/ssh-publickey")" >> "$work/known_hosts"
  out=$(ssh -p "$port2" -i "$work/key" -o UserKnownHostsFile="$work/known_hosts" \
        -o StrictHostKeyChecking=yes -o BatchMode=yes -o ConnectTimeout=30 daemon@127.0.0.1 true 2>&1 </dev/null); rc=$?
  kill "$pid2" 2>/dev/null; wait "$pid2" 2>/dev/null
  grep -q "Accepted publickey for daemon" "$work/sshd2.log" || { cat "$work/sshd2.log"; fail "non-root sshd: no key login ($rc: $out)"; }
  [ "$rc" = 1 ] || fail "non-root sshd: want nologin's exit 1, got $rc: $out"
else
  echo "note: not root or no setpriv/daemon user; skipped the non-root sshd check"
fi
echo "PASS: mpi-sshd serves the Secret as host key + authorized key; env, exit codes, stdin"
