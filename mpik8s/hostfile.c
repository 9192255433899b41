/* hostfile.c - the hostfile line (include/mpik8s/contract.h): the slots a worker offers and the
 * line each MPI implementation reads, as the operator's ConfigMap and the agent's hostfile write it. */
#include "mpik8s/contract.h"

long long mpik8s_slots(long long slots) { return slots > 0 ? slots : MPIK8S_DEFAULT_SLOTS; }

enum mpik8s_hostfile_syntax mpik8s_hostfile_syntax_for(enum mpik8s_mpi m)
{
    return m == MPIK8S_MPI_OPENMPI ? MPIK8S_HOSTFILE_SLOTS_EQ : MPIK8S_HOSTFILE_COLON;
}

int mpik8s_hostfile_line(FILE *f, enum mpik8s_hostfile_syntax syn, const char *host, long long slots)
{
    if (slots <= 0)
        return fprintf(f, "%s\n", host);
    return fprintf(f, syn == MPIK8S_HOSTFILE_SLOTS_EQ ? "%s slots=%lld\n" : "%s:%lld\n", host, slots);
}
