#!/usr/bin/env bash
# prometheus_rules.sh - the monitoring kustomize component (manifests/components/monitoring)
# holds: `promtool check rules` and `promtool test rules` pass on the rule file; the
# PrometheusRule is the rule file, generated (gen-prometheus-rule.sh --check) and equal once
# parsed; every metric the rules, their tests and the Grafana dashboard name is one the
# operator exports (named in controller/*.c; tests/integration/controller_prometheus.sh checks
# the test series' labels against a real scrape); the dashboard's queries parse as PromQL; the
# overlay with the component builds, its PodMonitor selecting the operator's pods and port.
# Seconds, no build needed; `make prometheus-rules` runs it, and make test before the build.
set -u
cd "$(dirname "$0")/.." || exit 2
D=manifests/components/monitoring
RULES=$D/mpi-operator.rules.yml TESTS=$D/mpi-operator.rules.test.yml DASH=$D/mpi-operator-dashboard.json
command -v promtool >/dev/null || { echo "prometheus_rules.sh: promtool not found (make deps installs prometheus)" >&2; exit 2; }
fail=0
offence() {
  echo "prometheus_rules.sh: $*" >&2
  fail=1
}
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT

promtool check rules "$RULES" >"$tmp/check.out" 2>&1 || { cat "$tmp/check.out" >&2; offence "promtool check rules $RULES"; }
(cd "$D" && promtool test rules "$(basename "$TESTS")") >"$tmp/test.out" 2>&1 ||
  { cat "$tmp/test.out" >&2; offence "promtool test rules $TESTS"; }
$D/gen-prometheus-rule.sh --check || offence "$D/prometheusrule.yaml is not generated from $RULES"
python3 - "$RULES" "$D/prometheusrule.yaml" <<'PY' || offence "the PrometheusRule's spec differs from $RULES"
import sys, yaml
rules, cr = (yaml.safe_load(open(p)) for p in sys.argv[1:3])
sys.exit(0 if cr.get("kind") == "PrometheusRule" and cr.get("spec") == rules else 1)
PY

# the operator's metric names the three files use (recording rules' names hold ':', not matched)
n=0
for m in $(grep -ohE '\b(mpi_operator_[a-z_]+|process_[a-z_]+|rest_client_[a-z_]+)' "$RULES" "$TESTS" "$DASH" | sort -u); do
  base=${m%_bucket}
  grep -qw -- "$base" controller/*.c || offence "$m: no metric of that name in controller/*.c"
  n=$((n + 1))
done
[ "$n" -ge 10 ] || offence "only $n metric names found in the rules, tests and dashboard"

# the dashboard's queries as recording rules (Grafana's variables replaced): promtool parses them
python3 - "$DASH" >"$tmp/dash.rules.yml" <<'PY' || offence "$DASH: not a dashboard with queries"
import json, sys
d = json.load(open(sys.argv[1]))
exprs = [t["expr"] for p in d["panels"] for t in p.get("targets", [])]
if len(exprs) < 8 or not all(p.get("datasource") for p in d["panels"]):
    sys.exit(1)
sub = {"$__rate_interval": "5m", "$__range": "1h", "$job": "x", "$phase": "x"}
print("groups:\n- name: dashboard\n  rules:")
for i, e in enumerate(exprs):
    for k, v in sub.items():
        e = e.replace(k, v)
    print("  - record: dashboard:q%d\n    expr: %s" % (i, json.dumps(e)))
PY
promtool check rules "$tmp/dash.rules.yml" >"$tmp/dash.out" 2>&1 || { cat "$tmp/dash.out" >&2; offence "$DASH: a query does not parse"; }

# the overlay with the component: both objects, the PodMonitor matching the operator's pods
if command -v kubectl >/dev/null; then
  kubectl kustomize manifests/overlays/monitoring >"$tmp/built.yaml" 2>"$tmp/kz.err" || { cat "$tmp/kz.err" >&2; offence "kubectl kustomize manifests/overlays/monitoring"; }
  python3 - "$tmp/built.yaml" <<'PY' || offence "manifests/overlays/monitoring: the PodMonitor does not select the operator's pods and port, or the PrometheusRule is missing"
import sys, yaml
objs = {o["kind"]: o for o in yaml.safe_load_all(open(sys.argv[1])) if o}
pm, dep = objs["PodMonitor"], objs["Deployment"]
pod = dep["spec"]["template"]
ports = [p.get("name") for c in pod["spec"]["containers"] for p in c.get("ports", [])]
sel = pm["spec"]["selector"]["matchLabels"]
ok = all(pod["metadata"]["labels"].get(k) == v for k, v in sel.items())
ok = ok and all(e["port"] in ports for e in pm["spec"]["podMetricsEndpoints"])
ok = ok and pm["metadata"]["namespace"] == dep["metadata"]["namespace"] and "PrometheusRule" in objs
sys.exit(0 if ok else 1)
PY
fi
[ $fail = 0 ] && echo "prometheus_rules.sh: rules checked, promtool tests pass, PrometheusRule generated, $n metric names exported, dashboard queries parse"
exit $fail
