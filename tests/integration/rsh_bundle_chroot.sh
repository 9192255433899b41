#!/usr/bin/env bash
# rsh_bundle_chroot.sh - self-contained delivery proof: the bundle (static launcher,
# bundled loader + libraries, mpi-rsh/mpi-agent) copied into an otherwise empty
# root filesystem (only busybox-static for /bin/sh, no /proc, no /dev, no /lib)
# runs an exec through the Kubernetes exec API from inside a chroot: against the
# aiohttp exec peer (rsh_wsserver.py) over HTTPS with a token, then against kubesim
# (HTTPS, a service-account token, chroot entered inside kubesim's network namespace).
# timeout: 300
set -u
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
BINDIR=${BINDIR:-$ROOT/bin}
[ "$(id -u)" = 0 ] || { echo "chroot needs root"; exit 77; }
[ -x /bin/busybox ] || { echo "busybox-static not installed"; exit 77; }
# LeakSanitizer cannot start without /proc, and the root here has none on purpose: the
# release run proves the bundle; an ASan build would only prove LSan's requirement
if nm -D "$BINDIR/mpi-rsh" 2>/dev/null | grep -q __asan_init; then
  echo "SKIP: ASan build (LeakSanitizer needs /proc; this chroot has none by design)"; exit 77
fi
W=$(mktemp -d /tmp/rsh-chroot.XXXXXX)
SRV_PID=
cleanup() { [ -n "$SRV_PID" ] && kill "$SRV_PID" 2>/dev/null; wait "$SRV_PID" 2>/dev/null; rm -rf "$W"; }
trap cleanup EXIT
set -e
# 1. the bundle, built from this tree's binaries with the shipped script
cc -std=gnu11 -Os -static -s -o "$W/launcher" "$ROOT/rsh/launcher/launcher.c"
progs="$BINDIR/mpi-rsh"; [ -x "$BINDIR/mpi-agent" ] && progs="$progs $BINDIR/mpi-agent"
"$ROOT/rsh/mkbundle.sh" "$W/bundle" "$W/launcher" $progs
# 2. an empty root: busybox as /bin/sh, the bundle at /opt/kube, nothing else
R=$W/root
mkdir -p "$R/bin" "$R/opt" "$R/tmp"
cp /bin/busybox "$R/bin/busybox"; ln -s busybox "$R/bin/sh"
cp -a "$W/bundle" "$R/opt/kube"
[ ! -e "$R/lib" ] && [ ! -e "$R/usr" ] && [ ! -e "$R/proc" ]
# 3. an HTTPS exec endpoint with a token
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 -subj /CN=t \
  -addext "subjectAltName=IP:127.0.0.1" -keyout "$W/key.pem" -out "$W/cert.pem" 2>/dev/null
/usr/bin/python3 "$ROOT/tests/integration/rsh_wsserver.py" --port-file "$W/port" --cert "$W/cert.pem" \
  --key "$W/key.pem" --token tok123 >"$W/server.out" 2>&1 &
SRV_PID=$!
for _ in $(seq 100); do [ -s "$W/port" ] && break; sleep 0.05; done
cat > "$R/kc" <<KC
apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:$(cat "$W/port")", certificate-authority-data: $(base64 -w0 < "$W/cert.pem")}}]
contexts: [{name: c, context: {cluster: c, user: u, namespace: default}}]
current-context: c
users: [{name: u, user: {token: tok123}}]
KC
set +e
fails=0
out=$(env -i KUBECONFIG=/kc /usr/sbin/chroot "$R" /opt/kube/mpi-rsh -n w-0 'echo "from $(id -u) in pod"; exit 3' 2>"$W/err")
rc=$?
if [ "$rc" = 3 ] && [ "$out" = "from $(id -u) in pod" ]; then echo "ok   chroot exec: rc 3, output [$out]"
else echo "FAIL chroot exec: rc $rc out [$out] err [$(cat "$W/err")]"; fails=1; fi
# through the shell inside the chroot too, and a PATH lookup like mpirun's
out=$(env -i KUBECONFIG=/kc PATH=/opt/kube /usr/sbin/chroot "$R" /bin/sh -c 'echo data | mpi-rsh w-0 wc -c' 2>&1)
[ "$out" = 5 ] && echo "ok   via PATH + stdin: [$out]" || { echo "FAIL via PATH: [$out]"; fails=1; }
if [ -x "$R/opt/kube/mpi-agent" ]; then
  env -i /usr/sbin/chroot "$R" /opt/kube/mpi-agent --help >"$W/agent.out" 2>&1
  grep -qi usage "$W/agent.out" && echo "ok   bundled mpi-agent starts" || { echo "FAIL mpi-agent: $(head -3 "$W/agent.out")"; fails=1; }
fi
# 4. the same against kubesim: a worker pod, a token for a service account allowed to exec
kill "$SRV_PID" 2>/dev/null; wait "$SRV_PID" 2>/dev/null; SRV_PID=
. "$ROOT/tests/lib/kubesim.sh"
ks_up   # replaces the EXIT trap: hand our cleanup to kubesim.sh
ks_on_exit 'rm -rf "$W"'
NETNS=$(cat "$KS_DIR/state/netns")
KC() { nsenter --net=/run/netns/$NETNS -- env KUBECONFIG="$KS_DIR/kubeconfig" kubectl "$@"; }
KC run w-0 --image=debian --restart=Never --command -- sleep infinity >/dev/null || ks_fail "kubectl run"
KC create sa launcher >/dev/null && KC create role exec --verb=get,create --resource=pods/exec >/dev/null &&
  KC create rolebinding launcher --role=exec --serviceaccount=default:launcher >/dev/null || ks_fail "rbac"
ks_wait_for '[ "$(KC get pod w-0 -o jsonpath={.status.phase})" = Running ]' 60 || ks_fail "pod"
cat > "$R/kc" <<KC
apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "$(sed -n 's/^ *server: //p' "$KS_DIR/kubeconfig")", certificate-authority-data: $(base64 -w0 < "$KS_DIR/pki/ca.crt")}}]
contexts: [{name: c, context: {cluster: c, user: u, namespace: default}}]
current-context: c
users: [{name: u, user: {token: "$(KC create token launcher)"}}]
KC
out=$(env -i KUBECONFIG=/kc nsenter --net=/run/netns/$NETNS /usr/sbin/chroot "$R" /opt/kube/mpi-rsh -n w-0 'echo "in $(hostname)"; exit 5' 2>&1)
rc=$?
if [ "$rc" = 5 ] && [ "$out" = "in w-0" ]; then echo "ok   chroot exec against kubesim: rc 5, output [$out]"
else echo "FAIL chroot exec against kubesim: rc $rc [$out]"; fails=1; fi
echo "bundle size: $(du -sk "$W/bundle" | cut -f1) KiB, $(ls "$W/bundle/lib" | wc -l) libraries"
exit $fails
