/* job_state.c - an MPIJob's one state from its conditions (see job_state.h). */
#include "job_state.h"
#include "cond.h"
#include "kube/json.h"
#include "kube/util.h"

#include <string.h>

static const char *const names[JS__COUNT] = { "pending",    "created",   "blocked",   "running",
                                              "restarting", "suspended", "succeeded", "failed" };

const char *job_state_name(enum job_state s) { return (unsigned)s < JS__COUNT ? names[s] : "?"; }

void job_state_read(const json_t *job, double now_s, struct job_state_info *out)
{
    static const struct {
        const char *type;
        enum job_state s;
    } order[] = { { COND_FAILED, JS_FAILED },   { COND_SUCCEEDED, JS_SUCCEEDED },   { COND_SUSPENDED, JS_SUSPENDED },
                  { COND_BLOCKED, JS_BLOCKED }, { COND_RESTARTING, JS_RESTARTING }, { COND_RUNNING, JS_RUNNING },
                  { COND_CREATED, JS_CREATED } };
    const json_t *status = kube_json_at(job, "status");
    *out = (struct job_state_info){ .state = JS_PENDING };
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
        if (!cond_true(status, order[i].type))
            continue;
        out->state = order[i].s;
        break;
    }
    if (out->state != JS_BLOCKED)
        return;
    const json_t *c = cond_get(status, COND_BLOCKED);
    int64_t ms;
    const char *t = kube_json_at_str(c, "lastTransitionTime");
    out->blocked_since = t && kube_time_parse_ms(t, &ms) == 0 ? (double)ms / 1000.0 : now_s;
    out->reason = kube_json_at_str(c, "reason");
}
