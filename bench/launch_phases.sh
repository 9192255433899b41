#!/usr/bin/env bash
# bench/launch_phases.sh - one MPIJob's launch-phase timeline, as the operator records it in
# status.launchPhases (docs/controller.md "status.launchPhases"): kubesim up (CLUSTER=k8s: the
# real cluster of tests/k8s, with `make docker-images`' images), the operator installed from
# deploy/ with the real kubectl, JOB_FILE (default examples/v1alpha2/pi.yaml: 2 workers, the
# agent launcher) created, and once it Succeeded (bounded: BENCH_TIMEOUT, 300 s) each phase's
# offset from the MPIJob's creation. Prints a table and writes bench/results/launch_phases.tsv
# (bench/results_lib.bash), which bench/plot.sh draws as docs/img/launch_phases.png.
# Usage: bench/launch_phases.sh   (as root; after `make all stage`)
set -euo pipefail
ROOT=${ROOT:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$ROOT"
JOB_FILE=${JOB_FILE:-examples/v1alpha2/pi.yaml}
case ${CLUSTER:-kubesim} in
  kubesim) KS=tests/kubesim/kubesim ;;
  k8s) KS=tests/k8s/k8s ;;
  *) echo "bench/launch_phases.sh: CLUSTER=$CLUSTER: expected kubesim or k8s" >&2; exit 2 ;;
esac
[ "$(id -u)" -eq 0 ] || { echo "bench/launch_phases.sh: needs root (the cluster's network namespaces)"; exit 0; }
ver=$(sed -n 's|^apiVersion: *kubeflow.org/||p' "$JOB_FILE" | head -1)
DEPLOY=deploy/$ver/mpi-operator.yaml
[ -f "$DEPLOY" ] || { echo "bench/launch_phases.sh: $JOB_FILE: no $DEPLOY" >&2; exit 2; }
name=$(sed -n 's/^  name: *//p' "$JOB_FILE" | head -1)
D=$(mktemp -d /tmp/launch-phases-XXXXXX)
cleanup() { timeout 120 "$KS" down --dir "$D" >/dev/null 2>&1 || true; rm -rf "$D"; }
trap cleanup EXIT
trap 'exit 130' INT TERM
k() { timeout -k 5 60 "$KS" run --dir "$D" -- kubectl "$@"; }

timeout 300 "$KS" up --dir "$D" >"$D/up.log" 2>&1 || { tail -n 20 "$D/up.log"; exit 1; }
if [ "$KS" = tests/k8s/k8s ]; then
  imgs=$(sed -n 's/^ *-\{0,1\} *image: *"\{0,1\}\([^ {"]*:[^ {"]*\)"\{0,1\}$/\1/p' "$DEPLOY" "$JOB_FILE" | sort -u)
  # shellcheck disable=SC2086
  timeout 300 "$KS" load --dir "$D" $imgs mpik8s/mpi-agent:latest >>"$D/up.log" 2>&1 || { tail -n 20 "$D/up.log"; exit 1; }
fi
k create -f "$DEPLOY" >/dev/null
k -n mpi-operator wait --for=condition=Available deployment/mpi-operator --timeout=120s >/dev/null
k create -f "$JOB_FILE" >/dev/null
deadline=$((SECONDS + ${BENCH_TIMEOUT:-300}))
state=
until case " $state " in *" Succeeded "* | *" Failed "*) true ;; *) false ;; esac; do
  [ $SECONDS -lt $deadline ] || { echo "bench/launch_phases.sh: $name not finished in ${BENCH_TIMEOUT:-300} s"; exit 1; }
  sleep 1
  state=$(k get mpijobs "$name" -o 'jsonpath={.status.conditions[?(@.status=="True")].type}' 2>/dev/null || true)
done
case " $state " in *" Succeeded "*) ;; *) echo "bench/launch_phases.sh: $name did not succeed ($state)"; exit 1 ;; esac
# the agent's phases reach the status once the launcher has terminated: wait for the last one
for _ in $(seq 30); do
  [ -n "$(k get mpijob "$name" -o 'jsonpath={.status.launchPhases.finished}' 2>/dev/null)" ] && break
  sleep 1
done
k get mpijob "$name" -o json >"$D/job.json"
# phase, seconds since `created`, in time order (ties: the table of docs/controller.md's order)
python3 - "$D/job.json" >"$D/rows" <<'PY'
import datetime, json, sys
order = ["created", "workersScheduled", "workersReady", "launcherStarted", "agentWorkersReady",
         "workersReachable", "mpirunStarted", "firstOutput", "finished"]
ph = json.load(open(sys.argv[1]))["status"].get("launchPhases") or {}
def t(s):
    return datetime.datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp()
if "created" not in ph:
    sys.exit("no status.launchPhases.created")
c = t(ph["created"])
rows = [(t(v) - c, order.index(k) if k in order else len(order), k) for k, v in ph.items()]
for at, _, k in sorted(rows):
    print("%s\t%.3f" % (k, at))
PY
[ "$(wc -l <"$D/rows")" -ge 2 ] || { echo "bench/launch_phases.sh: too few launch phases: $(cat "$D/rows")"; exit 1; }
echo "== $name ($JOB_FILE, ${CLUSTER:-kubesim}): status.launchPhases, seconds after the MPIJob's creation"
printf '   %-20s %8s\n' phase at_s
while IFS=$'\t' read -r p at; do printf '   %-20s %8s\n' "$p" "$at"; done <"$D/rows"
echo "   (load at the end: $(cut -d' ' -f1-3 /proc/loadavg))"
. "$ROOT/bench/results_lib.bash"
bench_tsv_begin launch_phases "bench/launch_phases.sh: status.launchPhases of MPIJob $name ($JOB_FILE) on ${CLUSTER:-kubesim}, seconds after its creation (the Kubernetes timestamps: created, workersScheduled, workersReady, launcherStarted, have whole seconds; the agent's phases milliseconds)" \
  "${CLUSTER:+CLUSTER=$CLUSTER }JOB_FILE=$JOB_FILE bench/launch_phases.sh" phase at_s
while IFS=$'\t' read -r p at; do bench_tsv_row "$p" "$at"; done <"$D/rows"
bench_tsv_end
