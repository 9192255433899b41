#!/usr/bin/env bash
# timeout: 420
# `kubectl mpijob`, the kubectl plugin (bin/kubectl-mpijob, a link to mpi-agent), as users run it:
# the real kubectl finds it on PATH (`kubectl plugin list`) and runs `kubectl mpijob VERB ...`
# against four MPIJobs run by our operator: one that succeeds, one whose rank 1 exits 3
# (tests/mpi/rank_fail), one whose worker image cannot be pulled, and one suspended for a Kueue
# queue (no Kueue here: the job waits for its Workload; tests/k8s/cases/kueue.sh covers the
# admission with the real Kueue). get, why and describe are compared with the golden files in
# tests/golden/kubectl_mpijob/ (the same on both backends) after the volatile fields are
# normalised (ages, times, the launcher pod's hash, node names, column padding); a Kueue
# Workload (its CRD made here), logs --rank, -o name/json/yaml, --context, exec, hostfile, the
# NotFound wording and the exit codes are checked on the way.
# KUBE_BACKEND=k8s runs it on the real cluster (tests/k8s/cases/kubectl_mpijob.sh).
# UPDATE_GOLDEN=1 rewrites the golden files (review the diff before committing).
set -u
. "$(dirname "$0")/controller_common.bash"
PROG=$ROOT/build/${MODE:-release}/tests/mpi/rank_fail
[ -x "$PROG" ] || ks_fail "missing $PROG (make test-progs)"
[ -x "$BINDIR/kubectl-mpijob" ] || ks_fail "missing $BINDIR/kubectl-mpijob (run make)"
# one set of golden files for kubesim and the real cluster: once normalised, both print the same
GOLDEN=$ROOT/tests/golden/kubectl_mpijob
ctl_cluster
ctl_start a --leader-elect=false

# kp CMD...: CMD in the cluster's environment (its kubectl) with the plugin's directory first on PATH;
# km ARGS...: `kubectl mpijob ARGS...` so
kp() { ks_run sh -c 'PATH="$0:$PATH"; exec "$@"' "$BINDIR" "$@"; }
km() { kp kubectl mpijob "$@"; }
# the program: on kubesim a host path the pods see; on the real cluster copied into each worker
if [ "$KUBE_BACKEND" = k8s ]; then P=/tmp/rank_fail; else P=$PROG; fi

# mk NAME FAIL_RANK [WORKER_IMAGE [LABEL=VALUE [RUNPOLICY EXTRA]]]: 2 workers, rank FAIL_RANK exits 3;
# the ranks run 4 s before the program so that the operator sees the job Running (its conditions,
# in the golden files, otherwise depend on how soon a sync comes)
mk() {
  mpijob_yaml "$1" --ann mpi-k8s.io/transport=exec --ann mpi-k8s.io/worker-timeout=300 ${4:+--label "$4"} --slots 1 \
    --run-policy "{cleanPodPolicy: None, backoffLimit: 0${5:-}}" --restart Never --image mpik8s/openmpi:latest \
    --worker-image "${3:-mpik8s/openmpi:latest}" \
    --command "[mpirun, --allow-run-as-root, -np, \"2\", --bind-to, none, --tag-output, -mca, pml, ob1, -mca, btl,
                      \"self,tcp\", -x, FAIL_MODE=exit, -x, FAIL_RANK=$2, sh, -c,
                      'until [ -x $P ]; do sleep 0.5; done; sleep 4; exec $P']" | kc create -f - >/dev/null || ks_fail "create $1"
}
mk ok 99
mk fexit 1
mk noimg 99 example.com/does-not-exist:1
mk susp 99 mpik8s/openmpi:latest kueue.x-k8s.io/queue-name=lq ', suspend: true'
if [ "$KUBE_BACKEND" = k8s ]; then
  for p in ok-worker-0 ok-worker-1 fexit-worker-0 fexit-worker-1; do
    ks_wait_for "kc get pod $p -o jsonpath='{.status.phase}' | grep -q Running" 180 || ks_fail "$p not Running"
    kc cp "$PROG" "$p:/tmp/rank_fail.part" -c w >/dev/null || ks_fail "kubectl cp into $p"
    kc exec "$p" -c w -- sh -c 'chmod 0755 /tmp/rank_fail.part && mv /tmp/rank_fail.part /tmp/rank_fail' ||
      ks_fail "install rank_fail in $p"
  done
fi

# kubectl finds the plugin
kp kubectl plugin list 2>/dev/null | grep -qx "$BINDIR/kubectl-mpijob" ||
  ks_fail "kubectl plugin list does not list $BINDIR/kubectl-mpijob"

wait_cond ok Succeeded True 180
wait_cond fexit Failed True 180
wait_cond noimg Blocked True 120
ks_wait_for "[ \"\$(cond susp Suspended status)\" = True ]" 60 || ks_fail "susp: no Suspended=True"
ks_wait_for "[ -n \"\$(kc get mpijob ok -o jsonpath='{.status.launchPhases.mpirunStarted}')\" ]" 30 ||
  ks_fail "ok: no launchPhases.mpirunStarted"
ks_wait_for "[ -n \"\$(kc get mpijob noimg -o jsonpath='{.status.launchPhases.launcherStarted}')\" ]" 60 ||
  ks_fail "noimg: no launchPhases.launcherStarted"

# norm: the volatile fields of the plugin's output made constant
norm() {
  sed -E -e 's/[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z/<time>/g' \
    -e 's/-launcher-[a-z0-9]{5}\b/-launcher-<hash>/g' \
    -e 's/\+[0-9]+\.[0-9]s\b/+<s>/g' \
    -e 's/\(([0-9]+[smhdy])+ ago\)/(<age> ago)/g' \
    -e "s/\\b($NODES)\\b/<node>/g" \
    -e 's/\(node [^)]*\)/(node <node>)/g' \
    -e 's/PID [0-9]+/PID <pid>/g' -e 's/ after [0-9.]+ s on / after <n> s on /g' \
    -e 's/(ErrImagePull|ImagePullBackOff): [^"]*"([^"]+)".*/ImagePullBackOff: <the pull error> "\2"/' \
    -e 's/ +$//' -e 's/ {2,}/  /g'
}
# norm_get: also the AGE and LAUNCH columns (4th and 5th)
norm_get() { norm | awk 'NR == 1 { print; next } { $4 = "<age>"; if ($5 != "-") $5 = "<launch>"; print }'; }
NODES=$(kc get nodes -o jsonpath='{range .items[*]}{.metadata.name}{"|"}{end}' | sed 's/|$//')

# golden NAME: compares $D/NAME (normalised) with $GOLDEN/NAME, or writes it (UPDATE_GOLDEN=1)
D=$KS_DIR/out
mkdir -p "$D"
golden() {
  if [ -n "${UPDATE_GOLDEN:-}" ]; then
    mkdir -p "$GOLDEN" && cp "$D/$1" "$GOLDEN/$1"
  else
    diff -u "$GOLDEN/$1" "$D/$1" >&2 || ks_fail "kubectl mpijob: $1 differs from tests/golden/kubectl_mpijob/$1"
  fi
}
for j in ok fexit noimg susp; do
  km get "$j" >"$D/raw-get" || ks_fail "kubectl mpijob get $j exited $?"
  norm_get <"$D/raw-get" >"$D/$j.get"
  km why "$j" | norm >"$D/$j.why" || ks_fail "kubectl mpijob why $j"
  # the Events and pod counts are timing's: the sections up to Events, then the reasons seen
  km describe "$j" >"$D/raw-describe" || ks_fail "kubectl mpijob describe $j"
  # lastLines: the ranks' order and mpirun's own lines are timing's
  norm <"$D/raw-describe" | sed -e '/^Events:/,$d' -e '/^  lastLines:/,/^Pods:/{/^Pods:/!d}' >"$D/$j.describe"
  for f in get why describe; do golden "$j.$f"; done
  # the objects, for the unit tests' fixtures (KS_KEEP=1 keeps them: tests/unit/data/plugin/README)
  kc get mpijob "$j" -o json >"$D/$j.json" && kc get pods -l "mpi_job_name=$j" -o json >"$D/$j.pods.json" ||
    ks_fail "saving $j's objects"
done

# Kueue's Workload, read as the plugin finds it: a CRD serving kueue.x-k8s.io/v1beta1 only (so the
# plugin's v1beta2 list is a 404 and it falls back), a Workload owned by susp (its uid) that Kueue
# has not admitted; `why` quotes its queue, name and QuotaReserved reason and message. The real
# Kueue's Workload is read in tests/k8s/cases/kueue.sh.
kc apply -f - >/dev/null <<'YAML' || ks_fail "create the Workload CRD"
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: workloads.kueue.x-k8s.io}
spec:
  group: kueue.x-k8s.io
  names: {kind: Workload, listKind: WorkloadList, plural: workloads, singular: workload}
  scope: Namespaced
  versions:
  - name: v1beta1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
YAML
ks_wait_for "kc get workloads.kueue.x-k8s.io" 30 || ks_fail "workloads not served"
uid=$(kc get mpijob susp -o jsonpath='{.metadata.uid}')
kc create -f - >/dev/null <<YAML || ks_fail "create the Workload"
apiVersion: kueue.x-k8s.io/v1beta1
kind: Workload
metadata:
  name: mpijob-susp-4f2c1
  ownerReferences: [{apiVersion: kubeflow.org/v2beta1, kind: MPIJob, name: susp, uid: "$uid", controller: true}]
spec: {queueName: lq}
status:
  conditions:
  - {type: QuotaReserved, status: "False", reason: Pending, lastTransitionTime: "2026-01-01T00:00:00Z",
     message: "couldn't assign flavors to pod set launcher: insufficient unused quota for cpu in flavor pool-a, 200m more needed"}
YAML
want="MPIJob default/susp is not admitted by Kueue (queue lq, workload mpijob-susp-4f2c1): Pending: couldn't assign flavors to pod set launcher: insufficient unused quota for cpu in flavor pool-a, 200m more needed"
[ "$(km why susp)" = "$want" ] || ks_fail "why susp with its Workload: $(km why susp)"
km describe susp | sed -n '/^Kueue:/,/^Events:/p' >"$D/susp.kueue"
grep -q '^  Workload: *mpijob-susp-4f2c1$' "$D/susp.kueue" && grep -qE '^  QuotaReserved +False +Pending +couldn' "$D/susp.kueue" ||
  { cat "$D/susp.kueue"; ks_fail "describe susp: its Workload"; }

# describe's Events: the operator's reasons for each job (their number is timing's)
ev_reasons() { km describe "$1" | sed -n '/^Events:/,$p'; }
ev_reasons ok | grep -q 'MPIJobSucceeded' || ks_fail "describe ok: no MPIJobSucceeded Event"
ev_reasons fexit | grep -q 'RankFailed' || ks_fail "describe fexit: no RankFailed Event"
ev_reasons noimg | grep -q 'ImagePullBackOff' || ks_fail "describe noimg: no ImagePullBackOff Event"

# logs: the kept output, one rank's lines with --rank
km logs fexit >"$D/fexit.log" || ks_fail "kubectl mpijob logs fexit exited $?"
grep -qx '\[1,0\]<stdout>:rank 0 up on fexit-worker-0' "$D/fexit.log" || { cat "$D/fexit.log"; ks_fail "logs: rank 0's line"; }
km logs fexit --rank 1 >"$D/fexit.rank1" || ks_fail "kubectl mpijob logs --rank 1 exited $?"
grep -qx '\[1,1\]<stdout>:rank 1 up on fexit-worker-1' "$D/fexit.rank1" || { cat "$D/fexit.rank1"; ks_fail "logs --rank 1: its line"; }
! grep -v '^\[1,1\]<' "$D/fexit.rank1" || ks_fail "logs --rank 1 printed other lines"
# --previous: the launcher (restartPolicy Never) has no previous container: the API's refusal, exit 1
rc=0; km logs fexit --previous >/dev/null 2>"$D/prev.err" || rc=$?
[ $rc -eq 1 ] && grep -q '^error: pod fexit-launcher-[a-z0-9]*: .*previous' "$D/prev.err" ||
  ks_fail "logs --previous: rc $rc: $(cat "$D/prev.err")"

# -o name, json (one object; a List for several), yaml; -A adds NAMESPACE
[ "$(km get ok -o name)" = mpijob.kubeflow.org/ok ] || ks_fail "get -o name: $(km get ok -o name)"
[ "$(km get ok -o=name --namespace=default)" = mpijob.kubeflow.org/ok ] || ks_fail "get -o=name --namespace=default"
rc=0; km get -n nosuchns >/dev/null 2>"$D/ns.err" || rc=$?
[ $rc -eq 0 ] && [ "$(cat "$D/ns.err")" = "No resources found in nosuchns namespace." ] || ks_fail "get -n nosuchns: rc $rc $(cat "$D/ns.err")"
[ "$(km get ok -o json | jq -r '.kind + "/" + .metadata.name')" = MPIJob/ok ] || ks_fail "get ok -o json"
[ "$(km get -o json | jq -r '.kind + " " + ([.items[].metadata.name] | join(","))')" = "List fexit,noimg,ok,susp" ] ||
  ks_fail "get -o json: $(km get -o json | jq -c '[.kind, [.items[].metadata.name]]')"
km get fexit -o yaml | python3 -c 'import sys, yaml; d = yaml.safe_load(sys.stdin); assert d["status"]["rankFailure"]["rank"] == 1, d' ||
  ks_fail "get -o yaml does not read back with status.rankFailure.rank 1"
km get -A | head -1 | grep -q '^NAMESPACE  *NAME  *STATE  *WORKERS  *AGE  *LAUNCH  *REASON$' || ks_fail "get -A: header"
km get -o wide | head -1 | grep -q 'REASON  *LAUNCHER  *NODES$' || ks_fail "get -o wide: header"
km get ok -o wide | grep -qE '^ok .* ok-launcher-[a-z0-9]{5} ' || ks_fail "get -o wide: no launcher pod for ok"

# exit codes and kubectl's words: NotFound (1), a bad flag (1), --help for every verb (0)
rc=0; km why nosuch >"$D/nf.out" 2>"$D/nf.err" || rc=$?
[ $rc -eq 1 ] || ks_fail "why nosuch exited $rc, want 1"
[ "$(cat "$D/nf.err")" = 'Error from server (NotFound): mpijobs.kubeflow.org "nosuch" not found' ] ||
  ks_fail "why nosuch: $(cat "$D/nf.err")"
rc=0; km get ok nosuch >"$D/nf2.out" 2>&1 || rc=$?
[ $rc -eq 1 ] && grep -q '^ok ' "$D/nf2.out" && grep -q '"nosuch" not found' "$D/nf2.out" || ks_fail "get ok nosuch: rc $rc"
rc=0; km get --bogus >/dev/null 2>"$D/bad.err" || rc=$?
[ $rc -eq 1 ] && grep -q '^error: unknown flag: "--bogus"' "$D/bad.err" || ks_fail "get --bogus: rc $rc $(cat "$D/bad.err")"
for v in get describe logs why exec hostfile; do
  km "$v" --help | grep -q "kubectl mpijob $v" || ks_fail "kubectl mpijob $v --help"
done

# --context and --kubeconfig are the plugin's own (kubectl passes them on): a kubeconfig whose
# current context points at nothing (port 1) works only with --context naming the real one, by flag
# or through KUBECONFIG; a context that does not exist is refused by name
ctx=$(kc config current-context)
python3 - "$KS_DIR/kubeconfig" "$D/two.kubeconfig" <<'PY' || ks_fail "writing the two-context kubeconfig"
import sys, yaml
k = yaml.safe_load(open(sys.argv[1]))
c = dict(k["clusters"][0]); c["name"] = "nowhere"; c["cluster"] = dict(c["cluster"], server="https://127.0.0.1:1")
k["clusters"].append(c)
k["contexts"].append({"name": "nowhere", "context": dict(k["contexts"][0]["context"], cluster="nowhere")})
k["current-context"] = "nowhere"
yaml.safe_dump(k, open(sys.argv[2], "w"))
PY
rc=0; km get ok --kubeconfig "$D/two.kubeconfig" >/dev/null 2>"$D/ctx0.err" || rc=$?
[ $rc -eq 1 ] && grep -q '^error: ' "$D/ctx0.err" || ks_fail "get through the context 'nowhere': rc $rc $(cat "$D/ctx0.err")"
[ "$(km get ok -o name --kubeconfig "$D/two.kubeconfig" --context "$ctx")" = mpijob.kubeflow.org/ok ] ||
  ks_fail "get --kubeconfig two --context $ctx"
[ "$(kp env KUBECONFIG="$D/two.kubeconfig" kubectl mpijob get ok -o name --context "$ctx")" = mpijob.kubeflow.org/ok ] ||
  ks_fail "KUBECONFIG=two get --context $ctx"
rc=0; km get --context nosuchctx >/dev/null 2>"$D/ctx.err" || rc=$?
[ $rc -eq 1 ] && grep -q 'nosuchctx' "$D/ctx.err" || ks_fail "get --context nosuchctx: rc $rc: $(cat "$D/ctx.err")"

# exec and hostfile: the agent's debugging verbs on a Running worker of a finished job
[ "$(km exec ok --worker 1 -- sh -c 'echo "on $(hostname)"; exit 0')" = "on ok-worker-1" ] || ks_fail "exec ok --worker 1"
rc=0; km exec ok --worker 0 -- sh -c 'exit 7' || rc=$?
[ $rc -eq 7 ] || ks_fail "exec: exit code $rc, want 7"
km hostfile ok >"$D/hostfile" || ks_fail "hostfile ok"
# the same as the hostfile the operator gave the launcher (ConfigMap ok-config)
kc get cm ok-config -o jsonpath='{.data.hostfile}' >"$D/hostfile.op" || ks_fail "ConfigMap ok-config"
diff -u "$D/hostfile.op" "$D/hostfile" >&2 || ks_fail "hostfile ok differs from the operator's"
grep -qx 'ok-worker-1.ok.default.svc slots=1' "$D/hostfile" || { cat "$D/hostfile"; ks_fail "hostfile ok: worker 1"; }
echo "kubectl mpijob: get/why/describe as golden for ok, fexit, noimg, susp; logs, -o, exit codes, exec, hostfile"
