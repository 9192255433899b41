/* objects_podgroup.c - the PodGroup <job> for gang scheduling: Volcano's
 * (scheduling.volcano.sh/v1beta1) or scheduler-plugins' (scheduling.x-k8s.io), with
 * minMember and minResources computed as upstream's operator does. */
#include "objects.h"
#include "kube/json.h"
#include "kube/util.h"
#include "quantity.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct res_sum {
    char *name[32];
    qty_t v[32];
    int binary[32];
    size_t n;
    int bad;
};

/* A quantity as JSON: a string, or a number (an int-or-string written unquoted). */
static const char *qty_text(const json_t *v, char *buf, size_t n)
{
    if (json_is_integer(v))
        snprintf(buf, n, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
    else if (json_is_real(v))
        snprintf(buf, n, "%.9f", json_real_value(v));
    else
        return json_string_value(v);
    return buf;
}

static void sum_add(struct res_sum *r, const char *name, const json_t *val, long long times)
{
    qty_t q;
    int bin;
    char buf[64];
    const char *text = qty_text(val, buf, sizeof buf);
    if (!text || quantity_parse(text, &q, &bin) < 0 || __builtin_mul_overflow(q, (qty_t)times, &q)) {
        r->bad = 1;
        return;
    }
    for (size_t i = 0; i < r->n; i++)
        if (strcmp(r->name[i], name) == 0) {
            r->bad |= __builtin_add_overflow(r->v[i], q, &r->v[i]);
            return;
        }
    if (r->n == sizeof r->name / sizeof r->name[0] || !(r->name[r->n] = strdup(name))) {
        r->bad = 1;
        return;
    }
    r->v[r->n] = q;
    r->binary[r->n++] = bin; /* the first quantity's format is kept, as Quantity.Add does */
}

/* Each container's requests, and its limits where no request is given, times replicas. */
static void sum_template(struct res_sum *r, const json_t *tmpl, long long replicas)
{
    size_t i;
    json_t *c;
    json_array_foreach(kube_json_at(tmpl, "spec", "containers"), i, c) {
        json_t *req = kube_json_at(c, "resources", "requests"), *lim = kube_json_at(c, "resources", "limits");
        const char *k;
        json_t *v;
        json_object_foreach(req, k, v)
            sum_add(r, k, v, replicas);
        json_object_foreach(lim, k, v)
            if (!json_object_get(req, k))
                sum_add(r, k, v, replicas);
    }
}

/* schedulingPolicy.minResources, else the launcher's and the first minMember-1 workers'
 * resources (upstream ranks replicas by PriorityClass value; we read no PriorityClasses,
 * so, as upstream with equal priorities, the workers are the ones cut). NULL: none. */
static json_t *min_resources(const struct mpijob *j, json_t *sp, long long min_member)
{
    json_t *given = kube_json_at(sp, "minResources");
    if (json_is_object(given))
        return json_deep_copy(given);
    if (min_member == 0)
        return NULL;
    long long workers = j->worker.replicas;
    if (1 + workers > min_member)
        workers = min_member - 1;
    struct res_sum r = { 0 };
    sum_template(&r, j->launcher.template, 1);
    sum_template(&r, j->worker.template, workers);
    json_t *out = r.bad ? NULL : json_object();
    for (size_t i = 0; i < r.n; i++) {
        char *t = out ? quantity_format(r.v[i], r.binary[i]) : NULL;
        if (out && (!t || json_object_set_new(out, r.name[i], json_string(t)) < 0)) {
            json_decref(out);
            out = NULL;
        }
        free(t);
        free(r.name[i]);
    }
    return out;
}

static const char *priority_class(const struct mpijob *j)
{
    const char *p = kube_json_at_str(j->launcher.template, "spec", "priorityClassName");
    return p ? p : kube_json_at_str(j->worker.template, "spec", "priorityClassName");
}

json_t *objects_podgroup(const struct mpijob *j, const struct build_opts *o)
{
    if (!o->gang || !*o->gang)
        return NULL;
    json_t *sp = kube_json_at(j->obj, "spec", "runPolicy", "schedulingPolicy");
    long long min = j->worker.replicas + 1;
    json_t *ma = kube_json_at(sp, "minAvailable");
    if (json_is_integer(ma) && json_integer_value(ma) > 0)
        min = json_integer_value(ma);
    int volcano = strcmp(o->gang, "volcano") == 0;
    json_t *spec = json_pack("{s:I}", "minMember", (json_int_t)min);
    const char *pc = kube_json_at_str(sp, "priorityClass");
    if (!pc)
        pc = priority_class(j);
    json_t *mr = min_resources(j, sp, min);
    if (mr && (volcano || json_object_size(mr) > 0))
        json_object_set(spec, "minResources", mr);
    json_decref(mr);
    if (volcano) {
        const char *q = kube_json_at_str(sp, "queue");
        if (!q)
            q = kube_json_at_str(j->obj, "metadata", "annotations", "scheduling.volcano.sh/queue-name");
        if (q)
            kube_json_set_str(spec, "queue", q);
        if (pc)
            kube_json_set_str(spec, "priorityClassName", pc);
    } else {
        json_t *t = kube_json_at(sp, "scheduleTimeoutSeconds");
        json_object_set_new(spec, "scheduleTimeoutSeconds", json_integer(json_is_integer(t) ? json_integer_value(t) : 0));
    }
    return json_pack("{s:s, s:s, s:o, s:o}", "apiVersion",
                     volcano ? "scheduling.volcano.sh/v1beta1" : "scheduling.x-k8s.io/v1alpha1", "kind", "PodGroup",
                     "metadata", objects_meta(j, j->name), "spec", spec);
}
