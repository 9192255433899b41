#!/usr/bin/env bash
# timeout: 300
# `kubectl mpijob` installed as krew users install it, with the real krew (v0.4.3, built from the
# Go module proxy by tests/krew/build.sh, cached by version; a cold build is 1 to 3 minutes):
# `make krew`'s archive and manifest (plugins/krew.sh, run twice: the same sha256), then with a
# private KREW_ROOT:
#   - the committed plugins/mpijob.yaml (placeholder sha256) with that archive is refused by krew
#     ("checksum does not match"), and nothing is installed: krew checks the sum;
#   - `kubectl krew install --manifest build/krew/mpijob.yaml --archive ...` installs it; `kubectl
#     krew list` names it (detached/mpijob: from a manifest, in no index); the real `kubectl mpijob --help` and `kubectl mpijob get` run krew's
#     copy (PATH=$KREW_ROOT/bin:...) against a kubesim cluster with one MPIJob, and print what
#     bin/kubectl-mpijob prints; `kubectl krew uninstall mpijob` removes it;
#   - the release path: a local krew index (a git repository, KREW_DEFAULT_INDEX_URI) whose
#     plugins/mpijob.yaml has the uri and sha256 a release fills in, the archive served over HTTP
#     on 127.0.0.1: `kubectl krew install mpijob` downloads, checks and installs it.
# krew's list and uninstall need an initialised index (a git clone under $KREW_ROOT/index): the
# local one is it, so nothing leaves the machine (KREW_NO_UPGRADE_CHECK=1 too).
set -u
. "$(dirname "$0")/controller_common.bash"
command -v go >/dev/null || [ -x /usr/local/go/bin/go ] ||
  ks_skip "go not found: krew is built from the Go module proxy (tests/krew/build.sh)"
command -v git >/dev/null || ks_skip "git not found: krew's index is a git clone"
[ -x "$BINDIR/kubectl-mpijob" ] || ks_fail "missing $BINDIR/kubectl-mpijob (run make)"
s=$SECONDS
KREWBIN=$("$ROOT/tests/krew/build.sh") || ks_fail "building krew (tests/krew/build.sh)"
[ $((SECONDS - s)) -lt 5 ] || echo "NOTE: krew was built cold in $((SECONDS - s)) s"
ctl_cluster
K=$KS_DIR/krew
OUT=$K/out
ARCHIVE=$OUT/mpijob-linux-amd64.tar.gz
mkdir -p "$K/out2" "$K/www" "$K/index/plugins"

# make krew (plugins/krew.sh) for this BINDIR; the same binaries give the same archive
"$ROOT/plugins/krew.sh" "$BINDIR" "$OUT" >/dev/null && "$ROOT/plugins/krew.sh" "$BINDIR" "$K/out2" >/dev/null ||
  ks_fail "plugins/krew.sh"
sum=$(sha256sum "$ARCHIVE" | cut -d' ' -f1)
[ "$(sha256sum <"$K/out2/mpijob-linux-amd64.tar.gz" | cut -d' ' -f1)" = "$sum" ] || ks_fail "two make krew runs: two sha256s"
[ "$(tar tzf "$ARCHIVE" | tr '\n' ' ')" = "bin/ bin/mpi-agent " ] || ks_fail "the archive holds $(tar tzf "$ARCHIVE")"
grep -qx "    sha256: \"$sum\"" "$OUT/mpijob.yaml" || ks_fail "build/krew/mpijob.yaml does not carry the archive's sha256"

export KREW_ROOT=$K/root KREW_NO_UPGRADE_CHECK=1 KREW_DEFAULT_INDEX_URI=$K/index
# krew's kubectl-mpijob alone: a PATH entry with another one (bin/) would run where krew's is gone
p=; IFS=: read -ra dirs <<<"$PATH"
for d in "${dirs[@]}"; do [ -e "$d/kubectl-mpijob" ] || p+=${p:+:}$d; done
export PATH=$KREW_ROOT/bin:$KREWBIN:$p
kk() { kubectl krew "$@" </dev/null; }
kubectl krew version | grep -qE '^GitTag +v0\.4\.3$' || ks_fail "kubectl krew is not krew v0.4.3: $(kubectl krew version)"

# the release path's pieces: the archive on 127.0.0.1 (a port the kernel picks), and an index
# whose manifest has the uri and sha256 a release writes
cp "$ARCHIVE" "$K/www/"
python3 - "$K/www" "$K/port" >"$K/http.log" 2>&1 <<'PY' &
import functools, http.server, os, sys
h = functools.partial(http.server.SimpleHTTPRequestHandler, directory=sys.argv[1])
s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), h)
with open(sys.argv[2] + ".tmp", "w") as f: f.write(str(s.server_address[1]))
os.rename(sys.argv[2] + ".tmp", sys.argv[2])
s.serve_forever()
PY
echo $! >"$K/http.pid"
ks_on_exit 'kill "$(cat "$K/http.pid")" 2>/dev/null'
ks_wait_for "[ -s '$K/port' ]" 10 || ks_fail "the HTTP server on 127.0.0.1 did not start: $(cat "$K/http.log")"
sed -e "s|^    uri: .*|    uri: http://127.0.0.1:$(cat "$K/port")/mpijob-linux-amd64.tar.gz|" \
  -e "s|^    sha256: .*|    sha256: \"$sum\"|" "$ROOT/plugins/mpijob.yaml" >"$K/index/plugins/mpijob.yaml"
git -C "$K/index" init -q && git -C "$K/index" add plugins &&
  git -C "$K/index" -c user.name=test -c user.email=test@localhost commit -qm index || ks_fail "the local krew index"
kk update >"$K/update.log" 2>&1 || ks_fail "kubectl krew update (the local index): $(cat "$K/update.log")"

# not_installed WHAT: no link, no store, no receipt, `kubectl krew list` does not name it, kubectl
# has no mpijob command
not_installed() {
  [ ! -e "$KREW_ROOT/bin/kubectl-mpijob" ] && [ ! -L "$KREW_ROOT/bin/kubectl-mpijob" ] &&
    [ ! -e "$KREW_ROOT/store/mpijob" ] && [ ! -e "$KREW_ROOT/receipts/mpijob.yaml" ] || ks_fail "$1: mpijob is installed"
  ! kk list | grep -qE '^(detached/)?mpijob$' || ks_fail "$1: kubectl krew list names mpijob"
  ! kubectl mpijob --help >/dev/null 2>&1 || ks_fail "$1: kubectl mpijob still runs"
}
# installed WHAT LISTED: krew's link to the store's mpi-agent, first on PATH, listed by kubectl and
# by krew as LISTED (a plugin from --manifest is detached/NAME: it is in no index)
installed() {
  [ "$(readlink "$KREW_ROOT/bin/kubectl-mpijob")" = "$KREW_ROOT/store/mpijob/v0.1.0/mpi-agent" ] ||
    ks_fail "$1: $KREW_ROOT/bin/kubectl-mpijob -> $(readlink "$KREW_ROOT/bin/kubectl-mpijob")"
  cmp -s "$KREW_ROOT/store/mpijob/v0.1.0/mpi-agent" "$BINDIR/mpi-agent" || ks_fail "$1: the installed mpi-agent differs"
  kk list | grep -qx "$2" || ks_fail "$1: kubectl krew list does not name $2: $(kk list)"
  kubectl plugin list 2>/dev/null | grep -qx "$KREW_ROOT/bin/kubectl-mpijob" ||
    ks_fail "$1: kubectl plugin list: $(kubectl plugin list 2>&1)"
}

# the committed manifest: its placeholder sha256 is not the archive's, and krew refuses
not_installed "before"
rc=0; kk install --manifest "$ROOT/plugins/mpijob.yaml" --archive "$ARCHIVE" >"$K/placeholder.out" 2>&1 || rc=$?
[ $rc -ne 0 ] && grep -q "checksum does not match, want: 0\{64\}, got $sum" "$K/placeholder.out" ||
  ks_fail "krew did not refuse plugins/mpijob.yaml's placeholder sha256 (rc $rc): $(cat "$K/placeholder.out")"
not_installed "after the refused install"

# make krew's manifest and archive, as docs/agent.md says
kk install --manifest "$OUT/mpijob.yaml" --archive "$ARCHIVE" >"$K/install.out" 2>&1 ||
  ks_fail "kubectl krew install --manifest --archive: $(cat "$K/install.out")"
installed "install --manifest --archive" detached/mpijob
# the real kubectl runs krew's kubectl-mpijob (argv[0] makes mpi-agent the plugin), inside the cluster's netns
kp() { ks_run sh -c 'PATH="$0:$PATH"; exec "$@"' "$KREW_ROOT/bin" "$@"; }
kp kubectl mpijob --help >"$K/help" 2>&1 || ks_fail "kubectl mpijob --help: $(cat "$K/help")"
grep -q '^  kubectl mpijob VERB' "$K/help" && ! grep -q 'usage: mpi-agent' "$K/help" ||
  ks_fail "kubectl mpijob --help is not the plugin's: $(head -5 "$K/help")"
mpijob_yaml k1 | kc create -f - >/dev/null || ks_fail "create MPIJob k1"
norm_age() { awk 'NR == 1 { print; next } { $4 = "<age>"; print }'; }
kp kubectl mpijob get >"$K/get" 2>&1 || ks_fail "kubectl mpijob get: $(cat "$K/get")"
grep -qE '^NAME +STATE +WORKERS +AGE +LAUNCH +REASON$' "$K/get" && grep -qE '^k1 +[A-Za-z]+ +0/2 ' "$K/get" ||
  ks_fail "kubectl mpijob get: $(cat "$K/get")"
ks_run "$BINDIR/kubectl-mpijob" get >"$K/get.bin" 2>&1 || ks_fail "bin/kubectl-mpijob get"
diff <(norm_age <"$K/get.bin") <(norm_age <"$K/get") >&2 || ks_fail "krew's kubectl mpijob get differs from bin/kubectl-mpijob's"
[ "$(kp kubectl mpijob get k1 -o name)" = mpijob.kubeflow.org/k1 ] || ks_fail "kubectl mpijob get k1 -o name"
kk uninstall mpijob >"$K/uninstall.out" 2>&1 || ks_fail "kubectl krew uninstall mpijob: $(cat "$K/uninstall.out")"
not_installed "after kubectl krew uninstall"

# the release path: from the index, downloaded from the uri and checked against its sha256
kk install mpijob >"$K/install-index.out" 2>&1 || ks_fail "kubectl krew install mpijob (index): $(cat "$K/install-index.out")"
grep -q 'GET /mpijob-linux-amd64.tar.gz HTTP/1.1" 200' "$K/http.log" || ks_fail "krew did not download the archive: $(cat "$K/http.log")"
installed "install from the index" mpijob
[ "$(kp kubectl mpijob get k1 -o name)" = mpijob.kubeflow.org/k1 ] || ks_fail "kubectl mpijob get k1 -o name (index install)"
kk uninstall mpijob >"$K/uninstall.out" 2>&1 || ks_fail "kubectl krew uninstall mpijob: $(cat "$K/uninstall.out")"
not_installed "after the second uninstall"
echo "krew v0.4.3: placeholder sha256 refused; make krew's archive (sha256 ${sum:0:12}..) installed by --manifest/--archive" \
  "and from a local index over HTTP, kubectl mpijob --help/get ran, uninstalled"
