/* stackcrash.c - naming an MPI launcher's crash on an IPv6-only pod (stackcrash.h). */
#include "stackcrash.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

#include "failure_parse.h"
#include "kube/util.h"

int agent_host_has_ipv4(void)
{
    struct ifaddrs *ifs = NULL;
    if (getifaddrs(&ifs) != 0)
        return -1;
    int found = 0;
    for (struct ifaddrs *i = ifs; i && !found; i = i->ifa_next) {
        if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET)
            continue;
        const struct sockaddr_in *a = (const struct sockaddr_in *)(const void *)i->ifa_addr;
        found = (ntohl(a->sin_addr.s_addr) >> 24) != 127;
    }
    freeifaddrs(ifs);
    return found;
}

char *agent_stackcrash_hydra_ipv6_line(const char *out, size_t len, int code)
{
    if (!agent_text_holds(out, len, "HYDU_sock_connect") || !(agent_text_holds(out, len, "unable to get host address") ||
                                                              agent_text_holds(out, len, "unable to connect to server")))
        return NULL;
    return kube_strdup_printf("MPICH's Hydra (mpiexec exited %d) could not connect its proxies back to mpiexec on a "
                              "launcher pod with IPv6 addresses only: Hydra resolves and dials IPv4 addresses only "
                              "(\"HYDU_sock_connect: unable to get host address\"); run the job with Open MPI 4.1 (IPv6 "
                              "support), or on a cluster whose pods have IPv4 addresses (dual stack)",
                              code);
}

char *agent_stackcrash_ipv6_line(enum agent_stack st, int sig, double secs)
{
    if (st != AGENT_STACK_OMPI5 && st != AGENT_STACK_OPENMPI)
        return NULL;
    char b[32];
    return kube_strdup_printf("%s was killed by %s %.1f s after it started, before it launched any daemon, on a launcher "
                              "pod with IPv6 addresses only: Open MPI 5.0.x (PRRTE) crashes so on an IPv6-only pod "
                              "network (open-mpi/ompi#12771); run the job with Open MPI 4.1 (IPv6 support) or MPICH, or "
                              "on a cluster whose pods have IPv4 addresses (dual stack)",
                              st == AGENT_STACK_OMPI5 ? "Open MPI 5's mpirun (PRRTE)" : "Open MPI's mpirun",
                              agent_signal_name(sig, b, sizeof b), secs);
}
