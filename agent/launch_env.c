/* launch_env.c - the launch environment `mpi-agent run` sets: the policy's list
 * (mpik8s/launch.c) with what the user already set winning, except a value below a
 * variable's safe minimum (num_concurrent below the worker count deadlocks an attached
 * launch), which is raised with a warning. */
#include "launch_env.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/util.h"

/* The action for var given the user's value cur (NULL: unset). */
static enum agent_env_action action_for(const struct mpik8s_launch_var *var, const char *cur)
{
    if (!cur)
        return AGENT_ENV_SET;
    long long v;
    if (var->min != MPIK8S_LAUNCH_NO_MIN && (kube_parse_int(cur, 0, LLONG_MAX, &v) < 0 || v < var->min))
        return AGENT_ENV_RAISED;
    return AGENT_ENV_KEPT;
}

int agent_env_plan(const struct mpik8s_launch_in *in, agent_getenv_fn get, void *ud, struct agent_env_plan *out)
{
    memset(out, 0, sizeof(*out));
    struct mpik8s_launch_env e;
    if (mpik8s_launch_env(in, &e) < 0)
        return -1;
    int rc = (out->v = calloc(e.n + 1, sizeof(*out->v))) ? 0 : -1;
    for (size_t i = 0; i < e.n && rc == 0; i++) { /* the policy's strings move into the plan */
        const char *cur = get(e.v[i].name, ud);
        enum agent_env_action a = action_for(&e.v[i], cur);
        char *value = a == AGENT_ENV_KEPT ? strdup(cur) : e.v[i].value;
        if (!value) {
            rc = -1;
            break;
        }
        if (value != e.v[i].value)
            free(e.v[i].value);
        out->v[out->n++] = (struct agent_env_item){ e.v[i].name, value, a };
        e.v[i].name = e.v[i].value = NULL;
    }
    mpik8s_launch_env_free(&e);
    if (rc < 0)
        agent_env_plan_free(out);
    return rc;
}

int agent_env_apply(const struct agent_env_plan *p, char **errmsg)
{
    for (size_t i = 0; i < p->n; i++) {
        if (p->v[i].action == AGENT_ENV_KEPT)
            continue;
        if (setenv(p->v[i].name, p->v[i].value, 1) != 0) {
            kube_set_err(errmsg, "setenv %s: %s", p->v[i].name, strerror(errno));
            return -1;
        }
    }
    return 0;
}

void agent_env_plan_free(struct agent_env_plan *p)
{
    for (size_t i = 0; i < p->n; i++) {
        free(p->v[i].name);
        free(p->v[i].value);
    }
    free(p->v);
    p->v = NULL;
    p->n = 0;
}

const char *agent_getenv_process(const char *name, void *ud)
{
    (void)ud;
    return getenv(name);
}
