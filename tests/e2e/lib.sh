# tests/e2e/lib.sh - the end-to-end harness's steps (sourced by tests/e2e/cases/*.sh and
# tests/integration/e2e_*.sh). One case = one private kubesim instance under /tmp/e2e-*,
# the operator (a process inside `kubesim run`, or a pod built from the deploy manifest),
# MPIJobs made from a template, faults injected at the right moment, and assertions on the
# MPIJob's final condition (type, reason, message substring, time to reach it) followed by
# a leftover check (pods, processes, network namespaces, owned objects). Everything is
# bounded; an EXIT trap stops what the case started (by PID) and tears kubesim down.
#
# A case prints its result as the last line "E2E-RESULT: <one-line detail>" (read by run.sh)
# and exits 0 (pass), 1 (fail) or 77 (skip).
set -u
: "${ROOT:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
: "${BINDIR:=$ROOT/bin}"
# shellcheck source=../lib/owner_refs.sh
. "$ROOT/tests/lib/owner_refs.sh"
# KUBE_BACKEND=k8s: the cases on the real cluster (tests/k8s/k8s, kubesim's CLI); a fault
# only kubesim can make skips the case (77)
KUBE_BACKEND=${KUBE_BACKEND:-kubesim}
if [ "$KUBE_BACKEND" = k8s ]; then KUBESIM=$ROOT/tests/k8s/k8s; else KUBESIM=$ROOT/tests/kubesim/kubesim; fi
export OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader,tcp
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
E2E_CASE=${E2E_CASE:-$(basename "$0" .sh)}
E2E_DIR=
KS=
E2E_PIDS=()
E2E_DETAIL=()

e2e_log() { printf '%s [%s] %s\n' "$(date -u +%H:%M:%S.%3N)" "$E2E_CASE" "$*" >&2; }
e2e_now_ms() { date +%s%3N; }
# e2e_mono_ms: ms since boot (/proc/uptime): the clock of the waits' deadlines, which a step
# of the wall clock (NTP, a VM resumed) neither shortens nor stretches
e2e_mono_ms() { local up _; read -r up _ </proc/uptime; echo $(( 10#${up/./} * 10 )); }

# e2e_note TEXT: adds TEXT to the one-line result detail.
e2e_note() { E2E_DETAIL+=("$*"); }

e2e_fail() {
  e2e_log "FAIL: $*"
  echo "E2E-RESULT: FAIL $* ${E2E_DETAIL[*]:-}"
  exit 1
}

e2e_skip() {
  echo "E2E-RESULT: SKIP $*"
  echo "$*"
  exit 77
}

e2e_pass() {
  echo "E2E-RESULT: PASS ${E2E_DETAIL[*]:-} $*"
  exit 0
}

_e2e_cleanup() {
  local rc=$? p
  trap - EXIT INT TERM
  for p in "${E2E_PIDS[@]}"; do
    kill -TERM "$p" 2>/dev/null || true
  done
  for p in "${E2E_PIDS[@]}"; do
    for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$p" 2>/dev/null || break; sleep 0.2; done
    kill -KILL "$p" 2>/dev/null || true
  done
  if [ -n "$KS" ] && [ -d "$KS" ]; then
    if [ $rc -ne 0 ] && [ $rc -ne 77 ]; then
      e2e_log "--- last lines of apiserver.log"; tail -n 15 "$KS/apiserver.log" >&2 2>/dev/null || true
      for f in "$E2E_DIR"/op-*.log; do [ -f "$f" ] && { e2e_log "--- $f"; tail -n 15 "$f" >&2; }; done
    fi
    # the operator's requests, for the ClusterRole usage summary (tests/e2e/data/rbac_usage.py)
    if [ -n "${E2E_OUT:-}" ] && [ -f "$KS/apiserver.log" ]; then
      mkdir -p "$E2E_OUT/opreq" &&
        grep -E 'ms system:serviceaccount:mpi-operator:[a-z0-9-]+$' "$KS/apiserver.log" >"$E2E_OUT/opreq/$E2E_CASE.log" || true
    fi
    timeout 120 "$KUBESIM" down --dir "$KS" >/dev/null 2>&1 || e2e_log "$KUBE_BACKEND down failed"
  fi
  [ -n "${E2E_VARTMP:-}" ] && rm -rf "$E2E_VARTMP"
  if [ -n "$E2E_DIR" ]; then
    if [ -n "${E2E_KEEP:-}" ] || { [ $rc -ne 0 ] && [ $rc -ne 77 ] && [ -n "${E2E_KEEP_FAILED:-}" ]; }; then
      e2e_log "kept $E2E_DIR"
    else
      rm -rf "$E2E_DIR"
    fi
  fi
  exit $rc
}

# e2e_begin: the case's private directory (/tmp/e2e-CASE.XXXXXX) and the cleanup trap.
e2e_begin() {
  [ "$(id -u)" -eq 0 ] || e2e_skip "needs root (kubesim network namespaces)"
  for b in mpi-operator mpi-agent mpi-rsh; do
    [ -x "$BINDIR/$b" ] || e2e_skip "missing $BINDIR/$b (run make)"
  done
  [ -x "$ROOT/build/stage/usr/local/bin/mpi-agent" ] || e2e_skip "missing build/stage (run make stage)"
  E2E_DIR=$(mktemp -d "/tmp/e2e-$E2E_CASE.XXXXXX") || exit 1
  trap _e2e_cleanup EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
}

# e2e_up [kubesim up args]: starts kubesim in $E2E_DIR/ks and installs what the deploy
# manifest declares except the Deployment: namespace, CRD, ServiceAccount, ClusterRole and
# bindings, from deploy/v2beta1 (controller_journey.sh installs deploy/v1alpha2 and
# controller_flavours.sh the kustomize overlay; the operators these cases start run as that
# ServiceAccount under kubesim's RBAC escalation and ownerReference checks).
e2e_up() {
  KS=$E2E_DIR/ks
  if [ "$KUBE_BACKEND" = k8s ]; then
    # job_backoff_seconds tunes kubesim's Job controller; the real one backs off on its own
    # (10 s, doubling): the case's bounds hold or it fails, it is not skipped
    # --nodes N: the real cluster's extra nodes (tests/k8s/k8s up --nodes)
    local a nodes=()
    while [ $# -gt 0 ]; do
      case $1 in
        --set|job_backoff_seconds=*) shift ;;
        --nodes) nodes=(--nodes "$2"); shift 2 ;;
        --ip-family) nodes+=(--ip-family "$2"); shift 2 ;;
        *) e2e_skip "KUBE_BACKEND=k8s: no real-cluster form of kubesim up $*" ;;
      esac
    done
    timeout 300 "$KUBESIM" up --dir "$KS" "${nodes[@]}" >"$E2E_DIR/up.log" 2>&1 ||
      { tail -n 40 "$E2E_DIR/up.log" >&2; e2e_fail "k8s up"; }
    # shellcheck disable=SC2046
    timeout 300 "$KUBESIM" load --dir "$KS" $(docker images --format '{{.Repository}}:{{.Tag}}' 'mpik8s/*' |
      grep -v -e '^mpik8s/pause:' -e '^mpik8s/coredns:' -e ':<none>$') >>"$E2E_DIR/up.log" 2>&1 ||
      { tail -n 20 "$E2E_DIR/up.log" >&2; e2e_fail "k8s load"; }
  else
    timeout 60 "$KUBESIM" up --dir "$KS" "$@" >"$E2E_DIR/up.log" 2>&1 ||
      { cat "$E2E_DIR/up.log" >&2; e2e_fail "kubesim up"; }
  fi
  python3 - "$ROOT/deploy/v2beta1/mpi-operator.yaml" >"$E2E_DIR/deploy-nodeploy.yaml" <<'PY' || e2e_fail "reading the deploy manifest"
import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d and d.get("kind") != "Deployment"]
print(yaml.safe_dump_all(docs))
PY
  kc create -f "$E2E_DIR/deploy-nodeploy.yaml" >/dev/null || e2e_fail "kubectl create (deploy manifest)"
  e2e_wait_for "kc get mpijobs" 20 || e2e_fail "mpijobs not served"
  [ "$KUBE_BACKEND" != k8s ] || e2e_owner_refs_ready
}

# e2e_owner_refs_ready: waits until the real API server's OwnerReferencesPermissionEnforcement
# admission knows the new CRD (tests/lib/owner_refs.sh says why); unwaited, the operator's
# backoff on its refusals cost the first job 20 s.
e2e_owner_refs_ready() {
  local t0
  t0=$(e2e_now_ms)
  e2e_wait_for "owner_refs_probe kc default mpi-operator mpi-operator" 120 ||
    e2e_fail "the API server's ownerReference admission never learned kubeflow.org/v2beta1 MPIJobs"
  e2e_log "ownerReference admission knows MPIJobs $(( ($(e2e_now_ms) - t0) / 1000 )) s after the CRD was served"
}

# kc ARGS...: the real kubectl against the instance, bounded.
kc() { local _run; _e2e_runner; timeout 60 "${_run[@]}" kubectl "$@"; }

# ksrun CMD...: CMD where the API server and pod IPs are reachable, bounded by E2E_RUN_T (60).
ksrun() { local _run; _e2e_runner; timeout -k 5 "${E2E_RUN_T:-60}" "${_run[@]}" "$@"; }

# _e2e_runner: sets its caller's _run to the argv of `kubesim run`: the shell script that
# kubesim's `up` wrote where there is one (no Python started per poll), else the CLI.
_e2e_runner() {
  _run=("$KUBESIM" run --dir "$KS" --)
  [ ! -x "$KS/state/run" ] || _run=("$KS/state/run")
}

# e2e_fault KIND ARGS...: kubesim fault.
e2e_fault() {
  e2e_log "fault: $*"
  if [ "$KUBE_BACKEND" = k8s ]; then
    case $1 in
      restart-apiserver|kill-containers|stop-node|start-node|restart-kubelet|restart-containerd|partition|heal)
        timeout 120 "$KUBESIM" fault --dir "$KS" "$@" || e2e_fail "fault $* failed" ;;
      *) e2e_skip "KUBE_BACKEND=k8s: no real-cluster form of kubesim fault $1" ;;
    esac
    return
  fi
  timeout 60 "$KUBESIM" fault --dir "$KS" "$@" || e2e_fail "fault $* failed"
}

# e2e_wait_for 'CMD' SECONDS: polls CMD (eval'd), every 0.25 s at first, bounded.
e2e_wait_for() {
  local cmd=$1 t0 now
  t0=$(e2e_mono_ms); now=$t0
  while [ "$now" -lt $(( t0 + ${2:-30} * 1000 )) ]; do
    if ( eval "$cmd" ) >/dev/null 2>&1; then return 0; fi
    # as ks_wait_for (tests/lib/kubesim.sh): finer at first, every second after 15 s
    if [ $((now - t0)) -lt 3000 ]; then sleep 0.25; elif [ $((now - t0)) -lt 15000 ]; then sleep 0.5; else sleep 1; fi
    now=$(e2e_mono_ms)
  done
  if ( eval "$cmd" ) >/dev/null 2>&1; then return 0; fi  # a last look at the deadline
  e2e_log "timed out after ${2:-30}s waiting for: $cmd"
  return 1
}

# ---- the operator -----------------------------------------------------------------------
# e2e_op_identity NAME: a ServiceAccount mpi-operator/op-NAME bound to the manifest's
# ClusterRole and leader-election Role, and a kubeconfig with its token
# ($E2E_DIR/op-NAME.kubeconfig). The operator runs with exactly the shipped permissions,
# and the access log tells the operators apart (user system:serviceaccount:mpi-operator:op-NAME).
e2e_op_identity() {
  local sa=op-$1 tok
  [ -f "$E2E_DIR/$sa.kubeconfig" ] && return 0
  kc -n mpi-operator create sa "$sa" >/dev/null || e2e_fail "create sa $sa"
  kc create clusterrolebinding "$sa" --clusterrole=mpi-operator --serviceaccount="mpi-operator:$sa" >/dev/null ||
    e2e_fail "clusterrolebinding $sa"
  kc -n mpi-operator create rolebinding "$sa" --role=mpi-operator-leader-election \
    --serviceaccount="mpi-operator:$sa" >/dev/null || e2e_fail "rolebinding $sa"
  # 24 h: kubectl's default of 1 h expired the soak's operator after 61 min (401s, the leader
  # lease lost, the operator exited as it should; tests/e2e/soak.sh runs 2 h)
  tok=$(kc -n mpi-operator create token "$sa" --duration 24h) || e2e_fail "token for $sa"
  # the admin kubeconfig with its user's credentials replaced by the token (kubesim's admin
  # has a token; the real cluster's a client certificate, which must not stay beside it)
  python3 - "$KS/kubeconfig" "$tok" >"$E2E_DIR/$sa.kubeconfig" <<'PY' || e2e_fail "kubeconfig for $sa"
import sys, yaml
c = yaml.safe_load(open(sys.argv[1]))
for u in c["users"]:
    u["user"] = {"token": sys.argv[2]}
print(yaml.safe_dump(c))
PY
  chmod 600 "$E2E_DIR/$sa.kubeconfig"
  echo "$tok" >"$E2E_DIR/$sa.token"
}

# e2e_op_start NAME [flags]: bin/mpi-operator as a process in the instance's network
# namespace with its own ServiceAccount (e2e_op_identity); log $E2E_DIR/op-NAME.log.
# Leader election on with short timings (lease 6 s, renew 4 s, retry 1 s) so the
# controller cases converge in seconds; flags override. E2E_OP_ADMIN=1: admin kubeconfig.
# E2E_LEASE="LEASE RENEW RETRY" (seconds) overrides the timings: a case that restarts the
# real API server (about 17 s down: tests/k8s/k8s fault) renews across it.
e2e_op_start() {
  local name=$1 kcfg lease renew retry; shift
  read -r lease renew retry <<<"${E2E_LEASE:-6 4 1}"
  if [ -n "${E2E_OP_ADMIN:-}" ]; then kcfg=$KS/kubeconfig
  else e2e_op_identity "$name"; kcfg=$E2E_DIR/op-$name.kubeconfig; fi
  # E2E_AGENT_IMAGE: the launchers' init container image (a branch's agent under test)
  [ -z "${E2E_AGENT_IMAGE:-}" ] || set -- --agent-image "$E2E_AGENT_IMAGE" "$@"
  # E2E_OP_WRAP: a command the operator runs under (split on blanks: tests/e2e/soak.sh's valgrind)
  # shellcheck disable=SC2086
  setsid "$KUBESIM" run --dir "$KS" -- ${E2E_OP_WRAP:-} "$BINDIR/mpi-operator" --kubeconfig "$kcfg" \
    --lease-duration "$lease" --renew-deadline "$renew" --retry-period "$retry" "$@" \
    >>"$E2E_DIR/op-$name.log" 2>&1 &
  echo $! >"$E2E_DIR/op-$name.pid"
  E2E_PIDS+=("$!")
}

# e2e_op_pid NAME: the operator process's PID (the exec'd kubesim run keeps the PID).
e2e_op_pid() { cat "$E2E_DIR/op-$1.pid"; }

# e2e_op_stop NAME [SIGNAL]: signals the operator, waits (bounded) for it to go.
e2e_op_stop() {
  local pid sig=${2:-TERM}
  pid=$(e2e_op_pid "$1") || return 0
  kill -"$sig" "$pid" 2>/dev/null || return 0
  for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.2; done
  kill -KILL "$pid" 2>/dev/null || true
}

# e2e_op_pod [extra args]: the operator as a pod with the manifest's ServiceAccount, made
# from the deploy manifest's Deployment pod template (probes, ports, SA as shipped).
e2e_op_pod() {
  python3 - "$ROOT/deploy/v1alpha2/mpi-operator.yaml" "$@" >"$E2E_DIR/op-pod.yaml" <<'PY' || e2e_fail "operator pod from the manifest"
import sys, yaml
dep = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d and d.get("kind") == "Deployment"][0]
t = dep["spec"]["template"]
c = t["spec"]["containers"][0]
c["args"] = list(c.get("args") or []) + ["--lease-duration=6", "--renew-deadline=4",
                                          "--retry-period=1"] + sys.argv[2:]
pod = {"apiVersion": "v1", "kind": "Pod",
       "metadata": {"name": "mpi-operator", "namespace": dep["metadata"]["namespace"],
                    "labels": t["metadata"]["labels"]},
       "spec": t["spec"]}
print(yaml.safe_dump(pod))
PY
  kc create -f "$E2E_DIR/op-pod.yaml" >/dev/null || e2e_fail "create operator pod"
  e2e_wait_for "[ \"\$(kc -n mpi-operator get pod mpi-operator -o jsonpath='{.status.containerStatuses[0].ready}')\" = true ]" 60 ||
    e2e_fail "operator pod not Ready: $(kc -n mpi-operator logs mpi-operator 2>&1 | tail -3)"
}

# ---- jobs --------------------------------------------------------------------------------
# e2e_job NAME: an MPIJob (v2beta1 unless API=v1alpha2). Knobs (env):
#   WORKERS (2), SLOTS (1), TRANSPORT (exec|ssh; exec), PROG (launcher command as a YAML
#   flow list; default mpi-pi over all ranks under `timeout 90`), WORKER_IMAGE,
#   WORKER_GPUS
#   (nvidia.com/gpu limit of every worker), LAUNCHER_NODE / WORKER_NODE (a nodeSelector on
#   kubernetes.io/hostname: the real cluster's k8s-node-<i>), BACKOFF (backoffLimit), DEADLINE
#   (activeDeadlineSeconds), WORKER_TIMEOUT, PROGRESS_TIMEOUT (annotations), CLEAN (cleanPodPolicy),
#   LAUNCHER_RESTART (the Launcher replica's restartPolicy, which the launcher pod gets: the
#   template's own is overridden, as upstream does; Never keeps a failed launcher pod and its
#   log; the default OnFailure reruns it in place and the Job deletes it on failure),
#   WORKER_GRACE (terminationGracePeriodSeconds of the workers, 2), READY_FILE (workers are
#   Ready only while this host file exists: see e2e_ready_file), YIELD (non-empty: ranks
#   waiting in MPI yield the CPU, OMPI_MCA_mpi_yield_when_idle=1, for many jobs on few cores).
e2e_job() {
  local name=$1 n=${WORKERS:-2} slots=${SLOTS:-1}
  local np=$(( n * slots ))
  # kubesim's pods run the host's mpi-pi (the build's stage); a real cluster's run images:
  # mpik8s/mpi-pi is mpik8s/openmpi with the same program at /home/mpiuser/pi
  local img=mpik8s/openmpi:latest pi=mpi-pi
  [ "$KUBE_BACKEND" != k8s ] || { img=mpik8s/mpi-pi:latest; pi=/home/mpiuser/pi; }
  local prog=${PROG:-"[timeout, \"90\", mpirun, -np, \"$np\", --bind-to, none, $pi, \"200000\"]"}
  # E2E_STACK (real cluster): openmpi5 or mpich42 run the job on that stack's mpi-pi image
  # (Debian 13, images/build-images.sh); for MPICH, mpirun becomes mpiexec without --bind-to
  local impl="" btl=self,vader,tcp
  case ${E2E_STACK:-} in
    "") ;;
    openmpi5) img=mpik8s/mpi-pi:openmpi5-trixie btl=self,sm,tcp ;;
    mpich42) img=mpik8s/mpi-pi:mpich4.2-trixie impl="
  mpiImplementation: MPICH"
      prog=${prog/mpirun,/mpiexec,}; prog=${prog/--bind-to, none, /} ;;
    *) e2e_fail "E2E_STACK=$E2E_STACK: openmpi5 or mpich42" ;;
  esac
  local wimg=${WORKER_IMAGE:-$img}
  local limits=""
  [ -n "${WORKER_GPUS:-}" ] && limits="
            resources: {limits: {nvidia.com/gpu: \"$WORKER_GPUS\"}}"
  [ -n "${READY_FILE:-}" ] && limits="$limits
            readinessProbe: {exec: {command: [test, -f, $READY_FILE]}, periodSeconds: 1}"
  # kubesim's pods see the host's files; a real cluster's see E2E_VARTMP through a hostPath
  local mnt="" vol="" lsel="" wsel=""
  [ -n "${LAUNCHER_NODE:-}" ] && lsel="
          nodeSelector: {kubernetes.io/hostname: $LAUNCHER_NODE}"
  [ -n "${WORKER_NODE:-}" ] && wsel="
          nodeSelector: {kubernetes.io/hostname: $WORKER_NODE}"
  if [ "$KUBE_BACKEND" = k8s ] && [ -n "${E2E_VARTMP:-}" ]; then
    mnt="
            volumeMounts: [{name: e2e-shared, mountPath: $E2E_VARTMP}]"
    vol="
          volumes: [{name: e2e-shared, hostPath: {path: $E2E_VARTMP, type: Directory}}]"
  fi
  cat <<YAML
apiVersion: kubeflow.org/${API:-v2beta1}
kind: MPIJob
metadata:
  name: $name
  annotations:
    mpi-k8s.io/transport: "${TRANSPORT:-exec}"
${WORKER_TIMEOUT:+    mpi-k8s.io/worker-timeout: \"$WORKER_TIMEOUT\"}
${PROGRESS_TIMEOUT:+    mpi-k8s.io/progress-timeout: \"$PROGRESS_TIMEOUT\"}
${NETWORK_TIMEOUT:+    mpi-k8s.io/network-timeout: \"$NETWORK_TIMEOUT\"}
spec:
  slotsPerWorker: $slots$impl
  runPolicy:
    cleanPodPolicy: ${CLEAN:-Running}
${BACKOFF:+    backoffLimit: $BACKOFF}
${DEADLINE:+    activeDeadlineSeconds: $DEADLINE}
  mpiReplicaSpecs:
    Launcher:
      replicas: 1
${LAUNCHER_RESTART:+      restartPolicy: $LAUNCHER_RESTART}
      template:
        spec:
          terminationGracePeriodSeconds: 5$lsel
          containers:
          - name: launcher
            image: $img
            command: $prog
            env:
            - {name: OMPI_MCA_pml, value: ob1}
            - {name: OMPI_MCA_btl, value: "$btl"}
            - {name: OMPI_ALLOW_RUN_AS_ROOT, value: "1"}
            - {name: OMPI_ALLOW_RUN_AS_ROOT_CONFIRM, value: "1"}
${YIELD:+            - {name: OMPI_MCA_mpi_yield_when_idle, value: \"1\"\}}$mnt$vol
    Worker:
      replicas: $n
      template:
        spec:
          terminationGracePeriodSeconds: ${WORKER_GRACE:-2}$wsel
          containers:
          - name: worker
            image: $wimg$limits$mnt$vol
YAML
}

# e2e_ready_file: sets READY_FILE to a path pods can see (not under their private /tmp);
# its directory is removed by the cleanup trap.
e2e_ready_file() {
  E2E_VARTMP=$(mktemp -d "/var/tmp/e2e-$E2E_CASE.XXXXXX") || e2e_fail mktemp
  chmod 0777 "$E2E_VARTMP" || e2e_fail "chmod $E2E_VARTMP" # the pods' users write markers in it
  READY_FILE=$E2E_VARTMP/ready
}

# e2e_create NAME: e2e_job NAME | kubectl create; records the creation time (ms) in T_CREATE.
e2e_create() {
  e2e_job "$1" >"$E2E_DIR/job-$1.yaml"
  T_CREATE=$(e2e_now_ms)
  kc create -f "$E2E_DIR/job-$1.yaml" >/dev/null || e2e_fail "kubectl create MPIJob $1"
}

# launcher_pod JOB: the name of the newest launcher pod (selected by the seed's labels).
launcher_pod() {
  kc get pods -l "mpi_job_name=$1,mpi_role_type=launcher" \
    -o jsonpath='{range .items[*]}{.metadata.creationTimestamp} {.metadata.name}{"\n"}{end}' 2>/dev/null |
    sort | tail -n1 | cut -d' ' -f2
}

# launcher_log JOB: the launcher's init and main container logs (newest launcher pod).
launcher_log() {
  local p; p=$(launcher_pod "$1")
  [ -n "$p" ] || return 0
  kc logs "$p" --all-containers 2>/dev/null || true
}

# e2e_wait_log JOB REGEX COUNT SECONDS: until the launcher log has COUNT lines matching REGEX.
e2e_wait_log() {
  e2e_wait_for "[ \"\$(launcher_log $1 | grep -cE '$2')\" -ge $3 ]" "$4" ||
    { launcher_log "$1" | tail -n 20 >&2; e2e_fail "$1: launcher log never had $3 x /$2/ within $4 s"; }
}

# cond JOB TYPE FIELD: field (status|reason|message|lastTransitionTime) of condition TYPE.
cond() {
  kc get mpijob "$1" -o jsonpath="{.status.conditions[?(@.type==\"$2\")].$3}" 2>/dev/null
}

# e2e_final JOB SECONDS: waits until Succeeded or Failed is True; sets FINAL (type),
# FINAL_REASON, FINAL_MSG, T_FINAL (ms when observed). FINAL=timeout on no final state.
e2e_final() {
  local end=$(( $(e2e_mono_ms) + $2 * 1000 )) c
  FINAL=timeout FINAL_REASON= FINAL_MSG= T_FINAL=
  while [ "$(e2e_mono_ms)" -lt $end ]; do
    c=$(kc get mpijob "$1" -o jsonpath='{range .status.conditions[?(@.status=="True")]}{.type}{"\n"}{end}' 2>/dev/null)
    for t in Succeeded Failed; do
      if printf '%s\n' "$c" | grep -qx "$t"; then
        T_FINAL=$(e2e_now_ms); FINAL=$t
        FINAL_REASON=$(cond "$1" "$t" reason); FINAL_MSG=$(cond "$1" "$t" message)
        return 0
      fi
    done
    sleep 0.3
  done
  kc get mpijob "$1" -o yaml >"$E2E_DIR/final-timeout-$1.yaml" 2>&1 || true
  return 1
}

# e2e_expect JOB TYPE REASON-REGEX MSG-REGEX T0_MS MAX_SECONDS: the final condition is TYPE
# with a matching reason and message, reached within MAX_SECONDS of T0_MS (the cause).
e2e_expect() {
  local job=$1 type=$2 reason=$3 msg=$4 t0=$5 max=$6 secs
  e2e_final "$job" $((max + 60)) || true
  secs=$(awk -v a="${T_FINAL:-0}" -v b="$t0" 'BEGIN { printf "%.1f", (a - b) / 1000 }')
  [ "$FINAL" = timeout ] && {
    launcher_log "$job" | tail -n 15 >&2
    e2e_fail "$job: no final condition within $((max + 60)) s (HANG)"
  }
  e2e_note "final=$FINAL/$FINAL_REASON in ${secs}s"
  E2E_SECS=$secs
  [[ "$FINAL" =~ ^($type)$ ]] || e2e_fail "$job: final $FINAL ($FINAL_REASON: $FINAL_MSG), want $type"
  [[ "$FINAL_REASON" =~ $reason ]] || e2e_fail "$job: reason '$FINAL_REASON' !~ /$reason/"
  [[ "$FINAL_MSG" =~ $msg ]] || e2e_fail "$job: message '$FINAL_MSG' !~ /$msg/"
  awk -v s="$secs" -v m="$max" 'BEGIN { exit !(s <= m) }' ||
    e2e_fail "$job: took ${secs}s to $FINAL (bound ${max}s)"
  e2e_log "$job: $FINAL/$FINAL_REASON after ${secs}s: $FINAL_MSG"
}

# ---- leftovers ---------------------------------------------------------------------------
# descendants REGEX: processes below the kubesim daemon or this case whose name matches.
descendants() {
  local roots="$$"
  [ -f "$KS/kubesim.pid" ] && roots="$roots $(cat "$KS/kubesim.pid")"
  ps -e -o pid=,ppid=,comm= | awk -v roots="$roots" -v re="$1" '
    { pp[$1]=$2; comm[$1]=$3 }
    END { n=split(roots, r, " "); for (i=1;i<=n;i++) root[r[i]]=1
      for (k in pp) { if (k in root || comm[k] !~ re) continue
        p=pp[k]; d=0; while (p>1 && d<64) { if (p in root) { print k, comm[k]; break } p=pp[p]; d++ } } }'
}

# pod_netns_count: network namespaces of this instance's pods.
pod_netns_count() {
  local h; h=$(cat "$KS/state/netns" 2>/dev/null) || { echo 0; return; }
  ip netns list 2>/dev/null | awk '{print $1}' | grep -c "^${h%h}p" || true
}

# e2e_no_leftovers JOB SECONDS: after the final state: no Running pod of the job
# (cleanPodPolicy Running), no mpirun/orted/mpi-rsh/mpi-pi process; then deletes the MPIJob
# and checks that every owned object, pod and pod network namespace is gone.
e2e_no_leftovers() {
  local job=$1 max=${2:-30} left
  e2e_wait_for "[ -z \"\$(kc get pods -l mpi_job_name=$job -o jsonpath='{range .items[?(@.status.phase==\"Running\")]}{.metadata.name} {end}')\" ]" "$max" ||
    e2e_fail "$job: Running pods left after the final state: $(kc get pods -l mpi_job_name=$job --no-headers 2>&1 | tr '\n' ';')"
  e2e_wait_for "[ -z \"\$(descendants '^(mpirun|orterun|orted|mpi-rsh|mpi-pi|prterun|prted)\$')\" ]" "$max" ||
    e2e_fail "$job: processes left: $(descendants '^(mpirun|orterun|orted|mpi-rsh|mpi-pi)$' | tr '\n' ' ')"
  kc delete mpijob "$job" --wait=false >/dev/null 2>&1 || e2e_fail "delete mpijob $job"
  left() {
    kc get pods,jobs,cm,sa,role,rolebinding,svc,secrets -l "training.kubeflow.org/job-name=$job" -o name 2>/dev/null
    kc get pods -l "mpi_job_name=$job" -o name 2>/dev/null
  }
  e2e_wait_for "[ -z \"\$(left)\" ]" "$max" || e2e_fail "$job: objects left after delete: $(left | tr '\n' ' ')"
  local npods
  npods=$(kc get pods -A --no-headers 2>/dev/null | wc -l)
  e2e_wait_for "[ \$(pod_netns_count) -le $npods ]" 20 ||
    e2e_fail "$job: $(pod_netns_count) pod network namespaces for $npods pods"
  e2e_note "leftovers=0"
}

# e2e_requests USER-REGEX: API requests in the kubesim access log made by matching users.
e2e_requests() {
  grep -cE "ms (${1})\$" "$KS/apiserver.log" || true
}

# peak_rss_kb PID: VmHWM of PID (kB), empty if gone.
peak_rss_kb() { awk '/^VmHWM/ { print $2 }' "/proc/$1/status" 2>/dev/null; }
