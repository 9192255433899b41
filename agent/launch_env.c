/* launch_env.c - per-flavour launch environment: where the rsh agent and the
 * hostfile are, the settings measured to be safe with an attached agent (no
 * tree spawn, session left attached, num_concurrent >= workers), and SHELL for
 * Open MPI under a UID with no passwd entry. What the user already set wins,
 * except a num_concurrent below the worker count, which deadlocks an attached
 * launch and is raised with a warning. */
#include "launch_env.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/util.h"
#include "mpik8s/contract.h"

/* Default of Open MPI's plm_rsh_num_concurrent. */
#define NUM_CONCURRENT_DEFAULT 128

static int plan_add(struct agent_env_plan *p, const char *name, const char *value, enum agent_env_action a)
{
    struct agent_env_item *nv = realloc(p->v, (p->n + 1) * sizeof(*nv));
    if (!nv)
        return -1;
    p->v = nv;
    char *n = strdup(name), *v = strdup(value);
    if (!n || !v) {
        free(n);
        free(v);
        return -1;
    }
    p->v[p->n++] = (struct agent_env_item){ n, v, a };
    return 0;
}

/* Adds name=value unless the user set name (then records the user's value as kept). */
static int want(struct agent_env_plan *p, agent_getenv_fn get, void *ud, const char *name, const char *value)
{
    const char *cur = get(name, ud);
    if (cur)
        return plan_add(p, name, cur, AGENT_ENV_KEPT);
    return plan_add(p, name, value, AGENT_ENV_SET);
}

/* num_concurrent must be >= workers for an attached launch (else mpirun deadlocks). */
static int want_concurrent(struct agent_env_plan *p, agent_getenv_fn get, void *ud, const char *name, int workers)
{
    int need = workers > NUM_CONCURRENT_DEFAULT ? workers : NUM_CONCURRENT_DEFAULT;
    char buf[24];
    const char *cur = get(name, ud);
    if (cur) {
        char *end = NULL;
        errno = 0;
        long v = strtol(cur, &end, 10);
        if (errno == 0 && end != cur && *end == '\0' && v >= workers)
            return plan_add(p, name, cur, AGENT_ENV_KEPT);
        snprintf(buf, sizeof(buf), "%d", need);
        return plan_add(p, name, buf, AGENT_ENV_RAISED);
    }
    snprintf(buf, sizeof(buf), "%d", need);
    return plan_add(p, name, buf, AGENT_ENV_SET);
}

static int plan_ompi(const struct agent_env_in *in, agent_getenv_fn get, void *ud, struct agent_env_plan *p, const char *pfx,
                     const char *core)
{
    char name[96];
#define W(suffix, val)                                                                                                      \
    do {                                                                                                                    \
        snprintf(name, sizeof(name), "%s%s", pfx, suffix);                                                                  \
        if (want(p, get, ud, name, val) < 0)                                                                                \
            return -1;                                                                                                      \
    } while (0)
    /* "AGENT : false": mpirun passes this variable on to every orted, whose rsh component
     * insists the agent exists even when it never launches (no tree spawn); the agent lives
     * only in the launcher, so a worker's orted falls back to `false` from PATH. */
    char agent[4096];
    snprintf(agent, sizeof(agent), "%s : false", in->rsh_path);
    W("plm_rsh_agent", agent);
    snprintf(name, sizeof(name), "%s%s_default_hostfile", pfx, core);
    if (want(p, get, ud, name, in->hostfile_path) < 0)
        return -1;
    snprintf(name, sizeof(name), "%s%s_keep_fqdn_hostnames", pfx, core);
    if (want(p, get, ud, name, "true") < 0)
        return -1;
    W("plm_rsh_no_tree_spawn", "1");
    /* Open MPI 4 and 5 read the launcher's shell from passwd, else $SHELL (contract.h) */
    if (want(p, get, ud, "SHELL", MPIK8S_LAUNCH_SHELL) < 0)
        return -1;
    snprintf(name, sizeof(name), "%s%s_leave_session_attached", pfx, core);
    if (want(p, get, ud, name, "1") < 0)
        return -1;
    if (in->slots > 0) {
        char s[24];
        snprintf(s, sizeof(s), "%d", in->slots);
        snprintf(name, sizeof(name), "%s%s_set_default_slots", pfx, core);
        if (want(p, get, ud, name, s) < 0)
            return -1;
    }
#undef W
    snprintf(name, sizeof(name), "%splm_rsh_num_concurrent", pfx);
    return want_concurrent(p, get, ud, name, in->workers);
}

static int plan_hydra(const struct agent_env_in *in, agent_getenv_fn get, void *ud, struct agent_env_plan *p)
{
    if (in->mpi == AGENT_MPI_MPICH)
        return want(p, get, ud, "HYDRA_LAUNCHER", "rsh") | want(p, get, ud, "HYDRA_LAUNCHER_EXEC", in->rsh_path) |
               want(p, get, ud, "HYDRA_HOST_FILE", in->hostfile_path);
    int rc = want(p, get, ud, "I_MPI_HYDRA_BOOTSTRAP", "rsh") |
             want(p, get, ud, "I_MPI_HYDRA_BOOTSTRAP_EXEC", in->rsh_path) |
             want(p, get, ud, "I_MPI_HYDRA_HOST_FILE", in->hostfile_path);
    if (rc == 0 && in->slots > 0) {
        char s[24];
        snprintf(s, sizeof(s), "%d", in->slots);
        rc = want(p, get, ud, "I_MPI_PERHOST", s);
    }
    return rc;
}

int agent_env_plan(const struct agent_env_in *in, agent_getenv_fn get, void *ud, struct agent_env_plan *out)
{
    memset(out, 0, sizeof(*out));
    int rc;
    switch (in->mpi) {
    case AGENT_MPI_OPENMPI: rc = plan_ompi(in, get, ud, out, "OMPI_MCA_", "orte"); break;
    case AGENT_MPI_OPENMPI5: rc = plan_ompi(in, get, ud, out, "PRTE_MCA_", "prte"); break;
    default: rc = plan_hydra(in, get, ud, out); break;
    }
    if (rc < 0)
        agent_env_plan_free(out);
    return rc < 0 ? -1 : 0;
}

int agent_env_apply(const struct agent_env_plan *p, char **err)
{
    for (size_t i = 0; i < p->n; i++) {
        if (p->v[i].action == AGENT_ENV_KEPT)
            continue;
        if (setenv(p->v[i].name, p->v[i].value, 1) != 0) {
            kube_set_err(err, "setenv %s: %s", p->v[i].name, strerror(errno));
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
