#!/usr/bin/env bash
# timeout: 300
# The operator tells the launcher its MPI implementation (MPI_JOB_MPI_IMPLEMENTATION):
# `mpi-agent status` run as the launcher's command of an MPICH and an Intel MPI job
# prints the hostfile in that flavour's format (before, both were Open MPI's).
# The operator runs with upstream Deployment-style Go flags (-alsologtostderr, -v=1, ...)
# and reaches the API server only through -master.
set -u
. "$(dirname "$0")/controller_common.bash"
ctl_cluster
# -master overrides the server of a kubeconfig that points nowhere (the later -kubeConfig wins)
sed 's|server: .*|server: https://127.0.0.9:1|' "$KS_DIR/kubeconfig" > "$KS_DIR/kubeconfig-elsewhere"
ctl_start a -kubeConfig "$KS_DIR/kubeconfig-elsewhere" -master=https://10.250.0.1:6443/ -alsologtostderr -v=1 -stderrthreshold INFO -kube-api-qps=50 -kube-api-burst 100 -controller-queue-rate-limit=10 --controller-queue-burst 100 -leader-elect=false
job() { # NAME IMPLEMENTATION
  mpijob_yaml "$1" --ann mpi-k8s.io/transport=exec --ann mpi-k8s.io/agent-run=false --impl "$2" --slots 2 \
    --command '[/opt/kube/mpi-agent, status]'
}
job st-mpich MPICH | kc create -f - >/dev/null || ks_fail "create st-mpich"
job st-intel Intel | kc create -f - >/dev/null || ks_fail "create st-intel"
for n in st-mpich st-intel; do
  ks_wait_for "[ \"\$(cond $n Succeeded status)\" = True ] || [ \"\$(cond $n Failed status)\" = True ]" 200 || true
  out=$(kc logs -l "mpi_job_name=$n,mpi_role_type=launcher" -c l --tail 100)
  [ "$(cond "$n" Succeeded status)" = True ] || { kc get pods -o wide; ks_fail "$n did not succeed: $out"; }
  flavour=${n#st-}
  grep -qx "HOSTFILE ($flavour)" <<<"$out" || ks_fail "$n: no 'HOSTFILE ($flavour)' in: $out"
  grep -qx "$n-worker-1.$n.default.svc:2" <<<"$out" || ks_fail "$n: no MPICH-style hostfile line in: $out"
done
echo PASS
