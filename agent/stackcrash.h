/* stackcrash.h - MPI stacks that cannot launch on a launcher pod with IPv6 addresses only, measured
 * on tests/k8s/k8s up --ip-family ipv6 (Debian 13's packages): Open MPI 5.0.7's PRRTE is killed
 * by SIGSEGV 0.1 s after start, before it launches any daemon, whatever the hostfile names
 * (open-mpi/ompi#12771: the PMIx it bundles lost IPv6); MPICH 4.2.1's Hydra proxies cannot
 * connect back to mpiexec ("HYDU_sock_connect ...: unable to get host address for H": they
 * resolve IPv4 only) and mpiexec exits 255. Without a word the job said only "command killed by
 * Segmentation fault" or "command exited 255"; these lines name the stack, what it lacks and
 * what to do instead. */
#ifndef MPI_AGENT_STACKCRASH_H
#define MPI_AGENT_STACKCRASH_H

#include "rshwatch.h"

/* 1 when this host (the launcher pod's network namespace) has an IPv4 address other than
 * loopback, 0 when it has none (IPv6 only), -1 when the interfaces cannot be read. */
int agent_host_has_ipv4(void);
/* The line for launcher stack st killed by signal sig secs after it started, before any mpi-rsh
 * call, on a pod whose addresses are IPv6 only; NULL when st is not Open MPI (new string). */
char *agent_stackcrash_ipv6_line(enum agent_stack st, int sig, double secs);
/* The line for Hydra's mpiexec that failed with code, its output (len bytes) showing a proxy
 * that could not resolve or reach mpiexec's host, on a pod whose addresses are IPv6 only; NULL
 * when the output shows no such thing (new string). */
char *agent_stackcrash_hydra_ipv6_line(const char *out, size_t len, int code);

#endif
