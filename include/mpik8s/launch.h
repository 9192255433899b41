/* launch.h - the launch policy, in one place: the environment mpirun (Open MPI 4 and 5) or
 * Hydra (MPICH, Intel MPI) needs to start its daemons through mpi-rsh, as one ordered list of
 * name/value pairs per MPI implementation. The operator writes it into the launcher's pod spec
 * (flavour_env, controller/objects_launcher.c), so launchers without our agent get it too;
 * `mpi-agent run` sets it before mpirun (agent/launch_env.c), the user's values winning. The code
 * is mpik8s/launch.c, in libmpik8s.a, which both programs link (docs/architecture.md, "The contract"). */
#ifndef MPIK8S_LAUNCH_H
#define MPIK8S_LAUNCH_H

#include <stddef.h>

#include "mpik8s/contract.h"

/* What the environment depends on. */
struct mpik8s_launch_in {
    enum mpik8s_mpi mpi;
    const char *rsh_path;      /* MPIK8S_RSH in the pod spec; where mpi-agent found mpi-rsh */
    const char *hostfile_path; /* MPIK8S_HOSTFILE, or the one mpi-agent wrote */
    long long workers;         /* worker daemons mpirun starts (spec's replicas; the hosts found) */
    long long slots;           /* slots per worker; <= 0: unknown, no slot variable */
};

#define MPIK8S_LAUNCH_NO_MIN (-1LL)

/* The variable each stack reads for its rsh agent (mpi-rsh), and for Hydra the one that selects
 * the rsh launcher: what mpi-agent names when no rsh call comes (agent/rshwatch.h). Open MPI 5's
 * PRRTE reads neither OMPI_MCA_plm_rsh_agent nor PRTE_MCA_plm_rsh_agent (docs/controller.md). */
#define MPIK8S_OMPI4_AGENT_VAR "OMPI_MCA_plm_rsh_agent"
#define MPIK8S_OMPI5_AGENT_VAR "PRTE_MCA_plm_ssh_agent"
#define MPIK8S_MPICH_AGENT_VAR "HYDRA_LAUNCHER_EXEC"
#define MPIK8S_MPICH_LAUNCHER_VAR "HYDRA_LAUNCHER"
#define MPIK8S_INTEL_AGENT_VAR "I_MPI_HYDRA_BOOTSTRAP_EXEC"
#define MPIK8S_INTEL_LAUNCHER_VAR "I_MPI_HYDRA_BOOTSTRAP"

/* One variable; name and value are the list's (freed by mpik8s_launch_env_free, which skips one a
 * caller took and set to NULL). min: MPIK8S_LAUNCH_NO_MIN, or the smallest value that is safe (a
 * number below it, or no number, deadlocks the launch: plm_rsh_num_concurrent below the workers). */
struct mpik8s_launch_var {
    char *name;
    char *value;
    long long min;
};

struct mpik8s_launch_env {
    struct mpik8s_launch_var *v;
    size_t n;
};

/* Fills out with in's launch environment, in a fixed order. 0 ok; -1 out of memory (out empty). */
int mpik8s_launch_env(const struct mpik8s_launch_in *in, struct mpik8s_launch_env *out);
/* Frees what mpik8s_launch_env allocated; out is empty after. */
void mpik8s_launch_env_free(struct mpik8s_launch_env *e);

#endif
