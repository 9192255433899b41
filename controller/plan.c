/* plan.c - building and freeing reconcile plans. */
#include "plan.h"
#include "kube/json.h"
#include "kube/util.h"
#include "kind.h"

#include <stdlib.h>
#include <string.h>

static struct action *plan_push(struct plan *p, enum act_kind k, enum res_kind r)
{
    if (p->n == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 8;
        struct action *a = realloc(p->a, cap * sizeof *a);
        if (!a)
            return NULL;
        p->a = a;
        p->cap = cap;
    }
    struct action *a = &p->a[p->n++];
    memset(a, 0, sizeof *a);
    a->kind = k;
    a->res = r;
    return a;
}

void plan_obj(struct plan *p, enum act_kind k, enum res_kind r, json_t *obj)
{
    if (!obj) {
        p->retry = 1;
        return;
    }
    struct action *a = plan_push(p, k, r);
    if (!a) {
        json_decref(obj);
        p->retry = 1;
        return;
    }
    a->obj = obj;
    const char *n = kube_json_at_str(obj, "metadata", "name");
    a->name = n ? strdup(n) : NULL;
}

void plan_named(struct plan *p, enum act_kind k, enum res_kind r, const char *name, json_t *obj)
{
    struct action *a = plan_push(p, k, r);
    if (!a) {
        json_decref(obj);
        p->retry = 1;
        return;
    }
    a->name = strdup(name);
    a->obj = obj;
}

void plan_event(struct plan *p, const char *type, const char *reason, const char *msg)
{
    struct action *a = plan_push(p, ACT_EVENT, RK_EVENT);
    if (!a)
        return;
    a->ev_type = strdup(type);
    a->ev_reason = strdup(reason);
    a->ev_msg = strdup(msg ? msg : "");
}

void plan_restart(struct plan *p, const char *reason)
{
    p->restarted = 1;
    if (!p->restart_reasons)
        p->restart_reasons = json_array();
    if (!p->restart_reasons || json_array_append_new(p->restart_reasons, json_string(reason)) < 0)
        return; /* out of memory: the counter by reason misses one; the status has it */
}

void plan_requeue(struct plan *p, int64_t ms)
{
    if (ms < 1)
        ms = 1;
    if (p->requeue_after_ms <= 0 || ms < p->requeue_after_ms)
        p->requeue_after_ms = ms;
}

void plan_free(struct plan *p)
{
    for (size_t i = 0; i < p->n; i++) {
        free(p->a[i].name);
        json_decref(p->a[i].obj);
        free(p->a[i].ev_type);
        free(p->a[i].ev_reason);
        free(p->a[i].ev_msg);
    }
    free(p->a);
    json_decref(p->new_phases);
    json_decref(p->restart_reasons);
    free(p->launcher_pod);
    memset(p, 0, sizeof *p);
}
