#!/usr/bin/env bash
# timeout: 300
# Kueue-style suspend/resume with gang scheduling, as upstream MPI Operator v2beta1 leaves
# the objects: the operator runs with --gang-scheduling=scheduler-plugins-scheduler (any
# scheduler name means scheduler-plugins' PodGroups); the PodGroup carries minMember and
# minResources (the launcher's and workers' requests); the launcher Job has
# podReplacementPolicy Failed; suspending deletes the workers and the PodGroup and suspends
# the launcher Job; the MPIJob's nodeSelector, tolerations and schedulingGates change while
# suspended; resuming recreates the PodGroup and the workers with the new nodeSelector, and
# the launcher Job (and so its new pod) takes the new nodeSelector (the old key gone),
# tolerations and schedulingGates; a job created suspended gets its launcher Job at once,
# suspended, and no PodGroup or workers. No pod runs (kubesim schedules only
# default-scheduler pods).
set -u
. "$(dirname "$0")/controller_common.bash"
ctl_cluster
# scheduler-plugins' PodGroup CRD, reduced to the fields the operator writes
kc create -f - >/dev/null <<'YAML' || ks_fail "PodGroup CRD"
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: podgroups.scheduling.x-k8s.io}
spec:
  group: scheduling.x-k8s.io
  scope: Namespaced
  names: {plural: podgroups, singular: podgroup, kind: PodGroup, listKind: PodGroupList, shortNames: [pg]}
  versions:
  - name: v1alpha1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              minMember: {type: integer, format: int32}
              minResources:
                type: object
                additionalProperties: {anyOf: [{type: integer}, {type: string}], x-kubernetes-int-or-string: true}
              scheduleTimeoutSeconds: {type: integer, format: int32}
          status: {type: object, x-kubernetes-preserve-unknown-fields: true}
YAML
ks_wait_for "kc get podgroups" 20 || ks_fail "podgroups not served"
ctl_start a --gang-scheduling=scheduler-plugins-scheduler --monitoring-port 18183 --leader-elect=false -v 1

mpijob_yaml gang --ann mpi-k8s.io/transport=exec --pod 'nodeSelector: {pool: a}' --command '[mpirun, "true"]' \
  --launcher-container 'resources: {requests: {cpu: "1"}}' \
  --worker-container 'resources: {requests: {cpu: 500m}, limits: {memory: 256Mi}}' |
  kc create -f - >/dev/null || ks_fail "create MPIJob"
jp() { kc get "$1" -o jsonpath="$2" 2>/dev/null; }
ks_wait_for '[ "$(jp podgroup/gang "{.spec.minMember}")" = 3 ] && kc get job gang-launcher && kc get pod gang-worker-1' 40 \
  || ks_fail "objects not created: $(ctl_log a | tail -5)"
[ "$(jp podgroup/gang '{.spec.minResources.cpu}/{.spec.minResources.memory}/{.spec.scheduleTimeoutSeconds}')" = 2/512Mi/0 ] \
  || ks_fail "PodGroup spec: $(jp podgroup/gang '{.spec}')"
[ "$(jp job/gang-launcher '{.spec.podReplacementPolicy}')" = Failed ] || ks_fail "launcher Job podReplacementPolicy"
[ "$(jp pod/gang-worker-0 '{.spec.schedulerName}/{.metadata.labels.scheduling\.x-k8s\.io/pod-group}')" = scheduler-plugins-scheduler/gang ] \
  || ks_fail "worker not marked for the gang scheduler"

# --- suspend: workers and PodGroup go, the launcher Job is suspended ---
kc patch mpijob gang --type merge -p '{"spec":{"runPolicy":{"suspend":true}}}' >/dev/null || ks_fail "suspend patch"
ks_wait_for '! kc get podgroup gang >/dev/null 2>&1 && [ -z "$(kc get pods -l mpi_job_name=gang,mpi_role_type=worker -o name)" ]' 40 \
  || ks_fail "PodGroup or workers left while suspended: $(kc get podgroups,pods -o name)"
[ "$(jp job/gang-launcher '{.spec.suspend}')" = true ] || ks_fail "launcher Job not suspended"
sleep 2
kc get podgroup gang >/dev/null 2>&1 && ks_fail "PodGroup recreated while suspended"

# --- what Kueue does while the job waits: other nodes, a toleration, a scheduling gate ---
kc patch mpijob gang --type merge -p '{"spec":{"mpiReplicaSpecs":{
  "Launcher":{"template":{"spec":{"nodeSelector":{"pool":null,"zone":"z2"},
    "tolerations":[{"key":"flavor","operator":"Exists"}],"schedulingGates":[{"name":"kueue.x-k8s.io/topology"}]}}},
  "Worker":{"template":{"spec":{"nodeSelector":{"pool":null,"zone":"z2"}}}}}}}' >/dev/null || ks_fail "template patch"

# --- resume ---
kc patch mpijob gang --type merge -p '{"spec":{"runPolicy":{"suspend":false}}}' >/dev/null || ks_fail "resume patch"
ks_wait_for 'kc get podgroup gang && kc get pod gang-worker-1 && [ "$(jp job/gang-launcher "{.spec.suspend}")" = false ]' 40 \
  || ks_fail "not resumed: $(kc get podgroups,pods,jobs -o name) $(ctl_log a | tail -5)"
[ "$(jp job/gang-launcher '{.spec.template.spec.nodeSelector}')" = '{"zone":"z2"}' ] \
  || ks_fail "launcher Job nodeSelector: $(jp job/gang-launcher '{.spec.template.spec.nodeSelector}')"
[ "$(jp job/gang-launcher '{.spec.template.spec.tolerations[0].key}/{.spec.template.spec.schedulingGates[0].name}')" = flavor/kueue.x-k8s.io/topology ] \
  || ks_fail "launcher Job tolerations/schedulingGates: $(jp job/gang-launcher '{.spec.template.spec}')"
[ "$(jp job/gang-launcher '{.spec.template.spec.schedulerName}')" = scheduler-plugins-scheduler ] || ks_fail "launcher schedulerName lost"
for w in gang-worker-0 gang-worker-1; do
  [ "$(jp pod/$w '{.spec.nodeSelector}')" = '{"zone":"z2"}' ] || ks_fail "$w nodeSelector: $(jp pod/$w '{.spec.nodeSelector}')"
done
ks_wait_for '[ "$(kc get pods -l job-name=gang-launcher -o jsonpath="{.items[0].spec.nodeSelector}")" = "{\"zone\":\"z2\"}" ]' 30 \
  || ks_fail "new launcher pod's nodeSelector: $(kc get pods -l job-name=gang-launcher -o jsonpath='{.items[*].spec.nodeSelector}')"
[ "$(jp podgroup/gang '{.spec.minMember}/{.spec.minResources.cpu}')" = 3/2 ] || ks_fail "PodGroup after resume: $(jp podgroup/gang '{.spec}')"
[ "$(cond gang Suspended reason)" = MPIJobResumed ] || ks_fail "Suspended reason: $(cond gang Suspended reason)"
# --- a job created suspended (as Kueue creates them): launcher Job at once, suspended; no
# PodGroup, no workers ---
mpijob_yaml queued --ann mpi-k8s.io/transport=exec --run-policy '{suspend: true}' \
  --spec 'launcherCreationPolicy: WaitForWorkersReady' --workers 1 --command '[mpirun, "true"]' |
  kc create -f - >/dev/null || ks_fail "create suspended MPIJob"
ks_wait_for '[ "$(jp job/queued-launcher "{.spec.suspend}")" = true ]' 30 || ks_fail "no suspended launcher Job for a suspended MPIJob"
[ "$(cond queued Suspended status)" = True ] || ks_fail "queued not Suspended"
kc get podgroup queued >/dev/null 2>&1 && ks_fail "PodGroup for a suspended MPIJob"
[ -z "$(kc get pods -l mpi_job_name=queued -o name)" ] || ks_fail "pods for a suspended MPIJob"
ctl_log a | grep -qE 'segfault|Aborted' && ks_fail "operator crashed"
echo "PASS: gang PodGroup (minResources), podReplacementPolicy Failed, suspend deletes PodGroup+workers, resume syncs nodeSelector/tolerations/schedulingGates"
