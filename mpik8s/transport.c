/* transport.c - the transport's spelling (include/mpik8s/contract.h): "exec" or "ssh", in
 * MPI_JOB_TRANSPORT, the MPIJob annotation and --transport alike. */
#include "mpik8s/contract.h"

#include <string.h>

const char *mpik8s_transport_name(enum mpik8s_transport t) { return t == MPIK8S_TRANSPORT_SSH ? "ssh" : "exec"; }

int mpik8s_transport_parse(const char *s, enum mpik8s_transport *t)
{
    if (s && strcmp(s, "exec") == 0)
        *t = MPIK8S_TRANSPORT_EXEC;
    else if (s && strcmp(s, "ssh") == 0)
        *t = MPIK8S_TRANSPORT_SSH;
    else
        return -1;
    return 0;
}
