#!/usr/bin/env bash
# timeout: 240
# The operator's writes for one wide MPIJob stay bounded (issue #18): 16 workers on three
# kubesim nodes start, then exit one after the other 0.1 s apart (pods Succeeded); the
# operator gathers pod events for a second before a sync (controller.c, POD_EVENT_BATCH_MS),
# so the MPIJob's status is written a few times, not once per pod event, and Events are one
# per transition. Counted in kubesim's request log: PUTs of the MPIJob's status, Events
# POSTed, worker pod POSTs (exactly 16, created concurrently). The launcher is kept Pending
# by a nodeSelector no node has (no MPI runs).
set -u
. "$(dirname "$0")/controller_common.bash"
N=16
# bounds independent of N: Created + startTime, Blocked (the launcher), the workers' Running
# and Succeeded counts in ~1 s batches (without batching: one write per pod event, ~2N)
MAX_STATUS_WRITES=10
MAX_EVENTS=4
ctl_cluster --nodes 3
ctl_start a --leader-elect=false -v 1

kc create -f - >/dev/null <<YAML || ks_fail "create the MPIJob"
apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata: {name: wide}
spec:
  mpiReplicaSpecs:
    Launcher:
      replicas: 1
      template:
        spec:
          nodeSelector: {test: unschedulable}
          containers: [{name: l, image: mpik8s/openmpi, command: [mpirun, hostname]}]
    Worker:
      replicas: $N
      template:
        spec:
          containers:
          - name: w
            image: busybox
            command: [sh, -c, 'i=\$(hostname); i=\${i##*-}; sleep \$((3 + i / 10)).\$((i % 10))']
YAML
succeeded() { kc get pods -l training.kubeflow.org/job-role=worker,training.kubeflow.org/job-name=wide \
  --field-selector status.phase=Succeeded -o name | wc -l; }
ks_wait_for '[ "$(succeeded)" -eq '$N' ]' 150 || { kc get pods -o wide; ks_fail "the $N workers did not all succeed"; }
sleep 3 # the last batch's sync
kc get mpijob wide -o jsonpath='{.status.replicaStatuses.Worker.succeeded}' | grep -qx "$N" \
  || ks_fail "status.replicaStatuses.Worker.succeeded is not $N: $(kc get mpijob wide -o jsonpath='{.status}')"
log=$KS_DIR/apiserver.log
writes=$(grep -cE "PUT /apis/kubeflow.org/v2beta1/namespaces/default/mpijobs/wide/status " "$log")
events=$(grep -cE "POST /api/v1/namespaces/default/events " "$log")
pods=$(grep -cE "POST /api/v1/namespaces/default/pods 201 " "$log")
echo "status writes $writes (bound $MAX_STATUS_WRITES), Events $events (bound $MAX_EVENTS), pod creates $pods"
[ "$pods" -eq "$N" ] || ks_fail "$pods worker pods POSTed, expected $N"
[ "$writes" -ge 2 ] || ks_fail "only $writes status writes: the counts were not written"
[ "$writes" -le $MAX_STATUS_WRITES ] || { grep -E "mpijobs/wide/status|/pods " "$log" | tail -n 60;
  ks_fail "$writes status writes for $N workers (bound $MAX_STATUS_WRITES): one per pod event?"; }
[ "$events" -le $MAX_EVENTS ] || ks_fail "$events Events for one job (bound $MAX_EVENTS)"
echo "PASS: $N workers created concurrently, $writes status writes and $events Events"
