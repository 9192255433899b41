/* launch.c - the launch policy (include/mpik8s/launch.h): per MPI implementation, where the rsh
 * agent and the hostfile are, and the settings measured to be safe with an attached agent (no
 * tree spawn, session left attached, num_concurrent >= workers), plus SHELL for Open MPI under a
 * UID with no passwd entry; each by the names its runtime reads (Open MPI 4's ORTE and Open MPI
 * 5's PRRTE differ). docs/controller.md says why each, and where PRRTE's names come from. */
#include "mpik8s/launch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ANY MPIK8S_LAUNCH_NO_MIN

/* One Open MPI runtime's names; NULL where it has no such parameter. */
struct ompi_names {
    const char *agent, *hostfile, *no_tree, *attached, *concurrent, *slots, *fqdn;
};

/* Open MPI 4 (ORTE) */
static const struct ompi_names orte = { MPIK8S_OMPI4_AGENT_VAR,
                                        "OMPI_MCA_orte_default_hostfile",
                                        "OMPI_MCA_plm_rsh_no_tree_spawn",
                                        "OMPI_MCA_orte_leave_session_attached",
                                        "OMPI_MCA_plm_rsh_num_concurrent",
                                        "OMPI_MCA_orte_set_default_slots",
                                        "OMPI_MCA_orte_keep_fqdn_hostnames" };
/* Open MPI 5 (PRRTE 3.0.x: plm component ssh; leaving the session attached is a command-line
 * option only) */
static const struct ompi_names prrte = { MPIK8S_OMPI5_AGENT_VAR,
                                         "PRTE_MCA_prte_default_hostfile",
                                         "PRTE_MCA_plm_ssh_no_tree_spawn",
                                         NULL,
                                         "PRTE_MCA_plm_ssh_num_concurrent",
                                         "PRTE_MCA_prte_set_default_slots",
                                         "PRTE_MCA_prte_keep_fqdn_hostnames" };

/* Appends name = value (both copied). 0 ok, -1 out of memory. */
static int add(struct mpik8s_launch_env *e, const char *name, const char *value, long long min)
{
    struct mpik8s_launch_var *nv = realloc(e->v, (e->n + 1) * sizeof(*nv));
    if (!nv)
        return -1;
    e->v = nv;
    char *n = strdup(name), *v = strdup(value);
    if (!n || !v) {
        free(n);
        free(v);
        return -1;
    }
    e->v[e->n++] = (struct mpik8s_launch_var){ n, v, min };
    return 0;
}

/* One Open MPI version's variables, by its names. */
static int open_mpi(const struct mpik8s_launch_in *in, const struct ompi_names *nm, struct mpik8s_launch_env *e)
{
    /* "AGENT : false": mpirun passes this variable on to every daemon, whose rsh component insists
     * the agent exists even when it never launches (no tree spawn); the agent lives only in the
     * launcher, so a worker's daemon falls back to `false` from PATH. */
    char *agent = NULL, conc[24], slots[24];
    if (asprintf(&agent, "%s : false", in->rsh_path) < 0)
        return -1;
    /* an attached launch deadlocks when fewer than the workers may be launched at once */
    snprintf(conc, sizeof conc, "%lld",
             in->workers > MPIK8S_NUM_CONCURRENT_DEFAULT ? in->workers : MPIK8S_NUM_CONCURRENT_DEFAULT);
    snprintf(slots, sizeof slots, "%lld", in->slots);
    int rc = add(e, nm->agent, agent, ANY) < 0 || add(e, nm->hostfile, in->hostfile_path, ANY) < 0 ||
             add(e, nm->no_tree, "1", ANY) < 0 || (nm->attached && add(e, nm->attached, "1", ANY) < 0) ||
             add(e, nm->concurrent, conc, in->workers) < 0 || (in->slots > 0 && add(e, nm->slots, slots, ANY) < 0) ||
             add(e, nm->fqdn, "true", ANY) < 0;
    free(agent);
    return rc ? -1 : 0;
}

/* MPICH's Hydra (HYDRA_*) or Intel MPI's (I_MPI_HYDRA_*, and I_MPI_PERHOST for the slots). */
static int hydra(const struct mpik8s_launch_in *in, struct mpik8s_launch_env *e)
{
    int intel = in->mpi == MPIK8S_MPI_INTEL;
    char slots[24];
    snprintf(slots, sizeof slots, "%lld", in->slots);
    int rc = add(e, intel ? MPIK8S_INTEL_LAUNCHER_VAR : MPIK8S_MPICH_LAUNCHER_VAR, "rsh", ANY) < 0 ||
             add(e, intel ? MPIK8S_INTEL_AGENT_VAR : MPIK8S_MPICH_AGENT_VAR, in->rsh_path, ANY) < 0 ||
             add(e, intel ? "I_MPI_HYDRA_HOST_FILE" : "HYDRA_HOST_FILE", in->hostfile_path, ANY) < 0 ||
             (intel && in->slots > 0 && add(e, "I_MPI_PERHOST", slots, ANY) < 0);
    return rc ? -1 : 0;
}

int mpik8s_launch_env(const struct mpik8s_launch_in *in, struct mpik8s_launch_env *out)
{
    *out = (struct mpik8s_launch_env){ NULL, 0 };
    int rc;
    if (in->mpi == MPIK8S_MPI_OPENMPI) /* both versions' names: docs/controller.md, "Open MPI 4 and 5" */
        rc =
            open_mpi(in, &orte, out) < 0 || open_mpi(in, &prrte, out) < 0 || add(out, "SHELL", MPIK8S_LAUNCH_SHELL, ANY) < 0;
    else
        rc = hydra(in, out) < 0;
    if (rc)
        mpik8s_launch_env_free(out);
    return rc ? -1 : 0;
}

void mpik8s_launch_env_free(struct mpik8s_launch_env *e)
{
    for (size_t i = 0; i < e->n; i++) {
        free(e->v[i].name);
        free(e->v[i].value);
    }
    free(e->v);
    *e = (struct mpik8s_launch_env){ NULL, 0 };
}
