/* objects_rbac.c - the launcher's identity: ServiceAccount, Role and
 * RoleBinding <job>-launcher. The Role grants only what mpi-agent and mpi-rsh
 * need: watching pods, listing Events (a preempted worker's preemptor),
 * (exec transport) pods/exec on this job's workers, and
 * the launcher log ConfigMap <job>-log: get and patch on that name, create on
 * configmaps (Kubernetes cannot restrict create by name: docs/controller.md).
 * The binding's subject is the launcher template's serviceAccountName when the
 * user set one (kept on the pod), else our ServiceAccount. */
#include "objects.h"
#include "kube/json.h"
#include "kube/util.h"

#include <stdlib.h>

json_t *objects_service_account(const struct mpijob *j)
{
    char *name = objects_name_launcher(j);
    json_t *o =
        name ? json_pack("{s:s, s:s, s:o}", "apiVersion", "v1", "kind", "ServiceAccount", "metadata", objects_meta(j, name))
             : NULL;
    free(name);
    return o;
}

static json_t *exec_rule(const struct mpijob *j)
{
    json_t *names = json_array();
    for (long long i = 0; names && i < j->worker.replicas; i++) {
        char *w = objects_name_worker(j, i);
        if (!w || json_array_append_new(names, json_string(w)) < 0) {
            free(w);
            json_decref(names);
            return NULL;
        }
        free(w);
    }
    return json_pack("{s:[s], s:[s], s:[s,s], s:o}", "apiGroups", "", "resources", "pods/exec", "verbs", "get", "create",
                     "resourceNames", names);
}

/* The rules for <job>-log (agent/joblog.c): patch and get by name, create (unrestrictable). */
static int log_rules(const struct mpijob *j, json_t *rules)
{
    char *log = kube_strdup_printf("%s-log", j->name);
    json_t *more = log ? json_pack("[{s:[s], s:[s], s:[s,s], s:[s]}, {s:[s], s:[s], s:[s]}]", "apiGroups", "", "resources",
                                   "configmaps", "verbs", "get", "patch", "resourceNames", log, "apiGroups", "", "resources",
                                   "configmaps", "verbs", "create")
                       : NULL;
    int rc = more ? json_array_extend(rules, more) : -1;
    json_decref(more);
    free(log);
    return rc;
}

json_t *objects_role(const struct mpijob *j, int with_log, int with_events)
{
    char *name = objects_name_launcher(j);
    json_t *rules =
        json_pack("[{s:[s], s:[s], s:[s,s,s]}]", "apiGroups", "", "resources", "pods", "verbs", "get", "list", "watch");
    if (rules && j->transport == MPIK8S_TRANSPORT_EXEC && j->worker.replicas > 0)
        json_array_append_new(rules, exec_rule(j));
    /* events list: mpi-agent names a preempted worker's preemptor from the scheduler's Event */
    if (rules && with_events)
        json_array_append_new(rules,
                              json_pack("{s:[s], s:[s], s:[s]}", "apiGroups", "", "resources", "events", "verbs", "list"));
    if (rules && with_log && log_rules(j, rules) < 0) { /* last: the rules before keep their places */
        json_decref(rules);
        rules = NULL;
    }
    json_t *o = name && rules ? json_pack("{s:s, s:s, s:o, s:O}", "apiVersion", "rbac.authorization.k8s.io/v1", "kind",
                                          "Role", "metadata", objects_meta(j, name), "rules", rules)
                              : NULL;
    json_decref(rules);
    free(name);
    return o;
}

json_t *objects_role_binding(const struct mpijob *j)
{
    char *name = objects_name_launcher(j), *sa = objects_name_launcher_sa(j);
    json_t *o = name && sa
                    ? json_pack("{s:s, s:s, s:o, s:[{s:s, s:s, s:s}], s:{s:s, s:s, s:s}}", "apiVersion",
                                "rbac.authorization.k8s.io/v1", "kind", "RoleBinding", "metadata", objects_meta(j, name),
                                "subjects", "kind", "ServiceAccount", "name", sa, "namespace", j->ns, "roleRef", "apiGroup",
                                "rbac.authorization.k8s.io", "kind", "Role", "name", name)
                    : NULL;
    free(name);
    free(sa);
    return o;
}
