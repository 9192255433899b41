# Shared helpers for the controller's integration tests (sourced, not run):
# kubesim up with the CRD and RBAC installed, the operator run as a process
# inside the instance's network namespace (admin kubeconfig), waits on MPIJob
# conditions, metrics scraping. Everything started here is stopped by PID in
# the cleanup trap that tests/lib/kubesim.sh installs.
: "${ROOT:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
: "${BINDIR:=$ROOT/bin}"
. "$ROOT/tests/lib/kubesim.sh"

kc() { ks_kubectl "$@"; }

# ctl_cluster [kubesim up args]: a fresh instance with namespace, CRD and RBAC from manifests/base.
ctl_cluster() {
  ks_skip_unless_root
  [ -x "$BINDIR/mpi-operator" ] || ks_fail "missing $BINDIR/mpi-operator (run make)"
  ks_up "$@"
  kc create -f "$ROOT/manifests/base/namespace.yaml" -f "$ROOT/manifests/base/crd.yaml" \
     -f "$ROOT/manifests/base/rbac.yaml" >/dev/null || ks_fail "installing CRD/RBAC"
  ks_wait_for "kc get mpijobs" 20 || ks_fail "mpijobs resource not served"
}

# ctl_start NAME [operator flags...]: starts bin/mpi-operator (log $KS_DIR/op-NAME.log).
ctl_start() {
  local name=$1; shift
  setsid "$KUBESIM" run --dir "$KS_DIR" -- "$BINDIR/mpi-operator" --kubeconfig "$KS_DIR/kubeconfig" "$@" \
    >>"$KS_DIR/op-$name.log" 2>&1 &
  echo $! >"$KS_DIR/op-$name.pid"
  ks_on_exit "ctl_stop $name TERM"
}

# ctl_stop NAME [SIGNAL]: signals the operator and waits (bounded) for it to exit.
ctl_stop() {
  local f="$KS_DIR/op-$1.pid" sig=${2:-TERM} pid
  [ -f "$f" ] || return 0
  pid=$(cat "$f")
  kill -"$sig" "$pid" 2>/dev/null || { rm -f "$f"; return 0; }
  for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
  kill -KILL "$pid" 2>/dev/null || true
  rm -f "$f"
}

# ctl_log NAME: prints the operator's log.
ctl_log() { cat "$KS_DIR/op-$1.log" 2>/dev/null; }

# cond JOB TYPE FIELD: prints the field (status|reason|message) of condition TYPE.
cond() {
  kc get mpijob "$1" -o jsonpath="{.status.conditions[?(@.type==\"$2\")].$3}" 2>/dev/null
}

# wait_cond JOB TYPE STATUS SECONDS
wait_cond() {
  ks_wait_for "[ \"\$(cond $1 $2 status)\" = $3 ]" "$4" || {
    kc get mpijob "$1" -o yaml >&2 || true
    ks_fail "MPIJob $1: condition $2 did not become $3 within $4 s"
  }
}

# metrics PORT: the operator's /metrics text.
metrics() { ks_run curl -sf "http://127.0.0.1:$1/metrics"; }

# metric PORT NAME: the value of one unlabelled sample.
metric() { metrics "$1" | awk -v n="$2" '$1 == n { print $2 }'; }
