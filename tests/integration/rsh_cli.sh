#!/usr/bin/env bash
# timeout: 60
# --help and --version of every program, as the built binaries answer them (no cluster):
# mpi-rsh, mpi-rsh-ssh, mpi-rsh-holder, mpi-rsh-thin print "usage: PROG ..." (--help) and
# "PROG VERSION" (--version) on stdout with nothing on stderr and exit 0, the same version
# as mpi-agent and mpi-operator print. An unknown option prints a line naming it and the
# usage on stderr, nothing on stdout, and exits as ssh does for mpi-rsh and mpi-rsh-ssh (255),
# 2 for mpi-rsh-holder, 255 for mpi-rsh-thin. --help after HOST is the remote command's, not
# ours (mpirun calls `mpi-rsh [-x] HOST COMMAND...`): checked in tests/unit/test_rsh_args.c.
set -u
: "${BINDIR:=$(cd "$(dirname "$0")/../.." && pwd)/bin}"
T=$(mktemp -d /tmp/rsh-cli.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
run() { # PROG ARGS...: sets rc, out, err
  local p=$1; shift
  "$BINDIR/$p" "$@" >"$T/out" 2>"$T/err" </dev/null
  rc=$?
  out=$(cat "$T/out")
  err=$(cat "$T/err")
}
for p in mpi-rsh mpi-rsh-ssh mpi-rsh-holder mpi-rsh-thin mpi-agent mpi-operator; do
  [ -x "$BINDIR/$p" ] || fail "missing $BINDIR/$p (run make)"
done
run mpi-agent --version
want_version=${out#mpi-agent }
[ "$rc" = 0 ] && [ -n "$want_version" ] && [ "$out" = "mpi-agent $want_version" ] || fail "mpi-agent --version: rc $rc, '$out'"
run mpi-operator --version
[ "$rc" = 0 ] && [ "$out" = "mpi-operator $want_version" ] || fail "mpi-operator --version: rc $rc, '$out' (want $want_version)"

declare -A bad_rc=([mpi-rsh]=255 [mpi-rsh-ssh]=255 [mpi-rsh-holder]=2 [mpi-rsh-thin]=255)
for p in mpi-rsh mpi-rsh-ssh mpi-rsh-holder mpi-rsh-thin; do
  run "$p" --version
  [ "$rc" = 0 ] || fail "$p --version: exit $rc (stderr: $err)"
  [ "$out" = "$p $want_version" ] || fail "$p --version printed '$out', want '$p $want_version'"
  [ -z "$err" ] || fail "$p --version wrote to stderr: $err"

  run "$p" --help
  [ "$rc" = 0 ] || fail "$p --help: exit $rc (stderr: $err)"
  [[ $out == "usage: $p "* ]] || fail "$p --help: stdout does not start with 'usage: $p ': $out"
  grep -q -- '--version' <<<"$out" || fail "$p --help does not mention --version: $out"
  [ -z "$err" ] || fail "$p --help wrote to stderr: $err"

  run "$p" --no-such-option
  [ "$rc" = "${bad_rc[$p]}" ] || fail "$p --no-such-option: exit $rc, want ${bad_rc[$p]}"
  [ -z "$out" ] || fail "$p --no-such-option wrote to stdout: $out"
  grep -q "usage: $p " <<<"$err" || fail "$p --no-such-option: no usage on stderr: $err"
  echo "$p: --version '$p $want_version', --help on stdout, unknown option -> usage on stderr, exit ${bad_rc[$p]}"
done

# as ssh: the usage follows an unknown short option, a missing value and a missing host;
# not a bad value (one line)
for args in "-Z h true" "-p" ""; do
  # shellcheck disable=SC2086
  run mpi-rsh $args
  [ "$rc" = 255 ] && grep -q '^usage: mpi-rsh ' <<<"$err" || fail "mpi-rsh $args: rc $rc, stderr: $err"
done
run mpi-rsh -p x h true
[ "$rc" = 255 ] && [ "$err" = 'mpi-rsh: -p: expected a port 1-65535, got "x"' ] || fail "mpi-rsh -p x: rc $rc, stderr: $err"
# the stream holder's variable does not get in the way of --help
MPI_RSH_HOLDER=/nonexistent/s run mpi-rsh --help
[ "$rc" = 0 ] && [[ $out == "usage: mpi-rsh "* ]] || fail "mpi-rsh --help with MPI_RSH_HOLDER set: rc $rc"
# mpi-rsh-holder --help does not run anything after it
run mpi-rsh-holder --help -- sh -c 'echo ran'
[ "$rc" = 0 ] && ! grep -q '^ran$' <<<"$out" || fail "mpi-rsh-holder --help -- CMD ran CMD: $out"
echo PASS
