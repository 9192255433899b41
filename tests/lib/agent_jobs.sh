# tests/lib/agent_jobs.sh: the agent's integration tests (tests/integration/agent_*.sh) on
# kubesim: the harness of tests/lib/kubesim.sh (ks_up, ks_run, ks_kubectl, ks_fail, ks_log,
# the cleanup trap; sourced here), plus the objects the controller would create, built here
# without it (worker pods whose status a test sets, or whole jobs that kubesim's kubelet runs),
# and the agent tests' assertions. Every ks_run and ks_kubectl is bounded (KS_RUN_TIMEOUT,
# default 120 s); a failed test shows the tail of its own output files (KS_DIR/o*).
: "${ROOT:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
: "${BINDIR:=$ROOT/bin}"
. "$ROOT/tests/lib/kubesim.sh"
AGENT=$BINDIR/mpi-agent
[ -x "$AGENT" ] || ks_skip "no $AGENT (run make)"
: "${KS_RUN_TIMEOUT:=120}"
: "${KS_FAIL_TAIL:=o*}"
export OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader,tcp
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# BG_PIDS: what a test started in the background (`ks_run ... & BG_PIDS+=($!)`), ended at exit
BG_PIDS=()
ks_on_exit 'for p in "${BG_PIDS[@]}"; do kill "$p" 2>/dev/null || true; done'

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
set_status() { ks_kubectl patch pod "$1" --subresource=status --type=merge -p "{\"status\":$2}" >/dev/null; }
set_ready() {
  set_status "$1" '{"phase":"Running","podIP":"10.250.9.9","conditions":[{"type":"PodScheduled","status":"True"},{"type":"Ready","status":"True"}],"containerStatuses":[{"name":"worker","ready":true,"restartCount":0,"state":{"running":{}}}]}'
}

# now_ms: wall clock in ms.
now_ms() { date +%s%3N; }

# expect_in FILE TEXT...: every TEXT must occur in FILE.
expect_in() {
  local f=$1; shift
  for t in "$@"; do grep -qF -- "$t" "$f" || { ks_log "--- $f:"; cat "$f" >&2; ks_fail "\"$t\" not in $f"; }; done
}

# mine_named NAMES-REGEX: processes descended from this test or from its kubesim daemon
# (pods and exec'd commands) whose name matches, as "pid comm" lines. Other helpers' runs
# on the same machine are not descendants, so they never count.
mine_named() {
  local roots="$$"
  [ -f "$KS_DIR/kubesim.pid" ] && roots="$roots $(cat "$KS_DIR/kubesim.pid")"
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
    [ $SECONDS -ge $until ] && ks_fail "orphaned processes: $(echo $left)"
    sleep 0.2
  done
}

# ---- real jobs (need kubesim's kubelet): objects the controller would create ----
# job_yaml JOB N MODE: SA/Role/RoleBinding, headless Service, ConfigMap with the hostfile,
# N worker pods and a launcher pod. MODE init: init container `mpi-agent init` + main
# container running mpirun with /opt/kube/mpi-rsh; MODE run: main container
# `mpi-agent run -- mpirun ...` (no init container). Knobs (env): WORKER_IMAGE, WORKER_CMD
# (YAML list), WORKER_RESTART; for the last worker only: LAST_IMAGE, LAST_CMD, WORKER_GPUS,
# LAST_PROBE (readiness: file must exist); AGENT_TIMEOUT, MPI_PROG (YAML list items),
# LAUNCH_TIMEOUT (bound on mpirun), EXTRA_AGENT_ARGS (YAML list items, run mode),
# TRANSPORT (exec|ssh), SSH_DIR (the job's key directory, for ssh), LAUNCHER_SA (the launcher's
# account, default $job-launcher; "default" = one without the Role: no API access).
job_yaml() {
  local job=$1 n=$2 mode=$3 i
  local wimg=${WORKER_IMAGE:-mpik8s/openmpi} wcmd='[sleep, "3600"]' prog='mpi-pi, "2000000"'
  local lt=${LAUNCH_TIMEOUT:-90}
  [ -n "${WORKER_CMD:-}" ] && wcmd=$WORKER_CMD
  [ -n "${MPI_PROG:-}" ] && prog=$MPI_PROG
  local mpirun="timeout, \"$lt\", mpirun, -np, \"$n\", --bind-to, none, $prog"
  cat <<YAML
apiVersion: v1
kind: ServiceAccount
metadata: {name: $job-launcher}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: $job-launcher}
rules:
- {apiGroups: [""], resources: [pods], verbs: [get, list, watch]}
- {apiGroups: [""], resources: [pods/exec], verbs: [create, get]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: $job-launcher}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: $job-launcher}
subjects: [{kind: ServiceAccount, name: $job-launcher}]
---
apiVersion: v1
kind: Service
metadata: {name: $job-worker}
spec:
  clusterIP: None
  selector: {mpi_job_name: $job, mpi_role_type: worker}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: $job-config}
data:
  hostfile: |
YAML
  for ((i = 0; i < n; i++)); do echo "    $job-worker-$i.$job-worker.default.svc slots=1"; done
  for ((i = 0; i < n; i++)); do cat <<YAML
---
apiVersion: v1
kind: Pod
metadata:
  name: $job-worker-$i
  labels: {mpi_job_name: $job, mpi_role_type: worker}
spec:
  hostname: $job-worker-$i
  subdomain: $job-worker
  restartPolicy: ${WORKER_RESTART:-Always}
  terminationGracePeriodSeconds: 2
  containers:
  - name: worker
YAML
    if [ "$i" -eq $((n - 1)) ]; then
      echo "    image: ${LAST_IMAGE:-$wimg}"
      echo "    command: ${LAST_CMD:-$wcmd}"
      [ -n "${WORKER_GPUS:-}" ] && echo "    resources: {limits: {nvidia.com/gpu: \"$WORKER_GPUS\"}}"
      [ -n "${LAST_PROBE:-}" ] && echo "    readinessProbe: {exec: {command: [test, -f, $LAST_PROBE]}, periodSeconds: 1}"
    else
      echo "    image: $wimg"
      echo "    command: $wcmd"
    fi
  done
  cat <<YAML
---
apiVersion: v1
kind: Pod
metadata:
  name: $job-launcher
  labels: {mpi_job_name: $job, mpi_role_type: launcher}
spec:
  serviceAccountName: ${LAUNCHER_SA:-$job-launcher}
  restartPolicy: Never
  terminationGracePeriodSeconds: 5
  volumes:
  - {name: kube, emptyDir: {}}
  - name: mpi
    configMap: {name: $job-config, items: [{key: hostfile, path: hostfile, mode: 0444}]}
YAML
  local env="
    - {name: MPI_JOB_NAME, value: $job}
    - {name: MPI_JOB_NAMESPACE, value: default}
    - {name: MPI_JOB_TRANSPORT, value: ${TRANSPORT:-exec}}
    - {name: MPI_JOB_SSH_DIR, value: \"${SSH_DIR:-}\"}
    - {name: MPI_JOB_WORKER_CONTAINER, value: worker}
    - {name: MPI_JOB_WORKERS, value: \"$n\"}
    - {name: MPI_JOB_SLOTS, value: \"1\"}
    - {name: MPI_AGENT_TIMEOUT, value: \"${AGENT_TIMEOUT:-120}\"}
    - {name: MPI_AGENT_TERMINATION_LOG, value: /dev/termination-log}
    - {name: OMPI_ALLOW_RUN_AS_ROOT, value: \"1\"}
    - {name: OMPI_ALLOW_RUN_AS_ROOT_CONFIRM, value: \"1\"}
    - {name: OMPI_MCA_pml, value: ob1}
    - {name: OMPI_MCA_btl, value: \"self,vader,tcp\"}"
  if [ "$mode" = init ]; then cat <<YAML
  initContainers:
  - name: agent
    image: mpik8s/mpi-agent
    command: [mpi-agent, init]
    env:$env
    volumeMounts: [{name: kube, mountPath: /opt/kube}, {name: mpi, mountPath: /etc/mpi}]
  containers:
  - name: launcher
    image: mpik8s/openmpi
    command: [$mpirun]
    env:$env
    - {name: OMPI_MCA_plm_rsh_agent, value: "${RSH_AGENT:-/opt/kube/mpi-rsh : false}"}
    - {name: OMPI_MCA_orte_default_hostfile, value: /etc/mpi/hostfile}
    - {name: OMPI_MCA_orte_keep_fqdn_hostnames, value: "true"}
    - {name: OMPI_MCA_plm_rsh_no_tree_spawn, value: "1"}
    - {name: OMPI_MCA_orte_leave_session_attached, value: "1"}
    - {name: OMPI_MCA_plm_rsh_num_concurrent, value: "128"}
    volumeMounts: [{name: kube, mountPath: /opt/kube}, {name: mpi, mountPath: /etc/mpi}]
YAML
  else cat <<YAML
  containers:
  - name: launcher
    image: mpik8s/openmpi
    command: [mpi-agent, run, ${EXTRA_AGENT_ARGS:-} --, $mpirun]
    env:$env
    volumeMounts: [{name: kube, mountPath: /opt/kube}, {name: mpi, mountPath: /etc/mpi}]
YAML
  fi
}

# pod_phase POD: status.phase (empty when missing).
pod_phase() { ks_kubectl get pod "$1" -o 'jsonpath={.status.phase}' 2>/dev/null || true; }

# wait_launcher JOB SECONDS: waits until the launcher pod ended; prints the phase.
wait_launcher() {
  local until=$((SECONDS + $2)) ph
  while [ $SECONDS -lt $until ]; do
    ph=$(pod_phase "$1-launcher")
    case $ph in Succeeded|Failed) echo "$ph"; return 0 ;; esac
    sleep 0.3
  done
  echo "timeout"
}

# launcher_logs JOB: init container and main container logs.
launcher_logs() {
  { ks_kubectl logs "$1-launcher" -c agent 2>/dev/null || true; ks_kubectl logs "$1-launcher" -c launcher 2>/dev/null || true; }
}

# term_msg JOB CONTAINER: the container's termination message.
term_msg() {
  local q
  if [ "$2" = agent ]; then q='{.status.initContainerStatuses[0].state.terminated.message}'
  else q='{.status.containerStatuses[0].state.terminated.message}'; fi
  ks_kubectl get pod "$1-launcher" -o "jsonpath=$q" 2>/dev/null || true
}

# delete_job JOB: removes the job's objects at once.
delete_job() {
  ks_kubectl delete pod,svc,cm,sa,role,rolebinding -l "mpi_job_name=$1" --grace-period=0 --force --wait=false >/dev/null 2>&1 || true
  ks_kubectl delete pod "$1-launcher" sa/"$1-launcher" role/"$1-launcher" rolebinding/"$1-launcher" \
    svc/"$1-worker" cm/"$1-config" --grace-period=0 --force --wait=false >/dev/null 2>&1 || true
}

# log_ms FILE PATTERN: epoch ms of the first agent log line in FILE containing PATTERN
# (the line's own RFC 3339 timestamp), or fails.
log_ms() {
  local line
  line=$(grep -F -m1 -- "$2" "$1" || true)
  [ -n "$line" ] || ks_fail "no log line with \"$2\" in $1"
  date -d "${line%%Z *}Z" +%s%3N
}

# within MS FROM_MS TO_MS WHAT: asserts TO - FROM <= MS and logs it.
within() {
  local dt=$(( $3 - $2 ))
  ks_log "   $4: $dt ms"
  [ "$dt" -le "$1" ] || ks_fail "$4 took $dt ms (bound $1 ms)"
}
