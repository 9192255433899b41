#!/usr/bin/env bash
# timeout: 240
# The operator's writes for one wide MPIJob stay bounded (issue #18): 16 workers on three
# kubesim nodes start, then exit one after the other 0.1 s apart (pods Succeeded); the
# operator gathers a job's pod events for a second before its sync (controller.c,
# POD_EVENT_BATCH_MS) and a watch event for the revision its own write stored triggers no
# sync (cache.c), so the MPIJob's status is written at most about once a second (here: never
# more than MAX_PER_SECOND writes within any 1 s; without batching the writes come in
# bursts, one per pod event), and Events are one per transition. Counted in kubesim's
# request log: PUTs of the MPIJob's status, Events POSTed, worker pod POSTs (exactly 16,
# created concurrently). The launcher is kept Pending by a nodeSelector no node has.
set -u
. "$(dirname "$0")/controller_common.bash"
N=16
# bounds independent of N: status writes within any 1 s (the creating sync and the one its
# launcher Job's creation triggers may fall in one second); Events: Created, Blocked (launcher)
MAX_PER_SECOND=2
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
writes_log=$(grep -E "PUT /apis/kubeflow.org/v2beta1/namespaces/default/mpijobs/wide/status " "$log")
writes=$(grep -c . <<<"$writes_log")
events=$(grep -cE "POST /api/v1/namespaces/default/events " "$log")
pods=$(grep -cE "POST /api/v1/namespaces/default/pods 201 " "$log")
# the most status writes within any 1 s window (kubesim's log times, HH:MM:SS.mmm)
burst=$(awk '{split($1, t, ":"); ms[NR] = (t[1] * 3600 + t[2] * 60 + t[3]) * 1000}
  END {max = 0; for (i = 1; i <= NR; i++) {n = 0; for (j = i; j <= NR && ms[j] - ms[i] < 1000; j++) n++;
       if (n > max) max = n}; print max}' <<<"$writes_log")
echo "status writes $writes (at most $burst within 1 s; bound $MAX_PER_SECOND), Events $events (bound $MAX_EVENTS), pod creates $pods"
[ "$pods" -eq "$N" ] || ks_fail "$pods worker pods POSTed, expected $N"
[ "$writes" -ge 2 ] || ks_fail "only $writes status writes: the counts were not written"
[ "$burst" -le $MAX_PER_SECOND ] || { echo "$writes_log"; grep -E "/pods |Running|Succeeded" "$log" | tail -n 60;
  ks_fail "$burst status writes within 1 s for $N workers (bound $MAX_PER_SECOND): one per pod event?"; }
[ "$events" -le $MAX_EVENTS ] || ks_fail "$events Events for one job (bound $MAX_EVENTS)"
echo "PASS: $N workers created concurrently; $writes status writes, at most $burst within 1 s; $events Events"
