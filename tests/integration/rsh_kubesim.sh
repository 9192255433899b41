#!/usr/bin/env bash
# rsh_kubesim.sh - mpi-rsh (exec transport) against kubesim over HTTPS with tokens:
# exit codes 0/1/3/255, death by signal, stdin with EOF (10 MB wc -c), 100 MB stdout
# intact, stderr separate, ssh quoting, multi-container pods (right container / missing
# container), 404 pod, 403 from a Role without pods/exec, expired (deleted-SA) and bad
# tokens, wrong CA, stream cut by `kubesim fault exec-drop-after`, in-cluster config from
# inside a launcher pod, SIGTERM killing the remote process, the same as kubectl sees.
# timeout: 300
set -u
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
BINDIR=${BINDIR:-$ROOT/bin}
. "$ROOT/tests/lib/kubesim.sh"
ks_skip_unless_root
RSH=$BINDIR/mpi-rsh
ks_up
W=$(mktemp -d /tmp/rsh-ks.XXXXXX)
ks_on_exit 'rm -rf "$W"'
NETNS=$(cat "$KS_DIR/state/netns")
export KUBECONFIG=$KS_DIR/kubeconfig
unset MPI_JOB_NAMESPACE MPI_JOB_WORKER_CONTAINER MPI_JOB_TRANSPORT
export MPI_RSH_ATTEMPTS=3
IN() { nsenter --net=/run/netns/$NETNS -- "$@"; }
R() { IN timeout 60 "$RSH" "$@"; }
K() { IN env KUBECONFIG="$KS_DIR/kubeconfig" kubectl "$@"; }
fails=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fails=$((fails+1)); }
check() { if [ "$2" == "$3" ]; then ok "$1"; else bad "$1: want [$2] got [$3]"; fi; }
has() { if [[ "$3" == *"$2"* ]]; then ok "$1: $3"; else bad "$1: [$3] lacks [$2]"; fi; }

cat > "$W/objs.yaml" <<EOF
apiVersion: v1
kind: Pod
metadata: {name: w-0}
spec:
  containers: [{name: main, image: debian, command: [sleep, infinity]}]
---
apiVersion: v1
kind: Pod
metadata: {name: w-1}
spec:
  containers:
  - {name: main, image: debian, command: [sleep, infinity]}
  - {name: side, image: debian, command: [sleep, infinity]}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: launcher}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: exec}
rules:
- {apiGroups: [""], resources: [pods], verbs: [get, list]}
- {apiGroups: [""], resources: [pods/exec], verbs: [get, create]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: launcher}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: exec}
subjects: [{kind: ServiceAccount, name: launcher}]
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: noexec}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: readonly}
rules: [{apiGroups: [""], resources: [pods], verbs: [get, list]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: noexec}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: readonly}
subjects: [{kind: ServiceAccount, name: noexec}]
---
apiVersion: v1
kind: Pod
metadata: {name: launcher}
spec:
  serviceAccountName: launcher
  containers: [{name: main, image: debian, command: [sleep, infinity]}]
EOF
K apply --validate=false -f "$W/objs.yaml" >/dev/null || ks_fail "apply"
ks_wait_for 'K get pods w-0 w-1 launcher -o jsonpath="{.items[*].status.phase}" | grep -qx "Running Running Running"' 60 \
  || ks_fail "pods not running"

# a kubeconfig for a token ($1) and CA file ($2)
kc() { local ca=${2:-$KS_DIR/pki/ca.crt}
  cat <<EOF
apiVersion: v1
kind: Config
clusters: [{name: s, cluster: {server: "$(sed -n 's/^ *server: //p' "$KS_DIR/kubeconfig")", certificate-authority-data: $(base64 -w0 < "$ca")}}]
contexts: [{name: s, context: {cluster: s, user: u, namespace: default}}]
current-context: s
users: [{name: u, user: {token: "$1"}}]
EOF
}
kc "$(K create token launcher)" > "$W/kc-launcher"
kc "$(K create token noexec)" > "$W/kc-noexec"

# --- exit codes and signals (with the launcher's service-account token)
export KUBECONFIG=$W/kc-launcher
for c in 0 1 3 255; do R -n w-0 "exit $c"; check "exit $c" "$c" "$?"; done
R -n w-0 'kill -KILL $$'; check "remote killed by SIGKILL -> 137" 137 $?
R -n w-0 'kill -SEGV $$'; check "remote killed by SIGSEGV -> 139" 139 $?
K exec w-0 -- sh -c 'exit 3'; kubectl_rc=$?
check "kubectl agrees on exit 3" 3 $kubectl_rc

# --- streams
out=$(R -n w-0 'echo out; echo err >&2' 2>"$W/err"); check "stdout separate" out "$out"; check "stderr separate" err "$(cat "$W/err")"
head -c 100000000 /dev/urandom > "$W/big"; want=$(sha256sum < "$W/big" | cut -d' ' -f1)
IN cat "$W/big" >/dev/null
got=$(R w-0 'cat' < "$W/big" | sha256sum | cut -d' ' -f1; echo "rc=${PIPESTATUS[0]}")
check "100 MB through stdin and back over TLS (sha256, rc)" "$want rc=0" "$(echo $got)"
got=$(R -n w-0 'head -c 100000000 /dev/zero' | sha256sum | cut -d' ' -f1)
check "100 MB stdout intact (sha256)" "$(head -c 100000000 /dev/zero | sha256sum | cut -d' ' -f1)" "$got"
head -c 10000000 /dev/urandom > "$W/in10"
got=$(R w-0 'wc -c' < "$W/in10"); check "10 MB stdin + EOF (wc -c)" 10000000 "$got"
got=$(R w-0 'cat' </dev/null); check "empty stdin" "" "$got"

# --- quoting: exactly sh -c "<words joined by spaces>" (what ssh runs)
q=0
for args in "printf '<%s>' 'a b' c" "echo \"a  b\"   'c   d'" "echo one ';' echo two" "'echo a; echo b'" \
            "printf '[%s]' '' x ''" "echo \$'l1\\nl2'" "'(exit 7)'" "echo \"it's\" '\$HOME'"; do
  eval "set -- $args"
  want=$(/bin/sh -c "$*" 2>&1; echo "rc=$?")
  got=$(R -n w-0 "$@" 2>&1; echo "rc=$?")
  [ "$want" == "$got" ] || { bad "quoting [$args]: want [$want] got [$got]"; q=1; }
done
[ $q = 0 ] && ok "quoting: 8 argument sets match /bin/sh -c \"\$*\""

# --- containers
out=$(R -n --container side w-1 'echo side'); check "--container side" "side/0" "$out/$?"
out=$(MPI_JOB_WORKER_CONTAINER=main R -n w-1 'echo main'); check "MPI_JOB_WORKER_CONTAINER=main" "main/0" "$out/$?"
msg=$(R -n w-1 true 2>&1); check "multi-container pod without a container -> 255" 255 $?
has "  message" "container name must be specified" "$msg"
msg=$(R -n --container nope w-0 true 2>&1); check "pod without the container -> 255" 255 $?
has "  message" "nope" "$msg"

# --- refusals
msg=$(R -n w-9 true 2>&1); check "missing pod -> 255" 255 $?; has "  404" "not found" "$msg"
msg=$(KUBECONFIG=$W/kc-noexec R -n w-0 true 2>&1); check "Role without pods/exec -> 255" 255 $?; has "  403" "HTTP 403" "$msg"
K create sa temp >/dev/null; K create rolebinding temp --role=exec --serviceaccount=default:temp >/dev/null
kc "$(K create token temp)" > "$W/kc-temp"
out=$(KUBECONFIG=$W/kc-temp R -n w-0 'echo temp'); check "temporary token works" "temp/0" "$out/$?"
K delete sa temp >/dev/null
msg=$(KUBECONFIG=$W/kc-temp R -n w-0 true 2>&1); check "expired token (SA deleted) -> 255" 255 $?; has "  401" "HTTP 401" "$msg"
kc "not-a-token" > "$W/kc-bad"
msg=$(KUBECONFIG=$W/kc-bad R -n w-0 true 2>&1); check "bad token -> 255" 255 $?; has "  401" "HTTP 401" "$msg"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 -subj /CN=other \
  -keyout "$W/okey" -out "$W/oca" 2>/dev/null
kc "$(K create token launcher)" "$W/oca" > "$W/kc-ca"
msg=$(KUBECONFIG=$W/kc-ca R -n w-0 true 2>&1); check "wrong CA -> 255" 255 $?; has "  TLS" "not trusted" "$msg"

# --- stream cut mid-output: never 0
ks_fault exec-drop-after 1000000 >/dev/null || ks_fail "fault"
R -n w-0 'head -c 50000000 /dev/zero; exit 0' > "$W/cut" 2>"$W/cut.err"; rc=$?
check "stream dropped after 1 MB -> 255" 255 $rc
has "  message" "without an exit status" "$(cat "$W/cut.err")"
sz=$(stat -c %s "$W/cut"); [ "$sz" -le 1000000 ] && [ "$sz" -gt 0 ] && ok "  $sz bytes before the cut" || bad "  cut size $sz"
ks_fault exec-drop-after 0 >/dev/null

# --- the reader of mpi-rsh's stdout goes away (`... | head`): the stream ends, never a drain
# forever of an endless command; the remote command is stopped
R -n w-0 'yes' 2>"$W/epipe.err" | head -c 10 >/dev/null; rc=${PIPESTATUS[0]}
check "stdout closed by its reader -> 255" 255 $rc
has "  message" "broken pipe" "$(cat "$W/epipe.err")"
if ks_wait_for "! K exec w-0 -- sh -c 'ps -eo args | grep -q \"^yes\$\"'" 10; then ok "  remote yes stopped"; else bad "  remote yes still running"; fi

# --- in-cluster config: mpi-rsh inside the launcher pod with its service account
out=$(K exec launcher -- "$RSH" -n w-0.default.svc 'echo in-cluster from $(hostname)'); rc=$?
check "in-cluster (launcher pod SA) -> w-0" "in-cluster from w-0/0" "$out/$rc"
out=$(K exec launcher -- env MPI_JOB_NAMESPACE=default "$RSH" -n w-0.w.default.svc.cluster.local 'exit 6'); check "in-cluster exit 6 via FQDN" 6 $?

# --- SIGTERM: 143, and the remote command is killed by the second exec
export KUBECONFIG=$W/kc-launcher
nsenter --net=/run/netns/$NETNS -- "$RSH" -n w-0 'sleep 77; echo not-killed' & rp=$!
ks_wait_for "K exec w-0 -- sh -c 'ps -eo args | grep -q \"^sleep 77\"'" 20 || bad "remote sleep not seen"
kill -TERM $rp; wait $rp; check "SIGTERM -> 143" 143 $?
if ks_wait_for "! K exec w-0 -- sh -c 'ps -eo args | grep -q \"^sleep 77\"'" 10; then ok "remote sleep killed"
else bad "remote sleep survived: $(K exec w-0 -- ps -eo pid,args)"; fi

echo "failures: $fails"
[ $fails -eq 0 ]
