#!/usr/bin/env bash
# bench/agent.sh - launch-path benchmarks of the agent on kubesim, all in one run:
#  1. latency from the last worker becoming Ready to mpirun starting under
#     `mpi-agent run` (target < 100 ms; the seed's kubectl-delivery polled every
#     500 ms): (a) workers whose status the bench sets with one HTTP PATCH, no
#     reach check: patch reply -> mpirunStarted; (b) real pods, readiness probe
#     flipped, reach check (exec `true` per worker) on: Ready seen on a watch ->
#     mpirunStarted.
#  2. full launch of N = 2, 8, 32 one-rank daemons (mpirun -np N hostname, from
#     the kubesim host namespace, workers already Ready): time until every rank
#     has printed and total wall time, through mpi-rsh (exec API), kubexec.sh
#     (`kubectl exec`, the seed's agent) and a direct nsenter agent (the floor).
#  3. the launcher's two agent steps with N Ready workers: `mpi-agent init` (wait +
#     exec reach check, records init-ready.json) then `mpi-agent run -- true`
#     (trusts the record: no second wait or check), ms each and together.
# Section 2's medians also go to bench/results/launch_kubesim.tsv (bench/results_lib.bash;
# bench/plot.sh draws docs/img/launch_kubesim.png from it).
# Usage: bench/agent.sh [N...]   (default 2 8 32; BENCH_REPS=3; BENCH_ONLY=1a,1b,2,3 picks
# sections; AGENT_BIN=path times another mpi-agent in section 3). Needs root (netns).
set -euo pipefail
ROOT=${ROOT:-$(cd "$(dirname "$0")/.." && pwd)}
BINDIR=${BINDIR:-$ROOT/bin}
KS=$ROOT/tests/kubesim/kubesim
NS_LIST=${*:-2 8 32}
REPS=${BENCH_REPS:-3}
export OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader,tcp OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
[ "$(id -u)" -eq 0 ] || { echo "bench/agent.sh: needs root (kubesim network namespaces)"; exit 0; }
D=$(mktemp -d /tmp/agent-bench-XXXXXX)
cleanup() { timeout 60 "$KS" down --dir "$D" >/dev/null 2>&1 || true; rm -rf "$D"; }
trap cleanup EXIT
trap 'exit 130' INT TERM
timeout 60 "$KS" up --dir "$D" >/dev/null
ksrun() { timeout -k 5 "${KT:-300}" "$KS" run --dir "$D" -- "$@"; }
k() { ksrun kubectl "$@"; }
med() { sort -n | awk '{a[NR]=$1} END {if (NR==0) print "nan"; else if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
ms_of() { # RFC3339.mmm -> epoch ms
  python3 -c 'import sys,datetime; print(int(datetime.datetime.strptime(sys.argv[1],"%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=datetime.timezone.utc).timestamp()*1000))' "$1"
}
phase_ms() { sed -n 's/^phases: //p' "$1" | python3 -c 'import sys,json,datetime
p=json.load(sys.stdin)[sys.argv[1]]
print(int(datetime.datetime.strptime(p,"%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=datetime.timezone.utc).timestamp()*1000))' "$2"; }

# ---- helpers run inside the simulator's namespace ----
cat > "$D/patch.py" <<'PY'
# patch.py POD: sets the pod Ready with one HTTP PATCH; prints "before_ms after_ms".
import json, ssl, sys, time, http.client, yaml, os
cfg = yaml.safe_load(open(os.environ["KUBECONFIG"]))
srv = cfg["clusters"][0]["cluster"]["server"].split("//")[1]
tok = cfg["users"][0]["user"]["token"]
ctx = ssl.create_default_context(cafile=cfg["clusters"][0]["cluster"].get("certificate-authority"))
if "certificate-authority-data" in cfg["clusters"][0]["cluster"]:
    import base64
    ctx = ssl.create_default_context(cadata=base64.b64decode(cfg["clusters"][0]["cluster"]["certificate-authority-data"]).decode())
c = http.client.HTTPSConnection(srv, context=ctx)
c.connect()
body = json.dumps({"status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}})
t0 = time.time()
c.request("PATCH", "/api/v1/namespaces/default/pods/%s/status" % sys.argv[1], body,
          {"Authorization": "Bearer " + tok, "Content-Type": "application/merge-patch+json"})
r = c.getresponse(); r.read()
t1 = time.time()
assert r.status == 200, r.status
print(int(t0 * 1000), int(t1 * 1000))
PY
cat > "$D/watchready.py" <<'PY'
# watchready.py POD FLAG: watches POD over HTTP (creates FLAG once the watch is up) and
# prints the wall ms when it turns Ready.
import json, ssl, sys, time, http.client, yaml, os, base64
cfg = yaml.safe_load(open(os.environ["KUBECONFIG"]))
cl = cfg["clusters"][0]["cluster"]
srv = cl["server"].split("//")[1]
tok = cfg["users"][0]["user"]["token"]
if "certificate-authority-data" in cl:
    ctx = ssl.create_default_context(cadata=base64.b64decode(cl["certificate-authority-data"]).decode())
else:
    ctx = ssl.create_default_context(cafile=cl.get("certificate-authority"))
c = http.client.HTTPSConnection(srv, context=ctx, timeout=120)
c.request("GET", "/api/v1/namespaces/default/pods?watch=1", headers={"Authorization": "Bearer " + tok})
r = c.getresponse()
open(sys.argv[2], "w").close()  # tells the bench the watch is established
was = False  # the bench made sure it is not Ready before watching
while True:
    line = r.readline()
    if not line:
        break
    ev = json.loads(line)
    if ev["object"].get("metadata", {}).get("name") != sys.argv[1]:
        continue
    conds = ev["object"].get("status", {}).get("conditions", []) or []
    ready = any(x.get("type") == "Ready" and x.get("status") == "True" for x in conds)
    if ready and was is False:
        print(int(time.time() * 1000)); break
    was = ready
PY
. "$ROOT/bench/launch_lib.bash"
bench_launch_tools

want() { [ -z "${BENCH_ONLY:-}" ] || [[ ",$BENCH_ONLY," == *",$1,"* ]]; }
A1=n/a A2=n/a

ghost() { cat <<YAML
apiVersion: v1
kind: Pod
metadata: {name: $1, labels: {mpi_job_name: $2, mpi_role_type: worker}}
spec:
  nodeName: ghost
  containers: [{name: worker, image: busybox, command: [sleep, "3600"]}]
YAML
}

if want 1a; then
echo "== 1a. last worker Ready (status PATCH) -> mpirun started, mpi-agent run --no-reach-check"
for i in 0 1; do ghost lat-worker-$i lat; echo ---; done | k create -f - >/dev/null
ksrun python3 "$D/patch.py" lat-worker-0 >/dev/null
lat=()
for r in $(seq 10); do
  k patch pod lat-worker-1 --subresource=status --type=merge -p '{"status":{"phase":"Pending","conditions":[]}}' >/dev/null
  MPI_JOB_NAME=lat MPI_JOB_WORKERS=2 MPI_AGENT_TERMINATION_LOG=$D/term-lat ksrun "$BINDIR/mpi-agent" run \
    --no-reach-check --timeout 30s --dest "$D/none" -- true 2>"$D/lat.log" & ap=$!
  sleep 0.7
  read -r t0 t1 < <(ksrun python3 "$D/patch.py" lat-worker-1)
  wait $ap
  ms=$(phase_ms "$D/term-lat" mpirunStarted)
  lat+=("$((ms - t1)) $((t1 - t0))")
done
printf '%s\n' "${lat[@]}" | awk '{print $1}' | med > "$D/m1"; printf '%s\n' "${lat[@]}" | awk '{print $2}' | med > "$D/m2"
echo "   patch reply -> mpirunStarted: median $(cat "$D/m1") ms over 10 runs (all: $(printf '%s\n' "${lat[@]}" | awk '{printf "%s ", $1}')); the PATCH itself took $(cat "$D/m2") ms"
A1=$(cat "$D/m1")
k delete pod lat-worker-0 lat-worker-1 --grace-period=0 --force >/dev/null 2>&1 || true
fi

wpod() { cat <<YAML
apiVersion: v1
kind: Pod
metadata: {name: $1, labels: {mpi_job_name: $2, mpi_role_type: worker}}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: worker
    image: mpik8s/openmpi
    command: [sleep, "3600"]
$3
YAML
}

if want 1b; then
echo "== 1b. real pods: last worker Ready (readiness probe, seen on a watch) -> mpirun started, with the exec reach check"
wpod rl-worker-0 rl "" > "$D/rl.yaml"; echo --- >> "$D/rl.yaml"
wpod rl-worker-1 rl "    readinessProbe: {exec: {command: [test, -f, /tmp/go]}, periodSeconds: 1}" >> "$D/rl.yaml"
k create -f "$D/rl.yaml" >/dev/null
k wait --for=condition=Ready pod/rl-worker-0 --timeout=120s >/dev/null
lat2=()
for r in $(seq 3); do
  k exec rl-worker-1 -- rm -f /tmp/go
  k wait --for=condition=Ready=false pod/rl-worker-1 --timeout=30s >/dev/null
  rm -f "$D/watching"
  ksrun python3 -u "$D/watchready.py" rl-worker-1 "$D/watching" > "$D/readyat" & wp=$!
  for _ in $(seq 300); do [ -e "$D/watching" ] && break; sleep 0.1; done
  : > "$D/rl.log"
  MPI_JOB_NAME=rl MPI_JOB_WORKERS=2 MPI_JOB_WORKER_CONTAINER=worker MPI_AGENT_TERMINATION_LOG=$D/term-rl \
    ksrun "$BINDIR/mpi-agent" run --timeout 60s --dest "$D/none" -- true 2>"$D/rl.log" & ap=$!
  for _ in $(seq 300); do grep -q "1/2 workers ready" "$D/rl.log" 2>/dev/null && break; sleep 0.1; done
  k exec rl-worker-1 -- touch /tmp/go
  wait $ap; wait $wp || true
  ms=$(phase_ms "$D/term-rl" mpirunStarted); ready=$(cat "$D/readyat")
  reach=$(( $(phase_ms "$D/term-rl" workersReachable) - $(phase_ms "$D/term-rl" workersReady) ))
  lat2+=("$((ms - ready)) $reach")
done
printf '%s\n' "${lat2[@]}" | awk '{print $1}' | med > "$D/m3"
echo "   Ready on watch -> mpirunStarted: median $(cat "$D/m3") ms over 3 runs (all: $(printf '%s\n' "${lat2[@]}" | awk '{printf "%s ", $1}')); of which reach check: $(printf '%s\n' "${lat2[@]}" | awk '{print $2}' | med) ms"
A2=$(cat "$D/m3")
k delete pod rl-worker-0 rl-worker-1 --grace-period=0 --force >/dev/null 2>&1 || true
fi

want 2 || NS_LIST=
[ -z "$NS_LIST" ] || {
echo "== 2. full launch: mpirun -np N hostname (workers Ready), $REPS runs each, median ms"
maxn=0; for n in $NS_LIST; do [ "$n" -gt $maxn ] && maxn=$n; done
: > "$D/pods.yaml"
for ((i = 0; i < maxn; i++)); do wpod fl-worker-$i fl "" >> "$D/pods.yaml"; echo --- >> "$D/pods.yaml"; done
k create -f "$D/pods.yaml" >/dev/null
if ! k wait --for=condition=Ready pod -l mpi_job_name=fl --timeout=240s >/dev/null; then
  echo "   not all $maxn pods became Ready within 240 s; larger N skipped"
fi
bench_podpids fl
declare -A RES
for n in $NS_LIST; do
  ready=$(k get pods -l mpi_job_name=fl -o 'jsonpath={range .items[*]}{.metadata.name} {.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' | awk '$2=="True"' | wc -l)
  [ "$ready" -ge "$n" ] || { echo "   N=$n: only $ready Ready pods, skipped"; continue; }
  for ((i = 0; i < n; i++)); do echo "fl-worker-$i slots=1"; done > "$D/hf$n"
  for path in nsenter mpi-rsh kubexec; do
    case $path in
      nsenter) agent=$D/nsenter.sh ;;
      mpi-rsh) agent=$BINDIR/mpi-rsh ;;
      kubexec) agent=$D/kubexec.sh ;;
    esac
    : > "$D/r"
    # "AGENT : false": the orted in the pod is handed plm_rsh_agent too and dies if the path
    # does not exist there (see docs/agent.md); these agents live outside the pods
    for r in $(seq "$REPS"); do
      MPI_JOB_NAMESPACE=default MPI_JOB_WORKER_CONTAINER=worker KT=120 ksrun python3 "$D/tsrun.py" \
        timeout 90 mpirun --hostfile "$D/hf$n" -np "$n" --map-by node --bind-to none \
        -mca plm_rsh_agent "$agent : false" -mca plm_rsh_no_tree_spawn 1 -mca orte_leave_session_attached 1 \
        -mca plm_rsh_num_concurrent 128 hostname >> "$D/r" || true
    done
    bad=$(awk -v n="$n" '$4 != 0 || $3 < n' "$D/r" | wc -l)
    RES[$path,$n]="$(awk '{print $1}' "$D/r" | med) $(awk '{print $2}' "$D/r" | med) $bad"
  done
done
}
N3=${*:-2 8 32}
want 3 || N3=
[ -z "$N3" ] || {
echo "== 3. init then run (N Ready workers, exec reach check): ms for init / run / both, median of $REPS"
AB=${AGENT_BIN:-$BINDIR/mpi-agent}
max3=0; for n in $N3; do [ "$n" -gt $max3 ] && max3=$n; done
: > "$D/il.yaml"
for ((i = 0; i < max3; i++)); do wpod il-worker-$i il "" >> "$D/il.yaml"; echo --- >> "$D/il.yaml"; done
k create -f "$D/il.yaml" >/dev/null
k wait --for=condition=Ready pod -l mpi_job_name=il --timeout=240s >/dev/null || echo "   not all $max3 pods Ready"
for n in $N3; do
  for ((i = 0; i < n; i++)); do echo "il-worker-$i slots=1"; done > "$D/ilhf$n"
  : > "$D/r3"
  for r in $(seq "$REPS"); do
    rm -rf "$D/il$n"; mkdir -p "$D/il$n"
    # timed inside the simulator's namespace, so kubesim's own `run` start-up is not counted
    MPI_JOB_NAME=il MPI_JOB_WORKER_CONTAINER=worker ksrun bash -c '
      t0=$(date +%s%3N)
      "$1" init --no-deliver --dest "$2" --hostfile "$3" --timeout 60s 2>>"$4" || echo "init failed" >&2
      t1=$(date +%s%3N)
      "$1" run --dest "$2" --hostfile "$3" --timeout 60s -- true 2>>"$4" || echo "run failed" >&2
      t2=$(date +%s%3N)
      echo "$((t1 - t0)) $((t2 - t1)) $((t2 - t0))"' _ "$AB" "$D/il$n" "$D/ilhf$n" "$D/il.log" >> "$D/r3"
  done
  echo "   N=$n: $(grep -c 'not waiting again' "$D/il.log") run(s) trusted init's record, $(grep -c 'not using mpi-agent init' "$D/il.log") did not"
  : > "$D/il.log"
  echo "   N=$n: init $(awk '{print $1}' "$D/r3" | med) / run $(awk '{print $2}' "$D/r3" | med) / both $(awk '{print $3}' "$D/r3" | med) ms (runs: $(awk '{printf "%s+%s ", $1, $2}' "$D/r3"))"
done
k delete pod -l mpi_job_name=il --grace-period=0 --force >/dev/null 2>&1 || true
}
printf '   %-10s' "path"; for n in $NS_LIST; do printf '%26s' "N=$n last-line/total"; done; echo
for path in nsenter mpi-rsh kubexec; do
  printf '   %-10s' "$path"
  for n in $NS_LIST; do
    set -- ${RES[$path,$n]:-nan nan 0}
    over=""; [ "$path" != nsenter ] && [ "${RES[nsenter,$n]:-}" ] && over=" (+$(( ${1%.*} - $(echo ${RES[nsenter,$n]} | awk '{printf "%d", $1}') )))"
    printf '%26s' "$1${over}/$2${3:+$( [ "$3" != 0 ] && echo " ${3}bad")}"
  done; echo
done
for n in $NS_LIST; do
  [ -n "${RES[nsenter,$n]:-}" ] || continue
  f=$(echo ${RES[nsenter,$n]} | awk '{print $1}'); m=$(echo ${RES[mpi-rsh,$n]} | awk '{print $1}'); x=$(echo ${RES[kubexec,$n]} | awk '{print $1}')
  awk -v n="$n" -v f="$f" -v m="$m" -v x="$x" 'BEGIN { om=m-f; ox=x-f; printf "   N=%d: overhead over the floor: mpi-rsh %+d ms (%.2fx floor), kubexec.sh %+d ms (%.2fx floor); kubexec.sh overhead / mpi-rsh overhead = %s\n", n, om, m/f, ox, x/f, (om > 0 ? sprintf("%.1f", ox/om) : "inf (mpi-rsh at the floor)") }'
done
echo "   agent latency Ready -> mpirun started: ${A1} ms (status patch, no reach check), ${A2} ms (real pods, with reach check); target < 100 ms"
# section 2's medians for bench/plot.sh (bench/results/launch_kubesim.tsv, docs/img/launch_kubesim.png)
if [ -n "$NS_LIST" ]; then
  . "$ROOT/bench/results_lib.bash"
  bench_tsv_begin launch_kubesim "bench/agent.sh section 2: mpirun -np N hostname on kubesim into Ready worker pods, medians of $REPS runs (nsenter: the floor; mpi-rsh: ours, one process per worker; kubexec: kubectl exec, the seed)" \
    "${BENCH_ONLY:+BENCH_ONLY=$BENCH_ONLY }BENCH_REPS=$REPS bench/agent.sh $NS_LIST" N way last_rank_ms exit_ms failed_runs
  for n in $NS_LIST; do
    for path in nsenter mpi-rsh kubexec; do
      [ -n "${RES[$path,$n]:-}" ] || continue
      set -- ${RES[$path,$n]}
      bench_tsv_row "$n" "$path" "$1" "$2" "$3"
    done
  done
  bench_tsv_end
fi
