#!/usr/bin/env bash
# 24: the pod network between the launcher and one worker partitioned while mpirun runs, both
# kubelets healthy (tests/k8s/k8s fault partition: packets between the two pod IPs dropped
# both ways inside the cluster's namespaces; node, API server and kubelet traffic untouched,
# so exec streams and every pod's Ready stay). The cluster and the job: tests/e2e/partition_lib.sh.
# Annotation mpi-k8s.io/network-timeout "20": launcher <-> worker-1 partitioned after rank-up;
# the agent's pod-network watch stops mpirun and the MPIJob ends Failed naming j24-worker-1,
# its IP and node within 20 + 30 s of the partition; after heal, no leftovers. Case 27 is the
# same partition with the watch off. docs/reliability.md records the measurements.
# timeout: 420
# needs: exclusive (its bound is the cluster's timing: 30-50 s after the fault, not a loaded machine's)
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../partition_lib.sh"
e2e_begin
partition_up

# the watch on, bound 20 s
partition_start j24 20
t0=$(e2e_now_ms)
partition_cut
# the exec path (API server, kubelet) is not the pod network: it works through the partition
kc exec j24-worker-1 -c worker -- true || e2e_fail "j24: exec into worker-1 failed during the partition"
e2e_final j24 110 || true
# every launcher pod of the job and its log (a Job replacement would show here)
kc get pods -l mpi_job_name=j24 -o wide >&2 || true
for p in $(kc get pods -l mpi_job_name=j24,mpi_role_type=launcher -o name); do
  kc logs "$p" --all-containers 2>/dev/null | grep -vE '^rank-up' | tail -n 12 | sed "s#^#$p: #" >&2
done
e2e_expect j24 Failed '.+' "j24-worker-1 \\($WIP, node $WNODE\\): no answer over the pod network for [0-9]+ s" "$t0" 50
e2e_note "detected=${E2E_SECS}s-after-partition(bound-20s)"
launcher_log j24 | grep -E 'pod network|stopping the command|grace period' | tail -n 5 | sed 's/^/j24 launcher: /' >&2
partition_heal
e2e_no_leftovers j24 60

e2e_pass
