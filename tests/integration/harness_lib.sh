#!/usr/bin/env bash
# harness_lib: the tests' own harness, without a cluster. mpijob_yaml (tests/lib/mpijob.sh) writes
# byte for byte the manifests in tests/golden/mpijob/ (UPDATE=1 rewrites them), each one MPIJob
# that python3's YAML parser reads with the fields asked for; a bad option is refused (2). And one
# harness library: ks_up and its cleanup are defined in tests/lib/kubesim.sh only.
# timeout: 60
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/tests/lib/mpijob.sh"
G=$ROOT/tests/golden/mpijob
T=$(mktemp -d "${TMPDIR:-/tmp}/harness_lib.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
fail=0
bad() { echo "FAIL: $*" >&2; fail=1; }

# golden NAME ARGS...: mpijob_yaml ARGS... against $G/NAME.yaml
golden() {
  local name=$1; shift
  mpijob_yaml "$@" >"$T/$name.yaml" || { bad "$name: mpijob_yaml exited $?"; return; }
  if [ -n "${UPDATE:-}" ]; then cp "$T/$name.yaml" "$G/$name.yaml"; fi
  diff -u "$G/$name.yaml" "$T/$name.yaml" >&2 || bad "$name: differs from $G/$name.yaml"
}
golden defaults d
golden v1alpha2 cc1 --api v1alpha2 --ann mpi-k8s.io/agent-run=false --spec 'cleanPodPolicy: Running' \
  --command '[sh, -c, "echo hi"]'
golden full full --ann mpi-k8s.io/transport=exec --ann 'mpi-k8s.io/pod-failure-policy=[{"action":"FailJob"}]' \
  --label kueue.x-k8s.io/queue-name=lq --slots 2 --impl MPICH --spec 'sshAuthMountPath: /etc/mpi-ssh' \
  --run-policy '{cleanPodPolicy: All, backoffLimit: 0}' --workers 3 --image mpik8s/openmpi:latest \
  --worker-image busybox --names launcher,worker --restart Never --worker-restart Never \
  --command '[mpirun, -np, "3", hostname]' --worker-command '[sleep, "600"]' \
  --pod 'securityContext: {runAsUser: 1000}' --launcher-pod 'terminationGracePeriodSeconds: 5' \
  --worker-pod 'nodeSelector: {pool: a}' --container 'resources: {limits: {cpu: 250m}}' \
  --launcher-container 'env: [{name: USER, value: root}]' --worker-container 'volumeMounts: [{name: s, mountPath: /s}]'

# what the YAML says, parsed: the fields the options set
if python3 -c 'import yaml' 2>/dev/null; then
  python3 - "$T" <<'PY' || bad "parsed manifests"
import sys, yaml
d = sys.argv[1]
def one(n):
    docs = list(yaml.safe_load_all(open(f"{d}/{n}.yaml")))
    assert len(docs) == 1 and docs[0]["kind"] == "MPIJob", (n, docs)
    return docs[0]
m = one("defaults")
assert m["apiVersion"] == "kubeflow.org/v2beta1" and m["metadata"] == {"name": "d"}, m
r = m["spec"]["mpiReplicaSpecs"]
assert list(m["spec"]) == ["mpiReplicaSpecs"] and r["Launcher"]["replicas"] == 1 and r["Worker"]["replicas"] == 2, m
assert r["Launcher"]["template"]["spec"] == {"containers": [{"name": "l", "image": "mpik8s/openmpi"}]}, r
m = one("full")
assert m["metadata"]["annotations"]["mpi-k8s.io/pod-failure-policy"] == '[{"action":"FailJob"}]', m
assert m["metadata"]["labels"] == {"kueue.x-k8s.io/queue-name": "lq"}, m
s = m["spec"]; l = s["mpiReplicaSpecs"]["Launcher"]; w = s["mpiReplicaSpecs"]["Worker"]
assert s["slotsPerWorker"] == 2 and s["mpiImplementation"] == "MPICH" and s["runPolicy"]["backoffLimit"] == 0, s
assert l["restartPolicy"] == w["restartPolicy"] == "Never" and w["replicas"] == 3, s
lp, wp = l["template"]["spec"], w["template"]["spec"]
assert lp["securityContext"] == wp["securityContext"] and lp["terminationGracePeriodSeconds"] == 5, lp
assert wp["nodeSelector"] == {"pool": "a"} and "nodeSelector" not in lp, wp
lc, wc = lp["containers"][0], wp["containers"][0]
assert (lc["name"], lc["image"], wc["name"], wc["image"]) == ("launcher", "mpik8s/openmpi:latest", "worker", "busybox")
assert lc["command"] == ["mpirun", "-np", "3", "hostname"] and wc["command"] == ["sleep", "600"]
assert lc["resources"] == wc["resources"] and lc["env"][0]["value"] == "root" and "env" not in wc, (lc, wc)
assert wc["volumeMounts"][0]["mountPath"] == "/s" and "volumeMounts" not in lc, (lc, wc)
PY
else
  echo "NOTE: no python3 yaml module: the manifests were compared as text only"
fi

# a bad option or a missing value is refused, naming it
rc=0; mpijob_yaml x --bogus 1 >/dev/null 2>"$T/err" || rc=$?
[ $rc -eq 2 ] && grep -q -- '--bogus' "$T/err" || bad "--bogus: exit $rc: $(cat "$T/err")"
rc=0; mpijob_yaml x --workers >/dev/null 2>"$T/err" || rc=$?
[ $rc -eq 2 ] && grep -q -- '--workers needs a value' "$T/err" || bad "--workers without a value: exit $rc"

# one harness library: ks_up and the cleanup trap's function have one definition, in tests/lib/kubesim.sh
defs=$(grep -rnE '^[[:space:]]*(function[[:space:]]+)?(ks_up|_?ks_cleanup)[[:space:]]*\(\)' "$ROOT/tests" |
  grep -v "^$ROOT/tests/lib/kubesim.sh:")
[ -z "$defs" ] || bad "a second harness: $defs"
n=$(grep -cE '^(ks_up|_ks_cleanup)\(\)' "$ROOT/tests/lib/kubesim.sh")
[ "$n" -eq 2 ] || bad "tests/lib/kubesim.sh defines ks_up and _ks_cleanup $n times, want 2"
[ $fail -eq 0 ] || exit 1
echo "PASS: 3 golden manifests, parsed; bad options refused; one harness library"
