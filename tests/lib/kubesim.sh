# Bash helpers for integration tests that run on kubesim. Source this file, then:
#   ks_up [--nodes N] [--gpus G] [--set K=V]...  start an instance in a fresh temp dir
#                                  (KS_DIR); a trap always runs `kubesim down` on exit;
#                                  KS_UP_ARGS adds arguments (a wrapper test's image map)
#   ks_run CMD ARGS...             run CMD inside the instance's network namespace
#   ks_kubectl ARGS...             kubectl against the instance (KS_KUBECTL, default kubectl)
#   ks_wait_for 'SHELL CMD' SECS   poll CMD (eval'd in a subshell) until it succeeds, bounded
#   ks_down                        stop the instance now (ks_up may then be called again)
#   ks_fault KIND ARGS...          kubesim fault
#   ks_skip_unless_root            exit 77 (skip) when not root
#   ks_on_exit 'SHELL CMD'         run CMD during cleanup, before `kubesim down`
#   ks_log MSG                     a timestamped progress line on stderr
# Tests call `ks_fail MSG` to fail with a message and `ks_skip MSG` to skip (77). Requires
# ROOT (repo root) or finds it. Knobs: KS_RUN_TIMEOUT=SECONDS bounds each ks_run and
# ks_kubectl (unset: no bound but the test's own); KS_FAIL_TAIL='GLOB' adds the files of
# KS_DIR it matches (a test's own output) to the lines a failed test shows; KS_KEEP=1 keeps
# KS_DIR. tests/lib/agent_jobs.sh builds on this for the agent's tests (no controller);
# tests/lib/mpijob.sh (sourced here) has mpijob_yaml, the MPIJob manifests' one generator.
#
# KUBE_BACKEND=k8s runs the same helpers on the real cluster (tests/k8s/k8s, same CLI):
# ks_up starts one and loads the Docker Engine's mpik8s/* images into it (`make
# docker-images` first); an option or fault that only kubesim has skips the test (77),
# naming it. The default, kubesim, is the embedded simulator.

: "${ROOT:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
KUBE_BACKEND=${KUBE_BACKEND:-kubesim}
case $KUBE_BACKEND in
  kubesim) KUBESIM="$ROOT/tests/kubesim/kubesim" ;;
  k8s) KUBESIM="$ROOT/tests/k8s/k8s" ;;
  *) echo "KUBE_BACKEND=$KUBE_BACKEND: expected kubesim or k8s" >&2; exit 2 ;;
esac
KS_KUBECTL=${KS_KUBECTL:-kubectl}
KS_DIR=
_ks_cleanup_hooks=()
. "$ROOT/tests/lib/mpijob.sh"

ks_fail() {
  _ks_failed="$*"
  echo "FAIL: $*" >&2
  exit 1
}

ks_skip() {
  echo "skip: $*"
  exit 77
}

ks_skip_unless_root() {
  [ "$(id -u)" -eq 0 ] || ks_skip "needs root for network namespaces"
}

# ks_log MSG: "HH:MM:SS.mmm [test name] MSG" on stderr.
ks_log() {
  printf '%s [%s] %s\n' "$(date -u +%H:%M:%S.%3N)" "$(basename "$0" .sh)" "$*" >&2
}

# ks_on_exit CMD: run CMD (eval'd) during cleanup, before `kubesim down`.
ks_on_exit() {
  _ks_cleanup_hooks+=("$1")
}

_ks_cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  local h
  for h in "${_ks_cleanup_hooks[@]}"; do eval "$h" || true; done
  if [ -n "$KS_DIR" ] && [ -d "$KS_DIR" ]; then
    if [ $rc -ne 0 ]; then
      # the runner shows a failed test's last lines: the logs, then the reason again
      local f
      # shellcheck disable=SC2086
      for f in "$KS_DIR/apiserver.log" "$KS_DIR"/logs/*.log "$KS_DIR"/op-*.log ${KS_FAIL_TAIL:+"$KS_DIR"/$KS_FAIL_TAIL}; do
        [ -f "$f" ] || continue
        echo "---- last lines of $f (GET requests left out)" >&2
        grep -v ' INFO GET /' "$f" | tail -n 15 >&2 || true
      done
      [ -z "${_ks_failed:-}" ] || echo "FAIL: $_ks_failed" >&2
    fi
    timeout 120 "$KUBESIM" down --dir "$KS_DIR" || echo "$KUBE_BACKEND down failed" >&2
    if [ -z "${KS_KEEP:-}" ]; then rm -rf "$KS_DIR"; fi
  fi
  exit $rc
}

ks_up() {
  # KS_UP_ARGS: more `kubesim up` arguments from a wrapper test (word-split)
  # shellcheck disable=SC2086
  set -- "$@" ${KS_UP_ARGS:-}
  [ "$KUBE_BACKEND" = kubesim ] || _ks_k8s_args "$@"
  KS_DIR=$(mktemp -d "${TMPDIR:-/tmp}/$KUBE_BACKEND-test.XXXXXX") || ks_fail "mktemp"
  trap _ks_cleanup EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  if [ "$KUBE_BACKEND" = kubesim ]; then
    timeout 60 "$KUBESIM" up --dir "$KS_DIR" "$@" >/dev/null || ks_fail "kubesim up failed"
  else
    # K8S_IP_FAMILY=ipv6|dual: any test on that family (tests/k8s/cases/ipv6.sh)
    timeout "${K8S_UP_LIMIT:-300}" "$KUBESIM" up --dir "$KS_DIR" "$@" ${K8S_IP_FAMILY:+--ip-family "$K8S_IP_FAMILY"} \
      >"$KS_DIR/up.log" 2>&1 || { tail -n 40 "$KS_DIR/up.log" >&2; ks_fail "k8s up failed"; }
    _ks_family_check
    local imgs
    imgs=$(docker images --format '{{.Repository}}:{{.Tag}}' 'mpik8s/*' | grep -v -e '^mpik8s/pause:' -e '^mpik8s/coredns:' -e ':<none>$')
    # shellcheck disable=SC2086
    [ -z "$imgs" ] || timeout 600 "$KUBESIM" load --dir "$KS_DIR" $imgs >>"$KS_DIR/up.log" 2>&1 ||
      { tail -n 20 "$KS_DIR/up.log" >&2; ks_fail "k8s load failed"; }
  fi
  export KS_DIR
}

# With K8S_IP_FAMILY, the cluster is of that family: its first node's InternalIPs say so.
_ks_family_check() {
  [ -n "${K8S_IP_FAMILY:-}" ] || return 0
  local ips want
  ips=$("$KUBESIM" run --dir "$KS_DIR" -- kubectl get node k8s-node-1 \
    -o jsonpath='{.status.addresses[?(@.type=="InternalIP")].address}' 2>&1)
  case $K8S_IP_FAMILY in ipv6) want='^fd00:[0-9a-f:]+$' ;; dual) want='^10\.[0-9.]+ fd00:[0-9a-f:]+$' ;;
    *) want='^10\.[0-9.]+$' ;; esac
  [[ $ips =~ $want ]] || ks_fail "K8S_IP_FAMILY=$K8S_IP_FAMILY: node k8s-node-1 has InternalIPs '$ips'"
}

# On the real cluster, kubesim-only options skip the test (77) with the reason.
_ks_k8s_args() {
  while [ $# -gt 0 ]; do
    case $1 in
      --tls-min-version) shift 2 ;;
      # the real cluster's address families (docs/k8s.md "IPv6 and dual stack")
      --ip-family) shift 2 ;;
      # the real cluster's extra nodes: a kubelet, containerd and kube-proxy each (docs/k8s.md)
      --nodes) case ${2:-} in 1|2|3) shift 2 ;; *) echo "skip: KUBE_BACKEND=k8s: --nodes ${2:-} (the real cluster has 1 to 3)"; exit 77 ;; esac ;;
      *) echo "skip: KUBE_BACKEND=k8s: the real cluster has no kubesim option $1 ${2:-}"; exit 77 ;;
    esac
  done
}

ks_down() {
  if [ -n "$KS_DIR" ]; then
    timeout 120 "$KUBESIM" down --dir "$KS_DIR" || echo "$KUBE_BACKEND down failed" >&2
    [ -n "${KS_KEEP:-}" ] || rm -rf "$KS_DIR"
    KS_DIR=
  fi
}

ks_run() {
  [ -n "$KS_DIR" ] || ks_fail "ks_run before ks_up"
  # kubesim's own `run` as the shell script `up` wrote (no Python started: the polls call this)
  local run=("$KUBESIM" run --dir "$KS_DIR" --)
  [ ! -x "$KS_DIR/state/run" ] || run=("$KS_DIR/state/run")
  if [ -n "${KS_RUN_TIMEOUT:-}" ]; then timeout -k 5 "$KS_RUN_TIMEOUT" "${run[@]}" "$@"; else "${run[@]}" "$@"; fi
}

ks_kubectl() {
  ks_run "$KS_KUBECTL" "$@"
}

ks_fault() {
  if [ "$KUBE_BACKEND" = k8s ]; then
    case $1 in
      restart-apiserver|kill-containers|stop-node|start-node|restart-kubelet|restart-containerd) "$KUBESIM" fault --dir "$KS_DIR" "$@"; return ;;
      delete-pod-now) ks_kubectl delete pod -n "${2%%/*}" "${2#*/}" --grace-period=0 --force; return ;;
      *) echo "skip: KUBE_BACKEND=k8s: no real-cluster form of kubesim fault $1"; exit 77 ;;
    esac
  fi
  "$KUBESIM" fault --dir "$KS_DIR" "$@"
}

# ks_mono_ms: milliseconds since boot (/proc/uptime, 10 ms steps): a clock for deadlines that
# a step of the wall clock (NTP, a VM resumed) neither shortens nor stretches.
ks_mono_ms() {
  local up _
  read -r up _ </proc/uptime
  echo $(( 10#${up/./} * 10 ))
}

# ks_wait_for 'CMD' TIMEOUT_SECONDS: polls every 0.2 s for its first 3 s, every 0.5 s up to
# 15 s, then every second; returns 1 on timeout (monotonic clock). A poll is typically a
# kubectl (about 0.1 s of CPU): a long wait that polled 5 times a second took a third of a
# core, and the suites run side by side on 2 cores (docs/k8s.md).
ks_wait_for() {
  local cmd=$1 limit=${2:-30} t0 now
  t0=$(ks_mono_ms); now=$t0
  while [ "$now" -lt $(( t0 + limit * 1000 )) ]; do
    if ( eval "$cmd" ) >/dev/null 2>&1; then return 0; fi
    if [ $((now - t0)) -lt 3000 ]; then sleep 0.2; elif [ $((now - t0)) -lt 15000 ]; then sleep 0.5; else sleep 1; fi
    now=$(ks_mono_ms)
  done
  # a last look at the deadline (the steps above may end up to a second before it)
  if ( eval "$cmd" ) >/dev/null 2>&1; then return 0; fi
  echo "timed out after ${limit}s waiting for: $cmd" >&2
  return 1
}
