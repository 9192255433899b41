/* pod_failure_policy.h - the annotation mpi-k8s.io/pod-failure-policy, batch/v1's
 * podFailurePolicy for the launcher Job (docs/controller.md, "When the program fails"). */
#ifndef CONTROLLER_POD_FAILURE_POLICY_H
#define CONTROLLER_POD_FAILURE_POLICY_H

#include <jansson.h>

/* Parses and checks the annotation's text: {"rules": [{action: FailJob|Ignore|Count,
 * onExitCodes: {containerName?, operator: In|NotIn, values: [increasing 0-255]} or
 * onPodConditions: [{type, status?}]}...]} with at most 20 rules, and a launcher whose
 * restartPolicy is Never (a Job applies the policy only then). Returns the object (new
 * reference), or NULL with *errmsg one line naming the annotation, the rule and the field. */
json_t *pod_failure_policy_parse(const char *text, const char *launcher_restart_policy, char **errmsg);

#endif
