#!/bin/sh
# Writes prometheusrule.yaml (the PrometheusRule of this kustomize component) from
# mpi-operator.rules.yml, the one hand-edited copy of the rules: the rule file's groups become
# the PrometheusRule's spec, line for line (its comments kept). `--check` fails when the
# committed file differs from what this would write (tests/prometheus_rules.sh, make test).
# Usage: manifests/components/monitoring/gen-prometheus-rule.sh [--check]
set -eu
cd "$(dirname "$0")"
gen() {
  cat <<'HDR'
# mpi-operator's alerts and recording rules for prometheus-operator (a kustomize component:
# docs/controller.md, "Alerts and recording rules"). Generated from mpi-operator.rules.yml by
# gen-prometheus-rule.sh; edit the rule file, not this one.
apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata:
  name: mpi-operator
  namespace: mpi-operator
  labels:
    app: mpi-operator
spec:
HDR
  # the rule file without its leading comment block, indented under spec
  sed -n '/^[^#]/,$p' mpi-operator.rules.yml | sed 's/^\(.\)/  \1/'
}
if [ "${1:-}" = --check ]; then
  gen | cmp -s - prometheusrule.yaml ||
    { echo "manifests/components/monitoring/prometheusrule.yaml is stale: run $0" >&2; exit 1; }
else
  gen >prometheusrule.yaml
fi
