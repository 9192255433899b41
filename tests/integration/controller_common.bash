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

# ctl_deploy: our operator as users install it (deploy/v2beta1, its Deployment), Available
# within 120 s (its pods and log named otherwise).
ctl_deploy() {
  kc apply --server-side -f "$ROOT/deploy/v2beta1/mpi-operator.yaml" >/dev/null || ks_fail "install our operator"
  kc -n mpi-operator wait --for=condition=Available deployment/mpi-operator --timeout=120s >/dev/null ||
    ks_fail "our operator is not Available: $(kc -n mpi-operator get pods; kc -n mpi-operator logs deploy/mpi-operator --tail 20)"
  # the real API server refuses the operator's owned objects for some seconds after the CRD
  # is new (tests/lib/owner_refs.sh); the operator's backoff then grows past the tests' bounds
  # (CI: pod_failure_policy's launcher Job not there 30 s after the create). Users install
  # the CRD long before their jobs: wait as they would.
  if [ "${KUBE_BACKEND:-}" = k8s ]; then
    . "$ROOT/tests/lib/owner_refs.sh"
    ks_wait_for "owner_refs_probe kc default mpi-operator mpi-operator" 120 ||
      ks_fail "the API server's ownerReference admission never learned kubeflow.org/v2beta1 MPIJobs"
  fi
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

# ranks_one_per_worker JOB LOG: mpi-pi's "Rank R of 2 running on HOST" lines in LOG (a launcher's
# output) put rank 0 on JOB-worker-0 and rank 1 on JOB-worker-1, else the test fails naming them
ranks_one_per_worker() {
  [ "$(echo "$2" | sed -n "s/^Rank \\([01]\\) of 2 running on \\($1-worker-[01]\\).*/\\1 \\2/p" | sort | tr '\n' ,)" = \
    "0 $1-worker-0,1 $1-worker-1," ] || ks_fail "$1: ranks not one on each worker: $(echo "$2" | grep '^Rank')"
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

# ctl_proxy: starts tinyproxy (an HTTP CONNECT proxy nobody here wrote) inside the instance's
# network namespace on 127.0.0.1:3128, logging CONNECTs to $KS_DIR/proxy.log, and writes
# $KS_DIR/kubeconfig-proxy: the admin kubeconfig with proxy-url pointing at it. Stopped by PID
# on exit. Skips the test (77) when tinyproxy is not installed.
ctl_proxy() {
  command -v tinyproxy >/dev/null || { echo "skip: tinyproxy not installed (make deps)"; exit 77; }
  local netns port
  netns=$(cat "$KS_DIR/state/netns")
  port=$(sed -n 's|.*server: https://[^:]*:\([0-9]*\).*|\1|p' "$KS_DIR/kubeconfig" | head -1)
  printf 'Port 3128\nListen 127.0.0.1\nTimeout 120\nLogFile "%s"\nLogLevel Connect\nMaxClients 50\nAllow 127.0.0.1\nConnectPort %s\n' \
    "$KS_DIR/proxy.log" "$port" >"$KS_DIR/tinyproxy.conf"
  : >"$KS_DIR/proxy.log"
  nsenter --net=/run/netns/$netns -- tinyproxy -d -c "$KS_DIR/tinyproxy.conf" >"$KS_DIR/tinyproxy.out" 2>&1 &
  echo $! >"$KS_DIR/tinyproxy.pid"
  ks_on_exit 'kill $(cat "$KS_DIR/tinyproxy.pid") 2>/dev/null'
  ks_wait_for "ks_run bash -c 'exec 3<>/dev/tcp/127.0.0.1/3128' 2>/dev/null" 10 || ks_fail "tinyproxy did not start"
  python3 - "$KS_DIR/kubeconfig" "$KS_DIR/kubeconfig-proxy" <<'PY' || ks_fail "writing the proxy kubeconfig"
import sys, yaml
k = yaml.safe_load(open(sys.argv[1]))
for c in k["clusters"]:
    c["cluster"]["proxy-url"] = "http://127.0.0.1:3128"
yaml.safe_dump(k, open(sys.argv[2], "w"))
PY
}

# ctl_restart_job NAME SHARED_DIR WORKER_COMMAND [RUNPOLICY_EXTRA]: the YAML of a bounded-restart
# MPIJob (backoffLimit 2, launcher and workers restartPolicy Never, exec transport): 2 workers
# of 1 slot running WORKER_COMMAND (a YAML flow list), SHARED_DIR mounted at /shared in each;
# the ranks print "up on <host>" and exit 0 once /shared/second exists, else sleep 300.
# RUNPOLICY_EXTRA is appended inside runPolicy's braces (", ttlSecondsAfterFinished: 5").
ctl_restart_job() {
  mpijob_yaml "$1" --ann mpi-k8s.io/transport=exec --ann mpi-k8s.io/worker-timeout=120 --slots 1 \
    --run-policy "{cleanPodPolicy: Running, backoffLimit: 2${4:-}}" --restart Never --worker-restart Never \
    --command "[mpirun, --allow-run-as-root, -np, \"2\", --bind-to, none, sh, -c,
                      'echo \"up on \$(hostname)\"; [ -e /shared/second ] && exit 0; exec sleep 300']" \
    --worker-pod "volumes: [{name: shared, hostPath: {path: \"$2\", type: DirectoryOrCreate}}]" \
    --worker-command "$3" --worker-container 'volumeMounts: [{name: shared, mountPath: /shared}]'
}

# on_launcher JOB STACK [BOUND]: JOB's mpirun was told `--host localhost,JOB-worker-0...`, so one rank
# runs on the launcher, which the hostfile does not name: the placement check (docs/agent.md "Ranks
# on the launcher") fails it within BOUND s (default 100: pod start, a slow 100m launcher, its one
# container restart and the Job's backoff included), its message naming STACK, the process and
# runLauncherAsWorker
on_launcher() {
  local j=$1 msg b=${3:-100}
  ks_wait_for '[ "$(cond '"$j"' Failed status)" = True ]' "$b" ||
    { kc get mpijob "$j" -o yaml; kc logs -l "mpi_job_name=$j,mpi_role_type=launcher" --all-containers --tail 40; ks_fail "$j: not Failed within $b s"; }
  msg=$(cond "$j" Failed message)
  case $msg in *"$2 started '"*"' (pid "*") on the launcher "*"set runLauncherAsWorker: true"*) ;;
    *) kc get cm "$j-log" -o jsonpath='{.data.log}' | tail -n 40; ks_fail "$j: Failed message without the placement line: $msg" ;; esac
  echo "$j: $msg"
}

# daemon_killed JOB WHAT...: JOB (whose rank 1 killed its MPI daemon with SIGKILL) is Failed within
# 100 s (the daemon-exit stop's 30 s default and a grace period included), its message naming the
# MPI daemon on JOB-worker-1 and the node of status.rankFailure, followed by one of the WHATs
# ("exited with code 137 (Open MPI lost communication with it)")
daemon_killed() {
  local j=$1 msg node w ok=; shift
  ks_wait_for '[ "$(cond '"$j"' Failed status)" = True ]' 100 ||
    { kc logs -l "mpi_job_name=$j,mpi_role_type=launcher" --all-containers --tail 40; ks_fail "$j: not Failed within 100 s"; }
  msg=$(cond "$j" Failed message)
  node=$(kc get mpijob "$j" -o jsonpath='{.status.rankFailure.node}')
  for w in "$@"; do
    case "$msg" in *"the MPI daemon on pod $j-worker-1 (node $node) $w"*) ok=1 ;; esac
  done
  [ -n "$ok" ] || { kc get cm "$j-log" -o jsonpath='{.data.log}' | tail -n 40; ks_fail "$j: Failed message: $msg"; }
  [ -n "$node" ] || ks_fail "$j: no node in status.rankFailure"
  echo "$j: $msg"
}
