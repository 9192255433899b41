/* cond.c - condition bookkeeping exactly as upstream's setCondition /
 * filterOutCondition: see cond.h for the rules. */
#include "cond.h"
#include "kube/json.h"
#include "kube/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

json_t *cond_get(const json_t *status, const char *type)
{
    return kube_json_find(kube_json_at(status, "conditions"), "type", type);
}

int cond_true(const json_t *status, const char *type)
{
    const char *s = kube_json_at_str(cond_get(status, type), "status");
    return s && strcmp(s, "True") == 0;
}

int cond_finished(const json_t *status) { return cond_true(status, COND_SUCCEEDED) || cond_true(status, COND_FAILED); }

static int streq(const char *a, const char *b) { return a && b && strcmp(a, b) == 0; }

/* Copies conditions except `type`, dropping the Running/Restarting partner and flipping Running
 * to False when type is a terminal condition. */
static json_t *filter_out(const json_t *conds, const char *type)
{
    json_t *out = json_array();
    int terminal = streq(type, COND_SUCCEEDED) || streq(type, COND_FAILED);
    size_t i;
    json_t *c;
    json_array_foreach(conds, i, c) {
        const char *t = kube_json_at_str(c, "type");
        if (streq(t, type))
            continue;
        if ((streq(type, COND_RESTARTING) && streq(t, COND_RUNNING)) ||
            (streq(type, COND_RUNNING) && streq(t, COND_RESTARTING)))
            continue;
        json_t *copy = json_deep_copy(c);
        if (terminal && streq(t, COND_RUNNING))
            json_object_set_new(copy, "status", json_string("False"));
        json_array_append_new(out, copy);
    }
    return out;
}

int cond_set(json_t *status, const char *type, const char *cstatus, const char *reason, const char *message, const char *now)
{
    if (cond_true(status, COND_FAILED))
        return 0;
    json_t *cur = cond_get(status, type);
    const char *cs = kube_json_at_str(cur, "status");
    if (cur && streq(cs, cstatus) && streq(kube_json_at_str(cur, "reason"), reason))
        return 0;
    const char *ltt = now;
    if (cur && streq(cs, cstatus) && kube_json_at_str(cur, "lastTransitionTime"))
        ltt = kube_json_at_str(cur, "lastTransitionTime");
    json_t *c = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "type", type, "status", cstatus, "reason", reason, "message",
                          message ? message : "", "lastUpdateTime", now, "lastTransitionTime", ltt);
    json_t *conds = filter_out(kube_json_at(status, "conditions"), type);
    json_array_append_new(conds, c);
    json_object_set_new(status, "conditions", conds);
    return 1;
}

void cond_reword(json_t *status, const char *type, const char *message, const char *now)
{
    json_t *cur = cond_get(status, type);
    if (!cur || !message)
        return;
    json_object_set_new(cur, "message", json_string(message));
    json_object_set_new(cur, "lastUpdateTime", json_string(now));
}

char *cond_msg(const char *ns, const char *name, const char *what)
{
    char *s = NULL;
    if (asprintf(&s, "MPIJob %s/%s %s", ns, name, what) < 0)
        return NULL;
    return s;
}
