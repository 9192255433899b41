/* objects_common.c - names, metadata, owner references and labels shared by
 * every object an MPIJob owns. */
#include "objects.h"
#include "kube/json.h"
#include "kube/util.h"
#include "kind.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void objects_build_opts_default(struct build_opts *o)
{
    memset(o, 0, sizeof *o);
    o->agent_image = DEFAULT_AGENT_IMAGE;
}

/* The name of the job's object of kind r, from the table of kinds (kind.c). */
static char *owned_name(const struct mpijob *j, enum res_kind r)
{
    return kind_object_name(r, j->name, j->version == MPIJOB_V1ALPHA2);
}

char *objects_name_config(const struct mpijob *j) { return owned_name(j, RK_CONFIGMAP); }
char *objects_name_service(const struct mpijob *j) { return owned_name(j, RK_SERVICE); }
char *objects_name_launcher(const struct mpijob *j) { return owned_name(j, RK_JOB); }
char *objects_name_secret(const struct mpijob *j) { return owned_name(j, RK_SECRET); }

const char *objects_launcher_user_sa(const struct mpijob *j)
{
    const char *sa = kube_json_at_str(j->launcher.template, "spec", "serviceAccountName");
    return sa && *sa ? sa : NULL;
}

char *objects_name_launcher_sa(const struct mpijob *j)
{
    const char *sa = objects_launcher_user_sa(j);
    return sa ? strdup(sa) : objects_name_launcher(j);
}

char *objects_name_worker(const struct mpijob *j, long long i)
{
    char *s = NULL;
    if (asprintf(&s, "%s-worker-%lld", j->name, i) < 0)
        return NULL;
    return s;
}

json_t *objects_owner_ref(const struct mpijob *j)
{
    return json_pack("{s:s, s:s, s:s, s:s, s:b, s:b}", "apiVersion",
                     j->api_version ? j->api_version : "kubeflow.org/v2beta1", "kind", MPIJOB_KIND, "name", j->name, "uid",
                     j->uid ? j->uid : "", "controller", 1, "blockOwnerDeletion", 1);
}

int objects_owned_by(const json_t *obj, const struct mpijob *j)
{
    json_t *refs = kube_json_at(obj, "metadata", "ownerReferences");
    size_t i;
    json_t *r;
    json_array_foreach(refs, i, r) {
        if (!kube_json_at_bool(r, 0, "controller"))
            continue;
        const char *uid = kube_json_at_str(r, "uid");
        const char *kind = kube_json_at_str(r, "kind");
        return uid && j->uid && kind && strcmp(kind, MPIJOB_KIND) == 0 && strcmp(uid, j->uid) == 0;
    }
    return 0;
}

json_t *objects_meta(const struct mpijob *j, const char *name)
{
    json_t *labels =
        json_pack("{s:s, s:s, s:s}", "app", j->name, LBL_T_OPERATOR, MPIJOB_OPERATOR_NAME, LBL_T_JOB_NAME, j->name);
    return json_pack("{s:s, s:s, s:o, s:[o]}", "name", name, "namespace", j->ns, "labels", labels, "ownerReferences",
                     objects_owner_ref(j));
}

json_t *objects_pod_labels(const struct mpijob *j, const char *role, long long index)
{
    json_t *l = json_pack("{s:s, s:s, s:s, s:s, s:s}", MPIK8S_LABEL_JOB_NAME, j->name, MPIK8S_LABEL_ROLE, role,
                          LBL_T_OPERATOR, MPIJOB_OPERATOR_NAME, LBL_T_JOB_NAME, j->name, LBL_T_ROLE, role);
    if (l && index >= 0) {
        char buf[32];
        snprintf(buf, sizeof buf, "%lld", index);
        json_object_set_new(l, LBL_T_INDEX, json_string(buf));
    }
    return l;
}
