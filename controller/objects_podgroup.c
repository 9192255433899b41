/* objects_podgroup.c - the PodGroup <job> for gang scheduling: Volcano's
 * (scheduling.volcano.sh/v1beta1) or scheduler-plugins' (scheduling.x-k8s.io). */
#include "objects.h"
#include "jsonutil.h"

#include <string.h>

static const char *priority_class(const struct mpijob *j)
{
    const char *p = ju_str(j->launcher.template, "spec", "priorityClassName");
    return p ? p : ju_str(j->worker.template, "spec", "priorityClassName");
}

json_t *obj_podgroup(const struct mpijob *j, const struct build_opts *o)
{
    if (!o->gang || !*o->gang)
        return NULL;
    json_t *sp = ju_at(j->obj, "spec", "runPolicy", "schedulingPolicy");
    long long min = j->worker.replicas + 1;
    json_t *ma = json_object_get(sp, "minAvailable");
    if (json_is_integer(ma) && json_integer_value(ma) > 0)
        min = json_integer_value(ma);
    int volcano = strcmp(o->gang, "volcano") == 0;
    json_t *spec = json_pack("{s:I}", "minMember", (json_int_t)min);
    const char *pc = json_string_value(json_object_get(sp, "priorityClass"));
    if (!pc)
        pc = priority_class(j);
    if (volcano) {
        const char *q = json_string_value(json_object_get(sp, "queue"));
        if (!q)
            q = ju_str(j->obj, "metadata", "annotations", "scheduling.volcano.sh/queue-name");
        if (q)
            ju_set_str(spec, "queue", q);
        if (pc)
            ju_set_str(spec, "priorityClassName", pc);
    } else {
        json_t *t = json_object_get(sp, "scheduleTimeoutSeconds");
        if (json_is_integer(t))
            json_object_set(spec, "scheduleTimeoutSeconds", t);
    }
    return json_pack("{s:s, s:s, s:o, s:o}", "apiVersion",
                     volcano ? "scheduling.volcano.sh/v1beta1" : "scheduling.x-k8s.io/v1alpha1",
                     "kind", "PodGroup", "metadata", obj_meta(j, j->name), "spec", spec);
}
