/* launch_env.h - the environment mpirun (or Hydra) needs to launch through
 * mpi-rsh, per MPI flavour, composed without overriding what the user set,
 * plus the launch settings that are safe with an attached agent. */
#ifndef MPI_AGENT_LAUNCH_ENV_H
#define MPI_AGENT_LAUNCH_ENV_H

#include <stddef.h>
#include "agent.h"

enum agent_env_action {
    AGENT_ENV_SET,    /* the variable was unset: the agent sets it */
    AGENT_ENV_KEPT,   /* the user set it: left alone */
    AGENT_ENV_RAISED, /* the user's value is unsafe (deadlock): raised, with a warning */
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

/* Inputs of the composition. */
struct agent_env_in {
    enum agent_mpi mpi;
    const char *rsh_path;      /* e.g. /opt/kube/mpi-rsh */
    const char *hostfile_path; /* e.g. /etc/mpi/hostfile */
    int workers;               /* number of worker daemons mpirun will start */
    int slots;                 /* slots per worker, 0 = unknown */
};

/* Looks a variable up (getenv-like); ud is passed through. */
typedef const char *(*agent_getenv_fn)(const char *name, void *ud);

/* Composes the plan for in, consulting get for what is already set. 0 ok, -1 on OOM. */
int agent_env_plan(const struct agent_env_in *in, agent_getenv_fn get, void *ud, struct agent_env_plan *out);
/* Applies the plan to the process environment (setenv for SET/RAISED). 0 ok, -1 with *err. */
int agent_env_apply(const struct agent_env_plan *p, char **err);
/* Frees the plan. */
void agent_env_plan_free(struct agent_env_plan *p);
/* getenv adapter for agent_env_plan. */
const char *agent_getenv_process(const char *name, void *ud);

#endif
