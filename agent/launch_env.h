/* launch_env.h - what `mpi-agent run` sets before mpirun: the launch environment of the job's
 * MPI implementation (mpik8s/launch.h, the one the operator writes into the pod spec), without
 * overriding what the user set, except a value that deadlocks the launch. */
#ifndef MPI_AGENT_LAUNCH_ENV_H
#define MPI_AGENT_LAUNCH_ENV_H

#include <stddef.h>
#include "agent.h"
#include "mpik8s/launch.h"

enum agent_env_action {
    AGENT_ENV_SET,    /* the variable was unset: the agent sets it */
    AGENT_ENV_KEPT,   /* the user set it: left alone */
    AGENT_ENV_RAISED, /* the user's value is unsafe (below the variable's min): raised, with a warning */
};

struct agent_env_item {
    char *name;
    char *value; /* the value in effect after applying */
    enum agent_env_action action;
};

struct agent_env_plan {
    struct agent_env_item *v;
    size_t n;
};

/* Looks a variable up (getenv-like); ud is passed through. */
typedef const char *(*agent_getenv_fn)(const char *name, void *ud);

/* Composes the plan for in (mpik8s_launch_env's list, in its order), consulting get for what is
 * already set. 0 ok, -1 on OOM. */
int agent_env_plan(const struct mpik8s_launch_in *in, agent_getenv_fn get, void *ud, struct agent_env_plan *out);
/* Applies the plan to the process environment (setenv for SET/RAISED). 0 ok, -1 with *errmsg. */
int agent_env_apply(const struct agent_env_plan *p, char **errmsg);
/* Frees the plan. */
void agent_env_plan_free(struct agent_env_plan *p);
/* getenv adapter for agent_env_plan. */
const char *agent_getenv_process(const char *name, void *ud);

#endif
