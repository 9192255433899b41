/* mpi.c - the MPI implementations' spellings (include/mpik8s/contract.h): the API's, mpi-agent's
 * --mpi flag's, and every alias mpik8s_mpi_parse reads. */
#include "mpik8s/contract.h"

#include <strings.h>

const char *mpik8s_mpi_name(enum mpik8s_mpi m)
{
    return m == MPIK8S_MPI_INTEL ? "Intel" : m == MPIK8S_MPI_MPICH ? "MPICH" : "OpenMPI";
}

const char *mpik8s_mpi_flag(enum mpik8s_mpi m)
{
    return m == MPIK8S_MPI_INTEL ? "intel" : m == MPIK8S_MPI_MPICH ? "mpich" : "openmpi";
}

int mpik8s_mpi_parse(const char *s, enum mpik8s_mpi *m)
{
    static const char *const names[] = { "openmpi", "openmpi4", "openmpi5", "ompi",  "prte", "prrte",
                                         "intel",   "intelmpi", "mpich",    "hydra", NULL };
    static const enum mpik8s_mpi of[] = { MPIK8S_MPI_OPENMPI, MPIK8S_MPI_OPENMPI, MPIK8S_MPI_OPENMPI, MPIK8S_MPI_OPENMPI,
                                          MPIK8S_MPI_OPENMPI, MPIK8S_MPI_OPENMPI, MPIK8S_MPI_INTEL,   MPIK8S_MPI_INTEL,
                                          MPIK8S_MPI_MPICH,   MPIK8S_MPI_MPICH };
    for (int i = 0; s && names[i]; i++)
        if (strcasecmp(s, names[i]) == 0) {
            *m = of[i];
            return 0;
        }
    return -1;
}
