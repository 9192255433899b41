/* pod_failure_policy.c - the MPIJob annotation mpi-k8s.io/pod-failure-policy: batch/v1's
 * podFailurePolicy (rules of FailJob, Ignore or Count on the launcher's exit codes or pod
 * conditions), checked here with one line naming the rule and field, and handed to the
 * launcher Job, whose real Job controller applies it. mpi-agent run exits with mpirun's
 * status, which is the failed rank's exit code, so a rule on exit codes is a rule on the
 * user's program: retry on 75, fail at once on anything else. */
#include "pod_failure_policy.h"
#include "kube/json.h"

#include <stdio.h>
#include <string.h>

#include "mpik8s/contract.h"
#include "kube/util.h"

#define ANN "metadata.annotations[" MPIK8S_ANN_POD_FAILURE_POLICY "]"
#define MAX_RULES 20 /* as batch/v1 */
#define MAX_EXIT_CODES 255

/* Fails when obj has a key outside the NULL-terminated list. */
static int only_keys(json_t *obj, const char *const *keys, const char *path, char **errmsg)
{
    const char *k;
    json_t *v;
    json_object_foreach(obj, k, v) {
        size_t i = 0;
        while (keys[i] && strcmp(keys[i], k) != 0)
            i++;
        if (!keys[i]) {
            char q[64];
            return kube_set_err(errmsg, ANN ": %s: unknown field \"%s\"", path, kube_excerpt(k, q, sizeof q));
        }
        (void)v;
    }
    return 0;
}

static int check_exit_codes(json_t *oc, const char *path, char **errmsg)
{
    static const char *const keys[] = { "containerName", "operator", "values", NULL };
    const char *op = kube_json_at_str(oc, "operator");
    json_t *vals = kube_json_at(oc, "values");
    if (!json_is_object(oc))
        return kube_set_err(errmsg, ANN ": %s.onExitCodes: expected an object", path);
    if (only_keys(oc, keys, path, errmsg) < 0)
        return -1;
    if (!op || (strcmp(op, "In") != 0 && strcmp(op, "NotIn") != 0))
        return kube_set_err(errmsg, ANN ": %s.onExitCodes.operator: expected \"In\" or \"NotIn\"", path);
    size_t n = json_array_size(vals);
    if (!json_is_array(vals) || n == 0 || n > MAX_EXIT_CODES)
        return kube_set_err(errmsg, ANN ": %s.onExitCodes.values: expected 1 to %d exit codes", path, MAX_EXIT_CODES);
    long long prev = -1;
    for (size_t i = 0; i < n; i++) {
        json_t *v = json_array_get(vals, i);
        long long c = json_is_integer(v) ? json_integer_value(v) : -1;
        if (c < 0 || c > 255 || (c == 0 && strcmp(op, "In") == 0) || c <= prev)
            return kube_set_err(errmsg,
                                ANN ": %s.onExitCodes.values[%zu]: expected exit codes 0-255 in increasing order "
                                    "without repeats (0 not with In)",
                                path, i);
        prev = c;
    }
    json_t *cn = kube_json_at(oc, "containerName");
    if (cn && !json_is_string(cn))
        return kube_set_err(errmsg, ANN ": %s.onExitCodes.containerName: expected a string", path);
    return 0;
}

static int check_conditions(json_t *pcs, const char *path, char **errmsg)
{
    static const char *const keys[] = { "type", "status", NULL };
    size_t i;
    json_t *pc;
    if (!json_is_array(pcs) || json_array_size(pcs) == 0)
        return kube_set_err(errmsg, ANN ": %s.onPodConditions: expected a non-empty list", path);
    json_array_foreach(pcs, i, pc) {
        const char *st = kube_json_at_str(pc, "status");
        if (!json_is_object(pc) || only_keys(pc, keys, path, errmsg) < 0 || !json_string_length(kube_json_at(pc, "type")))
            return errmsg && *errmsg
                       ? -1
                       : kube_set_err(errmsg, ANN ": %s.onPodConditions[%zu]: expected {type, status}", path, i);
        if (st && strcmp(st, "True") != 0 && strcmp(st, "False") != 0 && strcmp(st, "Unknown") != 0)
            return kube_set_err(errmsg, ANN ": %s.onPodConditions[%zu].status: expected True, False or Unknown", path, i);
    }
    return 0;
}

static int check_rule(json_t *r, size_t i, char **errmsg)
{
    static const char *const keys[] = { "action", "onExitCodes", "onPodConditions", NULL };
    char path[32];
    snprintf(path, sizeof path, "rules[%zu]", i);
    if (!json_is_object(r))
        return kube_set_err(errmsg, ANN ": %s: expected an object", path);
    if (only_keys(r, keys, path, errmsg) < 0)
        return -1;
    const char *a = kube_json_at_str(r, "action");
    if (!a || (strcmp(a, "FailJob") != 0 && strcmp(a, "Ignore") != 0 && strcmp(a, "Count") != 0))
        return kube_set_err(errmsg, ANN ": %s.action: expected FailJob, Ignore or Count", path);
    json_t *oc = kube_json_at(r, "onExitCodes"), *pc = kube_json_at(r, "onPodConditions");
    if (!oc == !pc)
        return kube_set_err(errmsg, ANN ": %s: expected exactly one of onExitCodes and onPodConditions", path);
    return oc ? check_exit_codes(oc, path, errmsg) : check_conditions(pc, path, errmsg);
}

json_t *pod_failure_policy_parse(const char *text, const char *launcher_restart_policy, char **errmsg)
{
    json_error_t je;
    json_t *p = json_loads(text, JSON_REJECT_DUPLICATES, &je);
    if (!json_is_object(p)) {
        json_decref(p);
        kube_set_err(errmsg, ANN ": expected a JSON object {\"rules\": [...]} (batch/v1 podFailurePolicy): %s",
                     p ? "not an object" : je.text);
        return NULL;
    }
    static const char *const keys[] = { "rules", NULL };
    json_t *rules = kube_json_at(p, "rules");
    size_t i;
    json_t *r;
    int bad = only_keys(p, keys, "podFailurePolicy", errmsg) < 0;
    if (!bad && (!json_is_array(rules) || json_array_size(rules) > MAX_RULES))
        bad = kube_set_err(errmsg, ANN ": rules: expected a list of at most %d rules", MAX_RULES) < 0;
    json_array_foreach(rules, i, r) {
        if (bad || check_rule(r, i, errmsg) < 0) {
            bad = 1;
            break;
        }
    }
    if (!bad && (!launcher_restart_policy || strcmp(launcher_restart_policy, "Never") != 0))
        bad = kube_set_err(errmsg,
                           ANN ": needs spec.mpiReplicaSpecs.Launcher.restartPolicy Never (a Job applies "
                               "podFailurePolicy only to pods that are not restarted in place), got %s",
                           launcher_restart_policy ? launcher_restart_policy : "none") < 0;
    if (bad) {
        json_decref(p);
        return NULL;
    }
    return p;
}
