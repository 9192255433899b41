/* launch.c - the launch policy (include/mpik8s/launch.h): per MPI implementation, where the rsh
 * agent and the hostfile are, and the settings measured to be safe with an attached agent (no
 * tree spawn, session left attached, num_concurrent >= workers), plus SHELL for Open MPI under a
 * UID with no passwd entry. docs/controller.md says why each. */
#include "mpik8s/launch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ANY MPIK8S_LAUNCH_NO_MIN

/* Appends the variable named a b c (concatenated) = value. 0 ok, -1 out of memory. */
static int add(struct mpik8s_launch_env *e, const char *a, const char *b, const char *c, const char *value, long long min)
{
    struct mpik8s_launch_var *nv = realloc(e->v, (e->n + 1) * sizeof(*nv));
    if (!nv)
        return -1;
    e->v = nv;
    char *name = NULL, *val = strdup(value);
    if (asprintf(&name, "%s%s%s", a, b, c) < 0)
        name = NULL;
    if (!name || !val) {
        free(name);
        free(val);
        return -1;
    }
    e->v[e->n++] = (struct mpik8s_launch_var){ name, val, min };
    return 0;
}

/* One Open MPI version's names: p OMPI_MCA_ and core orte (4: ORTE), or PRTE_MCA_ and prte (5: PRRTE). */
static int open_mpi(const struct mpik8s_launch_in *in, const char *p, const char *core, struct mpik8s_launch_env *e)
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
    int rc =
        add(e, p, "plm_rsh_agent", "", agent, ANY) < 0 || add(e, p, core, "_default_hostfile", in->hostfile_path, ANY) < 0 ||
        add(e, p, "plm_rsh_no_tree_spawn", "", "1", ANY) < 0 || add(e, p, core, "_leave_session_attached", "1", ANY) < 0 ||
        add(e, p, "plm_rsh_num_concurrent", "", conc, in->workers) < 0 ||
        (in->slots > 0 && add(e, p, core, "_set_default_slots", slots, ANY) < 0) ||
        add(e, p, core, "_keep_fqdn_hostnames", "true", ANY) < 0;
    free(agent);
    return rc ? -1 : 0;
}

/* MPICH's Hydra (HYDRA_*) or Intel MPI's (I_MPI_HYDRA_*, and I_MPI_PERHOST for the slots). */
static int hydra(const struct mpik8s_launch_in *in, struct mpik8s_launch_env *e)
{
    int intel = in->mpi == MPIK8S_MPI_INTEL;
    const char *p = intel ? "I_MPI_HYDRA_" : "HYDRA_", *boot = intel ? "BOOTSTRAP" : "LAUNCHER";
    char slots[24];
    snprintf(slots, sizeof slots, "%lld", in->slots);
    int rc = add(e, p, boot, "", "rsh", ANY) < 0 || add(e, p, boot, "_EXEC", in->rsh_path, ANY) < 0 ||
             add(e, p, "HOST_FILE", "", in->hostfile_path, ANY) < 0 ||
             (intel && in->slots > 0 && add(e, "I_MPI_PERHOST", "", "", slots, ANY) < 0);
    return rc ? -1 : 0;
}

int mpik8s_launch_env(const struct mpik8s_launch_in *in, struct mpik8s_launch_env *out)
{
    *out = (struct mpik8s_launch_env){ NULL, 0 };
    int rc;
    if (in->mpi == MPIK8S_MPI_OPENMPI) /* both versions' names: docs/controller.md, "Open MPI 4 and 5" */
        rc = open_mpi(in, "OMPI_MCA_", "orte", out) < 0 || open_mpi(in, "PRTE_MCA_", "prte", out) < 0 ||
             add(out, "SHELL", "", "", MPIK8S_LAUNCH_SHELL, ANY) < 0;
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
