/* objects_rbac.c - the launcher's identity: ServiceAccount, Role and
 * RoleBinding <job>-launcher. The Role grants only what mpi-agent and mpi-rsh
 * need: watching pods, and (exec transport) pods/exec on this job's workers.
 * The binding's subject is the launcher template's serviceAccountName when the
 * user set one (kept on the pod), else our ServiceAccount. */
#include "objects.h"
#include "kube/json.h"
#include "kube/util.h"

#include <stdlib.h>

json_t *obj_service_account(const struct mpijob *j)
{
    char *name = name_launcher(j);
    json_t *o =
        name ? json_pack("{s:s, s:s, s:o}", "apiVersion", "v1", "kind", "ServiceAccount", "metadata", obj_meta(j, name))
             : NULL;
    free(name);
    return o;
}

static json_t *exec_rule(const struct mpijob *j)
{
    json_t *names = json_array();
    for (long long i = 0; names && i < j->worker.replicas; i++) {
        char *w = name_worker(j, i);
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

json_t *obj_role(const struct mpijob *j)
{
    char *name = name_launcher(j);
    json_t *rules =
        json_pack("[{s:[s], s:[s], s:[s,s,s]}]", "apiGroups", "", "resources", "pods", "verbs", "get", "list", "watch");
    if (rules && j->transport == MPIK8S_TRANSPORT_EXEC && j->worker.replicas > 0)
        json_array_append_new(rules, exec_rule(j));
    json_t *o = name && rules ? json_pack("{s:s, s:s, s:o, s:O}", "apiVersion", "rbac.authorization.k8s.io/v1", "kind",
                                          "Role", "metadata", obj_meta(j, name), "rules", rules)
                              : NULL;
    json_decref(rules);
    free(name);
    return o;
}

json_t *obj_role_binding(const struct mpijob *j)
{
    char *name = name_launcher(j), *sa = name_launcher_sa(j);
    json_t *o = name && sa ? json_pack("{s:s, s:s, s:o, s:[{s:s, s:s, s:s}], s:{s:s, s:s, s:s}}", "apiVersion",
                                       "rbac.authorization.k8s.io/v1", "kind", "RoleBinding", "metadata", obj_meta(j, name),
                                       "subjects", "kind", "ServiceAccount", "name", sa, "namespace", j->ns, "roleRef",
                                       "apiGroup", "rbac.authorization.k8s.io", "kind", "Role", "name", name)
                           : NULL;
    free(name);
    free(sa);
    return o;
}
