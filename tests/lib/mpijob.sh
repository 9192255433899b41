# tests/lib/mpijob.sh: mpijob_yaml, the one generator of the MPIJob manifests the tests create
# (sourced by tests/lib/kubesim.sh). It writes one MPIJob with a Launcher (1 replica) and a Worker,
# each a pod template with one container; the options set what the tests vary. Values are YAML as
# they go into the manifest: a flow list for a command, a flow mapping for runPolicy or resources.
#   mpijob_yaml NAME [OPTION]...
#   --api V                  kubeflow.org/V (default v2beta1; v1alpha2)
#   --ann K=V                an annotation, its value a string (repeat for more)
#   --label K=V              a label, its value a string (repeat for more)
#   --slots S                spec.slotsPerWorker
#   --impl I                 spec.mpiImplementation
#   --run-policy FLOW        spec.runPolicy, e.g. '{cleanPodPolicy: Running, backoffLimit: 0}'
#   --spec 'K: V'            one more line under spec (cleanPodPolicy of v1alpha2, sshAuthMountPath)
#   --workers N              Worker replicas (default 2)
#   --image I                both containers' image (default mpik8s/openmpi)
#   --launcher-image I, --worker-image I   one container's image
#   --names L,W              the containers' names (default l,w)
#   --command FLOW           the launcher's command (a flow list); --worker-command FLOW the worker's
#   --restart P              the Launcher's restartPolicy; --worker-restart P the Worker's
#   --pod 'K: V'             one more line in both pod specs (securityContext, volumes, ...);
#                            --launcher-pod, --worker-pod: in one (repeat for more)
#   --container 'K: V'       one more line in both containers (resources, env, volumeMounts, ...);
#                            --launcher-container, --worker-container: in one (repeat for more)
# tests/integration/harness_lib.sh checks its output against tests/golden/mpijob/.

# _mpijob_map NAME K=V...: "NAME: {K: "V", ...}" (nothing when there are no pairs).
_mpijob_map() {
  local name=$1 out= kv v
  shift
  [ $# -gt 0 ] || return 0
  for kv in "$@"; do
    v=${kv#*=}
    v=${v//\\/\\\\}
    v=${v//\"/\\\"}
    out+="${out:+, }${kv%%=*}: \"$v\""
  done
  printf '  %s: {%s}\n' "$name" "$out"
}

# _mpijob_replica ROLE REPLICAS RESTART CONTAINER IMAGE COMMAND: one replica spec; the pod lines
# come from the arrays _mj_pod_ROLE and the container lines from _mj_ctr_ROLE.
_mpijob_replica() {
  local role=$1 l
  local -n pod=_mj_pod_$1 ctr=_mj_ctr_$1
  printf '    %s:\n      replicas: %s\n' "$role" "$2"
  [ -z "$3" ] || printf '      restartPolicy: %s\n' "$3"
  printf '      template:\n        spec:\n'
  for l in "${pod[@]}"; do printf '          %s\n' "$l"; done
  printf '          containers:\n          - name: %s\n            image: %s\n' "$4" "$5"
  [ -z "$6" ] || printf '            command: %s\n' "$6"
  for l in "${ctr[@]}"; do printf '            %s\n' "$l"; done
}

mpijob_yaml() {
  local name=${1:?mpijob_yaml NAME [OPTION]...} api=v2beta1 slots= impl= rp= workers=2
  local limg=mpik8s/openmpi wimg=mpik8s/openmpi lname=l wname=w lcmd= wcmd= lrestart= wrestart= l
  local -a anns=() labels=() spec=() _mj_pod_Launcher=() _mj_pod_Worker=() _mj_ctr_Launcher=() _mj_ctr_Worker=()
  shift
  while [ $# -gt 0 ]; do
    [ $# -ge 2 ] || { echo "mpijob_yaml: $1 needs a value" >&2; return 2; }
    case $1 in
      --api) api=$2 ;;
      --ann) anns+=("$2") ;;
      --label) labels+=("$2") ;;
      --slots) slots=$2 ;;
      --impl) impl=$2 ;;
      --run-policy) rp=$2 ;;
      --spec) spec+=("$2") ;;
      --workers) workers=$2 ;;
      --image) limg=$2 wimg=$2 ;;
      --launcher-image) limg=$2 ;;
      --worker-image) wimg=$2 ;;
      --names) lname=${2%%,*} wname=${2#*,} ;;
      --command) lcmd=$2 ;;
      --worker-command) wcmd=$2 ;;
      --restart) lrestart=$2 ;;
      --worker-restart) wrestart=$2 ;;
      --pod) _mj_pod_Launcher+=("$2") _mj_pod_Worker+=("$2") ;;
      --launcher-pod) _mj_pod_Launcher+=("$2") ;;
      --worker-pod) _mj_pod_Worker+=("$2") ;;
      --container) _mj_ctr_Launcher+=("$2") _mj_ctr_Worker+=("$2") ;;
      --launcher-container) _mj_ctr_Launcher+=("$2") ;;
      --worker-container) _mj_ctr_Worker+=("$2") ;;
      *) echo "mpijob_yaml: unknown option $1" >&2; return 2 ;;
    esac
    shift 2
  done
  printf 'apiVersion: kubeflow.org/%s\nkind: MPIJob\nmetadata:\n  name: %s\n' "$api" "$name"
  _mpijob_map labels "${labels[@]}"
  _mpijob_map annotations "${anns[@]}"
  printf 'spec:\n'
  [ -z "$slots" ] || printf '  slotsPerWorker: %s\n' "$slots"
  [ -z "$impl" ] || printf '  mpiImplementation: %s\n' "$impl"
  for l in "${spec[@]}"; do printf '  %s\n' "$l"; done
  [ -z "$rp" ] || printf '  runPolicy: %s\n' "$rp"
  printf '  mpiReplicaSpecs:\n'
  _mpijob_replica Launcher 1 "$lrestart" "$lname" "$limg" "$lcmd"
  _mpijob_replica Worker "$workers" "$wrestart" "$wname" "$wimg" "$wcmd"
}
