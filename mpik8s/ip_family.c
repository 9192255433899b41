/* ip_family.c - the IP family's spelling (include/mpik8s/contract.h): "IPv4" or "IPv6", as a
 * Service's spec.ipFamilies writes it, in the MPIJob annotation and MPI_JOB_IP_FAMILY alike. */
#include "mpik8s/contract.h"

#include <string.h>

int mpik8s_ip_family_parse(const char *s)
{
    if (s && strcmp(s, "IPv4") == 0)
        return 4;
    if (s && strcmp(s, "IPv6") == 0)
        return 6;
    return 0;
}
