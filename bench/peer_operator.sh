#!/usr/bin/env bash
# bench/peer_operator.sh [N]: our operator and upstream MPI Operator v$MPI_OPERATOR_VERSION on
# the real API server (tests/k8s), N MPIJobs (default 1000; 1 launcher + 2 workers each), one
# after the other, each on a fresh cluster. As root, from the repository root; needs `make
# docker-images` and tests/k8s/build.sh's components (mpi-operator is built when missing).
#
# Each phase: a fresh cluster; upstream's CRD; one operator (bench/peer_lib.bash: upstream's own
# install, image swapped, or ours from deploy/v2beta1) watching namespace `bench` only; an APF
# FlowSchema matching only the operator's ServiceAccount, so that the API server's
# apiserver_flowcontrol_dispatched_requests_total{flow_schema="peer-op"} counts its requests
# (apiserver_request_total has no user or user-agent label); then `kubectl create -f` of N
# MPIJobs whose pods carry a nodeSelector no node has (they stay Pending: the scheduler's
# work is the same for both), and:
#   - time until all N launcher Jobs exist (from the create's start; polled each 1 s with a
#     limit=1 list's remainingItemCount)
#   - the operator pod's memory cgroup: memory.max_usage_in_bytes (reset before the create;
#     counts page cache too), the peak of memory.stat total_rss (anonymous, sampled each 1 s),
#     and the process's VmHWM
#   - CPU-seconds: the pod's cpuacct.usage over the phase
#   - the operator's API requests, and per job
#   - sync latency p50/p99: ours from /metrics (mpi_operator_reconcile_duration_seconds),
#     upstream's from its log ("Finished syncing job ... (D)", printed at klog's default level;
#     v0.6.0 exports no latency metric)
#   - then the operator pod is deleted and its Deployment's new pod syncs the N jobs: time
#     from the delete until N syncs are counted (ours: the summary's _count; upstream: its log
#     lines), and the same measures for the new pod.
# Upstream's default client limit is --kube-api-qps=5 --kube-api-burst=10 (ours: none), which
# would make its phase about 8 requests x N / 5 s; PEER_UPSTREAM_QPS/BURST (default 1000/2000)
# lift it so that its engine, not the throttle, is measured; PEER_UPSTREAM_QPS=5 PEER_UPSTREAM_BURST=10
# runs upstream's install as shipped. PEER_ONLY=up|ours runs one phase.
# When both phases' results are in PEER_OUT, the main figures also go to
# bench/results/peer_operator-N.tsv (bench/plot.sh draws docs/img/peer_operator.png from them).
set -u
export KUBE_BACKEND=k8s
ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/tests/integration/controller_common.bash"
. "$ROOT/bench/peer_lib.bash"
ks_skip_unless_root
N=${1:-1000}
QPS=${PEER_UPSTREAM_QPS:-1000}; BURST=${PEER_UPSTREAM_BURST:-2000}
OUTD=${PEER_OUT:-/tmp/peer-operator-$(date -u +%Y%m%dT%H%M%S)}
mkdir -p "$OUTD" || exit 1
peer_image

jobs_yaml() {
  local i
  for ((i = 0; i < N; i++)); do
    cat <<YAML
---
apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata: {name: j$i, namespace: bench}
spec:
  slotsPerWorker: 1
  mpiReplicaSpecs:
    Launcher:
      replicas: 1
      template:
        spec:
          nodeSelector: {mpik8s.io/nowhere: "true"}
          containers:
          - {name: launcher, image: mpik8s/mpi-pi:latest, command: [mpirun, -n, "2", /home/mpiuser/pi], resources: {requests: {cpu: 10m}}}
    Worker:
      replicas: 2
      template:
        spec:
          nodeSelector: {mpik8s.io/nowhere: "true"}
          containers:
          - {name: worker, image: mpik8s/mpi-pi:latest, resources: {requests: {cpu: 10m}}}
YAML
  done
}

ms() { date +%s%3N; }
# snap FILE: the API server's apiserver_request_total (all clients) now
snap() { kc get --raw /metrics | grep '^apiserver_request_total{' >"$1" || true; }
count_jobs() {  # launcher Jobs in namespace bench
  kc get --raw "/apis/batch/v1/namespaces/bench/jobs?limit=1" | jq '(.items | length) + (.metadata.remainingItemCount // 0)'
}
op_pod() {  # the operator's Running pod that is not being deleted
  kc -n "$OPNS" get pods -o json | jq -r '[.items[] | select(.status.phase == "Running" and (.metadata.deletionTimestamp | not))][0].metadata.name // empty'
}
op_pid() {  # the operator process in pod cgroup $1 (memory hierarchy)
  local p
  for p in $(cat "$1"/*/cgroup.procs 2>/dev/null); do
    [ "$(cat /proc/$p/comm 2>/dev/null)" = mpi-operator ] && { echo "$p"; return; }
  done
}
hwm() { awk '/^VmHWM/ {printf "%.1f", $2 / 1024}' "/proc/$1/status" 2>/dev/null; }
mb() { awk -v b="$1" 'BEGIN {printf "%.1f", b / 1048576}'; }
rss_sampler() {  # MEMCG FILE: peak total_rss every 1 s
  local peak=0 r
  while :; do
    r=$(awk '$1 == "total_rss" {print $2}' "$1/memory.stat" 2>/dev/null) || r=0
    [ "${r:-0}" -le "$peak" ] || { peak=$r; echo "$peak" >"$2"; }
    sleep 1
  done
}
# syncs so far and p50/p99 (ms): "count p50 p99"
syncs() {
  if [ "$WHO" = ours ]; then
    local ip; ip=$(kc -n "$OPNS" get pod "$1" -o jsonpath='{.status.podIP}')
    ks_run curl -sf "http://$ip:8080/metrics" | awk '
      $1 == "mpi_operator_reconcile_duration_seconds_count" {c = $2}
      $1 == "mpi_operator_reconcile_duration_seconds{quantile=\"0.5\"}" {p50 = $2 * 1000}
      $1 == "mpi_operator_reconcile_duration_seconds{quantile=\"0.99\"}" {p99 = $2 * 1000}
      END {printf "%d %.1f %.1f\n", c, p50, p99}'
  else
    kc -n "$OPNS" logs "$1" 2>/dev/null | sed -n 's/.*Finished syncing job "[^"]*" (\(.*\))$/\1/p' | awk '
      function ms(d) { if (d ~ /ms$/) return d + 0; if (d ~ /µs$/) return d / 1000; if (d ~ /ns$/) return d / 1e6;
                       if (d ~ /m[0-9.]*s$/) { split(d, a, "m"); return a[1] * 60000 + a[2] * 1000 } return d * 1000 }
      {print ms($1)}' | sort -n | awk '{v[NR] = $1} END { n = NR; if (n == 0) {print "0 0 0"; exit}
        printf "%d %.1f %.1f\n", n, v[int((n - 1) * 0.5) + 1], v[int((n - 1) * 0.99) + 1] }'
  fi
}

run_phase() {
  WHO=$1
  local log="$OUTD/$WHO.txt"
  ks_up
  W=$KS_DIR/w; mkdir -p "$W"
  if [ "$WHO" = up ]; then
    peer_install_upstream bench "--kube-api-qps=$QPS" "--kube-api-burst=$BURST"
    OPNS=mpi-operator; SA=mpi-operator
  else
    peer_install_crd
    peer_install_ours bench
    OPNS=mpi-operator-ours; SA=mpi-operator-ours
  fi
  peer_flowschema peer-op "$OPNS" "$SA"
  peer_owner_refs_ready bench "$OPNS" "$SA"
  jobs_yaml >"$W/jobs.yaml"
  sleep 5   # the operator's start settles
  local pod uid memcg cpucg pid req0 cpu0 t0 tc tj n deadline speak=$W/rss-peak
  pod=$(op_pod); memcg=$(peer_pod_cgroup "$OPNS" "$pod" memory); cpucg=$(peer_pod_cgroup "$OPNS" "$pod" cpuacct)
  pid=$(op_pid "$memcg"); [ -n "$pid" ] || ks_fail "no mpi-operator process in $memcg"
  echo 0 >"$memcg/memory.max_usage_in_bytes" 2>/dev/null || true
  local idle; idle=$(awk '$1 == "total_rss" {print $2}' "$memcg/memory.stat")
  echo 0 >"$speak"; rss_sampler "$memcg" "$speak" & local sp=$!
  ks_on_exit "kill $sp 2>/dev/null"
  snap "$OUTD/$WHO-m0"; req0=$(peer_requests peer-op); cpu0=$(cat "$cpucg/cpuacct.usage")
  t0=$(ms)
  kc create -f "$W/jobs.yaml" >/dev/null || ks_fail "create $N MPIJobs"
  tc=$(( $(ms) - t0 ))
  deadline=$(( $(date +%s) + N * 2 + 300 ))
  while n=$(count_jobs); [ "${n:-0}" -lt "$N" ]; do
    [ "$(date +%s)" -lt $deadline ] || ks_fail "$WHO: $n of $N launcher Jobs after the deadline"
    sleep 1
  done
  tj=$(( $(ms) - t0 ))
  sleep 2
  local req1 cpu1 maxu peak h s
  req1=$(peer_requests peer-op); cpu1=$(cat "$cpucg/cpuacct.usage"); snap "$OUTD/$WHO-m1"
  maxu=$(cat "$memcg/memory.max_usage_in_bytes"); peak=$(cat "$speak"); h=$(hwm "$pid")
  s=$(syncs "$pod")
  kill "$sp" 2>/dev/null; wait "$sp" 2>/dev/null
  # ---- restart over the N jobs
  local r0 tr tready pod2 memcg2 cpucg2 pid2 s2 c2=0 rreq0
  rreq0=$(peer_requests peer-op); snap "$OUTD/$WHO-m2"
  r0=$(ms)
  kc -n "$OPNS" delete pod "$pod" --wait=false >/dev/null || ks_fail "delete $pod"
  deadline=$(( $(date +%s) + 300 ))
  until pod2=$(op_pod) && [ -n "$pod2" ] && [ "$pod2" != "$pod" ]; do
    [ "$(date +%s)" -lt $deadline ] || ks_fail "$WHO: no new operator pod"; sleep 0.5; done
  tready=$(( $(ms) - r0 ))
  until s2=$(syncs "$pod2") && c2=${s2%% *} && [ "${c2:-0}" -ge "$N" ]; do
    [ "$(date +%s)" -lt $deadline ] || ks_fail "$WHO: restarted operator synced ${c2:-0} of $N jobs"; sleep 1; done
  tr=$(( $(ms) - r0 ))
  sleep 2
  memcg2=$(peer_pod_cgroup "$OPNS" "$pod2" memory); cpucg2=$(peer_pod_cgroup "$OPNS" "$pod2" cpuacct); pid2=$(op_pid "$memcg2")
  local rreq1 rcpu rmax rrss rh
  rreq1=$(peer_requests peer-op); snap "$OUTD/$WHO-m3"; rcpu=$(cat "$cpucg2/cpuacct.usage")
  rmax=$(cat "$memcg2/memory.max_usage_in_bytes"); rrss=$(awk '$1 == "total_rss" {print $2}' "$memcg2/memory.stat"); rh=$(hwm "$pid2")
  kc -n "$OPNS" logs "$pod2" >"$OUTD/$WHO-operator.log" 2>&1
  {
    echo "who=$WHO"
    echo "create_ms=$tc"
    echo "jobs_ms=$tj"
    echo "cpu_s=$(awk -v a="$cpu0" -v b="$cpu1" 'BEGIN {printf "%.1f", (b - a) / 1e9}')"
    echo "idle_rss_mb=$(mb "$idle")"
    echo "peak_rss_mb=$(mb "$peak")"
    echo "max_usage_mb=$(mb "$maxu")"
    echo "vmhwm_mb=$h"
    echo "requests=$((req1 - req0))"
    echo "req_per_job=$(awk -v r=$((req1 - req0)) -v n="$N" 'BEGIN {printf "%.2f", r / n}')"
    echo "syncs=$(echo "$s" | cut -d' ' -f1)"
    echo "p50_ms=$(echo "$s" | cut -d' ' -f2)"
    echo "p99_ms=$(echo "$s" | cut -d' ' -f3)"
    echo "restart_pod_ms=$tready"
    echo "restart_ms=$tr"
    echo "restart_requests=$((rreq1 - rreq0))"
    echo "restart_cpu_s=$(awk -v b="$rcpu" 'BEGIN {printf "%.1f", b / 1e9}')"
    echo "restart_max_usage_mb=$(mb "$rmax")"
    echo "restart_rss_mb=$(mb "$rrss")"
    echo "restart_vmhwm_mb=$rh"
    echo "restart_syncs=$(echo "$s2" | cut -d' ' -f1)"
    echo "restart_p50_ms=$(echo "$s2" | cut -d' ' -f2)"
    echo "restart_p99_ms=$(echo "$s2" | cut -d' ' -f3)"
    echo "load=$(cut -d' ' -f1-3 /proc/loadavg)"
  } >"$log"
  cat "$log"
  ks_down
}

case ${PEER_ONLY:-} in up|ours) run_phase "$PEER_ONLY" ;; *) run_phase up; run_phase ours ;; esac
[ -f "$OUTD/up.txt" ] && [ -f "$OUTD/ours.txt" ] || exit 0
python3 - "$OUTD" "$N" "$(git -C "$ROOT" rev-parse --short HEAD)" "$MPI_OPERATOR_VERSION" "$QPS/$BURST" <<'PY'
import sys
d, n, commit, ver, qps = sys.argv[1:]
r = {w: dict(l.strip().split("=", 1) for l in open("%s/%s.txt" % (d, w))) for w in ("up", "ours")}
rows = [("create of %s MPIJobs (kubectl create -f)" % n, "create_ms", "ms"),
        ("all launcher Jobs exist (from the create's start)", "jobs_ms", "ms"),
        ("operator CPU over that", "cpu_s", "s"),
        ("anonymous RSS idle before the jobs", "idle_rss_mb", "MB"),
        ("peak anonymous RSS (memory.stat total_rss, 1/s)", "peak_rss_mb", "MB"),
        ("pod memory.max_usage_in_bytes (incl. page cache)", "max_usage_mb", "MB"),
        ("process VmHWM", "vmhwm_mb", "MB"),
        ("operator API requests", "requests", ""),
        ("  per job", "req_per_job", ""),
        ("syncs", "syncs", ""),
        ("sync latency p50", "p50_ms", "ms"),
        ("sync latency p99", "p99_ms", "ms"),
        ("restart: new pod Running (from the delete)", "restart_pod_ms", "ms"),
        ("restart: all %s jobs synced (from the delete)" % n, "restart_ms", "ms"),
        ("restart: API requests", "restart_requests", ""),
        ("restart: CPU of the new pod", "restart_cpu_s", "s"),
        ("restart: anonymous RSS after syncing", "restart_rss_mb", "MB"),
        ("restart: pod memory.max_usage_in_bytes", "restart_max_usage_mb", "MB"),
        ("restart: process VmHWM", "restart_vmhwm_mb", "MB"),
        ("restart: sync latency p50 / p99", None, "ms")]
print("\nbench/peer_operator.sh %s: commit %s, upstream v%s (--kube-api-qps/burst %s), load at the end of each phase: upstream %s, ours %s\n"
      % (n, commit, ver, qps, r["up"]["load"], r["ours"]["load"]))
print("| measure | upstream | ours | ours / upstream |\n|---|---|---|---|")
for name, k, u in rows:
    if k is None:
        a = "%s / %s" % (r["up"]["restart_p50_ms"], r["up"]["restart_p99_ms"])
        b = "%s / %s" % (r["ours"]["restart_p50_ms"], r["ours"]["restart_p99_ms"])
        print("| %s | %s %s | %s %s | |" % (name, a, u, b, u)); continue
    a, b = r["up"][k], r["ours"][k]
    try:
        ratio = "%.2f" % (float(b) / float(a)) if float(a) else ""
    except ValueError:
        ratio = ""
    print("| %s | %s %s | %s %s | %s |" % (name, a, u, b, u, ratio))

# All clients' requests by verb and resource (apiserver_request_total deltas; the operator's
# own count is the FlowSchema's above, this says where the difference lies)
import re, collections
def load(f):
    m = collections.Counter()
    for l in open(f):
        lab, v = l.rsplit(" ", 1)
        g = dict(re.findall(r'(\w+)="([^"]*)"', lab))
        k = "%s %s%s%s" % (g.get("verb"), g.get("group") + "/" if g.get("group") else "", g.get("resource"),
                           "/" + g["subresource"] if g.get("subresource") else "")
        m[k] += float(v)
    return m
for title, a0, a1 in (("the create until all launcher Jobs exist", "m0", "m1"), ("the restart", "m2", "m3")):
    dd = {}
    for w in ("up", "ours"):
        x, y = load("%s/%s-%s" % (d, w, a0)), load("%s/%s-%s" % (d, w, a1))
        dd[w] = {k: int(y[k] - x.get(k, 0)) for k in y if y[k] - x.get(k, 0) > 0}
    keys = sorted(set(dd["up"]) | set(dd["ours"]), key=lambda k: -(dd["up"].get(k, 0) + dd["ours"].get(k, 0)))
    print("\nAll clients' API requests in %s, by verb and resource (upstream / ours):\n" % title)
    print("| verb resource | upstream | ours |\n|---|---|---|")
    for k in keys:
        if dd["up"].get(k, 0) + dd["ours"].get(k, 0) >= 5:
            print("| %s | %d | %d |" % (k, dd["up"].get(k, 0), dd["ours"].get(k, 0)))
PY

# the figures bench/plot.sh draws (docs/img/peer_operator.png), one file per N:
# bench/results/peer_operator-N.tsv, one row per operator (bench/results_lib.bash)
. "$ROOT/bench/results_lib.bash"
bench_tsv_begin "peer_operator-$N" "bench/peer_operator.sh: $N MPIJobs (pods held Pending) on the real API server, upstream v$MPI_OPERATOR_VERSION (--kube-api-qps/burst $QPS/$BURST) then ours, each on a fresh cluster" \
  "${PEER_OURS_TAG:+PEER_OURS_TAG=$PEER_OURS_TAG }bench/peer_operator.sh $N" \
  N operator jobs_s cpu_s peak_rss_mb req_per_job restart_s load
for who in up ours; do
  v() { sed -n "s/^$1=//p" "$OUTD/$who.txt"; }
  bench_tsv_row "$N" "$([ $who = up ] && echo upstream || echo ours)" "$(awk -v m="$(v jobs_ms)" 'BEGIN {printf "%.1f", m / 1000}')" \
    "$(v cpu_s)" "$(v peak_rss_mb)" "$(v req_per_job)" "$(awk -v m="$(v restart_ms)" 'BEGIN {printf "%.1f", m / 1000}')" "$(v load | cut -d' ' -f1)"
done
bench_tsv_end
