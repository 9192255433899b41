# agent_lib.bash - helpers sourced by tests/integration/agent_*.sh: a private
# kubesim instance per test (torn down by an EXIT trap even on failure),
# kubectl through it, worker pods built here (no controller), assertions.
set -euo pipefail
ROOT=${ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
BINDIR=${BINDIR:-$ROOT/bin}
KS=$ROOT/tests/kubesim/kubesim
AGENT=$BINDIR/mpi-agent
export OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader,tcp
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
T_NAME=$(basename "$0" .sh)
D=
BG_PIDS=()

log() { printf '%s [%s] %s\n' "$(date -u +%H:%M:%S.%3N)" "$T_NAME" "$*" >&2; }
fail() { log "FAIL: $*"; exit 1; }
skip() { echo "$*"; exit 77; }

ks_cleanup() {
  local rc=$?
  for p in "${BG_PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  if [ -n "$D" ]; then
    if [ $rc -ne 0 ] && [ -f "$D/apiserver.log" ]; then
      log "last lines of apiserver.log:"; tail -n 15 "$D/apiserver.log" >&2 || true
    fi
    for f in "$D"/o*; do [ $rc -ne 0 ] && [ -f "$f" ] && { log "--- $f"; tail -n 20 "$f" >&2; }; done
    timeout 60 "$KS" down --dir "$D" >/dev/null 2>&1 || true
    if [ $rc -ne 0 ] && [ -n "${KEEP:-}" ]; then log "kept $D"; else rm -rf "$D"; fi
  fi
  exit $rc
}

# ks_up [kubesim up options]: starts a private kubesim in $D.
ks_up() {
  [ -x "$AGENT" ] || skip "no $AGENT (run make)"
  [ -x "$KS" ] || skip "no kubesim"
  D=$(mktemp -d /tmp/agent-it-XXXXXX)
  trap ks_cleanup EXIT
  trap 'exit 130' INT TERM
  timeout 60 "$KS" up --dir "$D" "$@" >"$D/up.log" 2>&1 || { cat "$D/up.log" >&2; fail "kubesim up"; }
}

# ksrun CMD...: runs CMD where the API server and pods are reachable.
ksrun() { timeout -k 5 "${KT:-120}" "$KS" run --dir "$D" -- "$@"; }
k() { timeout 60 "$KS" run --dir "$D" -- kubectl "$@"; }

# ghost_pod JOB I: a worker pod bound to a node no kubelet runs, so its status
# is whatever the test patches (API-side tests of the wait/watch logic).
ghost_pod() {
  cat <<YAML
apiVersion: v1
kind: Pod
metadata:
  name: $1-worker-$2
  labels: {mpi_job_name: $1, mpi_role_type: worker}
spec:
  nodeName: ghost
  hostname: $1-worker-$2
  subdomain: $1-worker
  containers:
  - {name: worker, image: busybox, command: [sleep, "3600"]}
YAML
}

# set_status POD JSON-STATUS: replaces the pod's status (as a kubelet would).
set_status() { k patch pod "$1" --subresource=status --type=merge -p "{\"status\":$2}" >/dev/null; }
set_ready() {
  set_status "$1" '{"phase":"Running","podIP":"10.250.9.9","conditions":[{"type":"PodScheduled","status":"True"},{"type":"Ready","status":"True"}],"containerStatuses":[{"name":"worker","ready":true,"restartCount":0,"state":{"running":{}}}]}'
}

# now_ms: wall clock in ms.
now_ms() { date +%s%3N; }

# expect_in FILE TEXT...: every TEXT must occur in FILE.
expect_in() {
  local f=$1; shift
  for t in "$@"; do grep -qF -- "$t" "$f" || { log "--- $f:"; cat "$f" >&2; fail "\"$t\" not in $f"; }; done
}

# mine_named NAMES-REGEX: processes descended from this test or from its kubesim daemon
# (pods and exec'd commands) whose name matches, as "pid comm" lines. Other helpers' runs
# on the same machine are not descendants, so they never count.
mine_named() {
  local roots="$$"
  [ -f "$D/kubesim.pid" ] && roots="$roots $(cat "$D/kubesim.pid")"
  ps -e -o pid=,ppid=,comm= | awk -v roots="$roots" -v re="$1" '
    { pid[NR]=$1; pp[$1]=$2; comm[$1]=$3 }
    END { n=split(roots, r, " "); for (i=1;i<=n;i++) root[r[i]]=1
      for (k in pp) { p=k; d=0; while (p in pp && p>1 && d<64) { if (p in root) { if (k!=p || 1) { if (comm[k] ~ re && !(k in root)) print k, comm[k] }; break } p=pp[p]; d++ } } }'
}

# no_orphans [SECONDS]: within SECONDS (default 5), no mpirun/orted/mpi-rsh/MPI program
# of this test is left.
no_orphans() {
  local until=$((SECONDS + ${1:-5})) left
  while :; do
    left=$(mine_named '^(mpirun|orterun|orted|mpi-rsh|mpi_hello|prterun|prted)$')
    [ -z "$left" ] && return 0
    [ $SECONDS -ge $until ] && fail "orphaned processes: $(echo $left)"
    sleep 0.2
  done
}
