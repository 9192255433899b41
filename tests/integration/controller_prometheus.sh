#!/usr/bin/env bash
# timeout: 480
# The shipped alerts in a real Prometheus (Debian's prometheus): it scrapes the operator every
# second and loads manifests/components/monitoring/mpi-operator.rules.yml, copied with one
# change only: MPIJobBlocked's threshold, 600 s, becomes 5 s (the file says so at the rule).
# An MPIJob whose worker asks for a GPU no node has is really Blocked (Unschedulable); the
# operator's blocked-since gauge carries the condition's lastTransitionTime, the scrape passes
# promtool check metrics with the new series (jobs by state, reconcile errors, work-queue
# depth, API requests, process_*), the rules' unit-test series have the labels the operator
# really exports, and /api/v1/alerts shows MPIJobBlocked firing for that job; once the job is
# deleted its series goes and the alert with it. A launcher whose image cannot be pulled is
# Blocked (the alert fires), then fails at its worker-timeout: the alert ends and MPIJobsFailed
# fires for its reason. Runs on kubesim and on the real cluster (tests/k8s/integration.list). The
# bound is the real cluster's under load: cold CI at load 11 printed PASS at 300 s, before its
# cluster was down.
set -u
. "$(dirname "$0")/controller_common.bash"
ks_skip_unless_root
command -v prometheus >/dev/null && command -v promtool >/dev/null ||
  { echo "skip: prometheus/promtool (Debian prometheus) not installed"; exit 77; }
MON=$ROOT/manifests/components/monitoring
PORT=18190 PROM=19090
ctl_cluster
ctl_start a --leader-elect=false --monitoring-port=$PORT -v 1

# the shipped rules, the Blocked threshold shortened on a copy (exactly one line differs)
P=$KS_DIR/prometheus
mkdir -p "$P/data"
sed 's/^\(    expr: time() - mpi_operator_job_blocked_since_timestamp_seconds\) > 600$/\1 > 5/' \
  "$MON/mpi-operator.rules.yml" >"$P/rules.yml"
changed=$(diff "$MON/mpi-operator.rules.yml" "$P/rules.yml" | grep -c '^>')
[ "$changed" = 1 ] || ks_fail "the threshold edit changed $changed lines of mpi-operator.rules.yml, want 1"
cat >"$P/prometheus.yml" <<YAML
global: {scrape_interval: 1s, evaluation_interval: 1s}
rule_files: [$P/rules.yml]
scrape_configs:
- job_name: mpi-operator
  static_configs: [{targets: ['127.0.0.1:$PORT']}]
YAML
setsid "$KUBESIM" run --dir "$KS_DIR" -- prometheus --config.file="$P/prometheus.yml" --storage.tsdb.path="$P/data" \
  --web.listen-address=127.0.0.1:$PROM >"$P/log" 2>&1 </dev/null &
echo $! >"$P/pid"
ks_on_exit 'kill $(cat "$KS_DIR/prometheus/pid") 2>/dev/null; for _ in $(seq 50); do kill -0 $(cat "$KS_DIR/prometheus/pid") 2>/dev/null || break; sleep 0.1; done; kill -KILL $(cat "$KS_DIR/prometheus/pid") 2>/dev/null'
api() { ks_run curl -sf "http://127.0.0.1:$PROM/api/v1/$1"; }
ks_wait_for 'api "query?query=up" | grep -q "\"value\":\[[0-9.]*,\"1\"\]"' 60 ||
  ks_fail "Prometheus does not scrape the operator: $(tail -n 5 "$P/log")"

mpijob_yaml gpu --ann mpi-k8s.io/transport=exec --ann mpi-k8s.io/worker-timeout=600 --workers 1 \
  --command "[sh, -c, 'true']" --worker-container 'resources: {limits: {nvidia.com/gpu: 1}}' |
  kc create -f - >/dev/null || ks_fail "create MPIJob gpu"
wait_cond gpu Blocked True 90
[ "$(cond gpu Blocked reason)" = Unschedulable ] || ks_fail "Blocked reason $(cond gpu Blocked reason)"
since=$(date -d "$(cond gpu Blocked lastTransitionTime)" +%s)

# the operator's exposition: the new series, valid
series='mpi_operator_job_blocked_since_timestamp_seconds{mpijob="gpu",namespace="default",reason="Unschedulable"}'
ks_wait_for "metrics $PORT | grep -qF '$series'" 20 || ks_fail "no $series: $(metrics $PORT | grep blocked)"
m=$(metrics $PORT)
echo "$m" | promtool check metrics || ks_fail "promtool check metrics"
got=$(echo "$m" | awk -v s="$series" '$1 == s { printf "%d", $2 }')
[ "$got" = "$since" ] || ks_fail "blocked since $got, want the condition's lastTransitionTime $since"
echo "$m" | grep -qx 'mpi_operator_jobs{state="blocked"} 1' || ks_fail "mpi_operator_jobs{state=blocked} is not 1"
for want in 'mpi_operator_reconcile_errors_total ' 'mpi_operator_workqueue_depth ' 'process_resident_memory_bytes ' \
  'process_cpu_seconds_total ' 'process_start_time_seconds ' 'rest_client_requests_total{code="200",method="GET"} ' \
  'rest_client_requests_total{code="201",method="POST"} '; do
  echo "$m" | grep -qF "$want" || ks_fail "no $want in the operator's metrics"
done
# the promtool unit tests' input series: the operator's metrics with the labels it exports
# (plus the scrape's job and instance, and pod/namespace from a PodMonitor)
echo "$m" >"$P/scrape.txt"
python3 - "$MON/mpi-operator.rules.test.yml" "$P/scrape.txt" <<'PY' || ks_fail "the rules' test series do not match the scrape"
import re, sys, yaml
exported = {}
for line in open(sys.argv[2]):
    mm = re.match(r'([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([^}]*)\})? ', line)
    if mm and not line.startswith("#"):
        names = set(re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)="', mm.group(3) or ""))
        exported.setdefault(mm.group(1), set()).update(names)
target = {"job", "instance", "pod", "namespace"}
bad = 0
for t in yaml.safe_load(open(sys.argv[1]))["tests"]:
    for s in t["input_series"]:
        name, labels = re.match(r'([^{]+)\{(.*)\}', s["series"]).groups()
        if name == "up":
            continue
        have = set(re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)="', labels))
        if name not in exported:
            print("test series %s: the operator exports no such metric" % name); bad = 1
        elif have - target != exported[name] - {"namespace"} or ("namespace" in exported[name]) > ("namespace" in have):
            print("test series %s labels %s, the operator's %s" % (name, sorted(have), sorted(exported[name]))); bad = 1
sys.exit(bad)
PY

# Prometheus: the alert fires for that job, named with its namespace and reason
firing() {
  api alerts | python3 -c '
import json, sys
for a in json.load(sys.stdin)["data"]["alerts"]:
    l = a["labels"]
    if l["alertname"] == "MPIJobBlocked" and l.get("mpijob") == "gpu" and l.get("namespace") == "default" \
       and l.get("reason") == "Unschedulable" and a["state"] == "firing":
        print(a["annotations"]["summary"])'
}
ks_wait_for '[ -n "$(firing)" ]' 60 || ks_fail "MPIJobBlocked never fired for default/gpu: $(api alerts)"
echo "firing: $(firing) ($(( $(date +%s) - since )) s after the job was blocked)"
api 'query?query=mpi_operator:job_blocked_seconds' | grep -q '"mpijob":"gpu"' ||
  ks_fail "the recording rule mpi_operator:job_blocked_seconds has no series for gpu"

# a launcher whose image cannot be pulled: Blocked, MPIJobBlocked fires, then the job fails at
# its 15 s worker-timeout (reason unknown: no rank failed), the alert ends and MPIJobsFailed
# fires for that reason
mpijob_yaml noimg --ann mpi-k8s.io/transport=exec --ann mpi-k8s.io/worker-timeout=15 --workers 1 \
  --launcher-image '"127.0.0.1:1/mpik8s/does-not-exist:1"' --command "[sh, -c, 'true']" |
  kc create -f - >/dev/null || ks_fail "create MPIJob noimg"
wait_cond noimg Failed True 90
alert_on() {  # NAME LABEL VALUE: the firing alert NAME with LABEL=VALUE is listed
  api alerts | python3 -c '
import json, sys
sys.exit(0 if any(a["labels"]["alertname"] == sys.argv[1] and a["labels"].get(sys.argv[2]) == sys.argv[3]
                  and a["state"] == "firing" for a in json.load(sys.stdin)["data"]["alerts"]) else 1)' "$@"
}
ks_wait_for 'alert_on MPIJobsFailed reason unknown' 30 || ks_fail "MPIJobsFailed{reason=unknown} never fired: $(api alerts)"
api 'query?query=max_over_time(ALERTS%7Balertname%3D%22MPIJobBlocked%22%2Cmpijob%3D%22noimg%22%2Calertstate%3D%22firing%22%7D%5B5m%5D)' |
  grep -q '"mpijob":"noimg"' || ks_fail "MPIJobBlocked never fired for noimg while it was blocked"
ks_wait_for 'api alerts >/dev/null && ! alert_on MPIJobBlocked mpijob noimg' 30 || ks_fail "MPIJobBlocked still firing for noimg after it failed"
metrics $PORT | grep -qx 'mpi_operator_jobs{state="failed"} 1' || ks_fail "mpi_operator_jobs{state=failed} is not 1"

# deleted: its series goes, and the alert stops
kc delete mpijob gpu noimg --wait=false >/dev/null || ks_fail "delete the MPIJobs"
ks_wait_for "! metrics $PORT | grep -q 'mpi_operator_job_blocked_since_timestamp_seconds{'" 30 ||
  ks_fail "the blocked-since series outlived the MPIJob"
ks_wait_for 'api alerts >/dev/null && [ -z "$(firing)" ]' 30 || ks_fail "MPIJobBlocked still firing after the MPIJob was deleted"
metrics $PORT | grep -qx 'mpi_operator_jobs{state="blocked"} 0' || ks_fail "mpi_operator_jobs{state=blocked} not back to 0"
echo PASS
