#!/usr/bin/env bash
# timeout: 240
# The operator finds the MPIJob version by API discovery (controller/crds.c): started
# before any CRD exists it waits and says so; with deploy/v1alpha2's CRD (v1alpha2
# alone) it lists, watches and writes status through kubeflow.org/v1alpha2; restarted
# with manifests/base's CRD (both versions) it takes v2beta1. Each time a job gets its
# Created condition, written through the discovered version's status endpoint (the API
# server's request log).
set -u
. "$(dirname "$0")/controller_common.bash"
ks_skip_unless_root
[ -x "$BINDIR/mpi-operator" ] || ks_fail "missing $BINDIR/mpi-operator (run make)"
ks_up
ctl_start a --leader-elect=false
ks_wait_for "grep -q 'serves no MPIJob version' '$KS_DIR/op-a.log'" 20 \
  || ks_fail "operator without a CRD did not say it waits: $(ctl_log a | tail -3)"
kc create -f "$ROOT/manifests/v1alpha2/crd.yaml" >/dev/null || ks_fail "create the v1alpha2 CRD"
ks_wait_for "grep -q 'MPIJobs at kubeflow.org/v1alpha2 (API discovery)' '$KS_DIR/op-a.log'" 20 \
  || ks_fail "operator did not discover v1alpha2: $(ctl_log a | tail -3)"
kc create -f "$ROOT/examples/v1alpha2/pi.yaml" >/dev/null || ks_fail "create examples/v1alpha2/pi.yaml"
wait_cond pi Created True 60
kc get mpijobs pi -o yaml | grep -qx 'apiVersion: kubeflow.org/v1alpha2' || ks_fail "pi is not served as v1alpha2"
grep -q 'PUT /apis/kubeflow.org/v1alpha2/namespaces/default/mpijobs/pi/status 200' "$KS_DIR/apiserver.log" \
  || ks_fail "status not written through v1alpha2: $(grep mpijobs "$KS_DIR/apiserver.log" | tail -5)"
# v2beta1 only served by manifests/base's CRD: the v1alpha2 one refuses a v2beta1 job
kc create -f "$ROOT/examples/v2beta1/pi.yaml" >/dev/null 2>&1 && ks_fail "v1alpha2-only CRD accepted a v2beta1 job"
ctl_stop a
kc delete mpijob pi >/dev/null || ks_fail "delete pi"
kc delete crd mpijobs.kubeflow.org >/dev/null || ks_fail "delete the v1alpha2 CRD"
ks_wait_for "! kc get crd mpijobs.kubeflow.org" 30 || ks_fail "CRD not gone"
kc create -f "$ROOT/manifests/base/crd.yaml" >/dev/null || ks_fail "create the two-version CRD"
ks_wait_for "kc get mpijobs.v2beta1.kubeflow.org" 20 || ks_fail "v2beta1 not served"
ctl_start b --leader-elect=false
ks_wait_for "grep -q 'MPIJobs at kubeflow.org/v2beta1 (API discovery)' '$KS_DIR/op-b.log'" 20 \
  || ks_fail "operator did not prefer v2beta1: $(ctl_log b | tail -3)"
kc create -f "$ROOT/examples/v2beta1/pi.yaml" >/dev/null || ks_fail "create examples/v2beta1/pi.yaml"
wait_cond pi Created True 60
grep -q 'PUT /apis/kubeflow.org/v2beta1/namespaces/default/mpijobs/pi/status 200' "$KS_DIR/apiserver.log" \
  || ks_fail "status not written through v2beta1: $(grep mpijobs "$KS_DIR/apiserver.log" | tail -5)"
kc delete mpijob pi >/dev/null
echo "PASS: API discovery: waited without a CRD, v1alpha2 alone, v2beta1 preferred when both are served"
