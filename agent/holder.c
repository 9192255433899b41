/* holder.c - where `mpi-agent run` finds mpi-rsh-holder and how it wraps the command in it:
 * the holder runs the command (mpirun) with $MPI_RSH_HOLDER set, so each mpi-rsh hands its
 * stream to it, and exits with the command's status once everything is closed. */
#include "holder.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kube/log.h"
#include "kube/util.h"
#include "mpik8s/util.h"

#define HOLDER "mpi-rsh-holder"

/* DEST/mpi-rsh-holder (where mpi-rsh is delivered), else beside this binary; NULL if neither. */
static char *find_holder(const struct agent_opts *o)
{
    char *p = mpik8s_program_at(o->dest, HOLDER);
    return p ? p : mpik8s_sibling(HOLDER);
}

char **agent_holder_wrap(const struct agent_opts *o, char **argv)
{
    const char *env = getenv("MPI_AGENT_STREAM_HOLDER");
    if (o->transport != MPIK8S_TRANSPORT_EXEC || (env && !strcmp(env, "0")))
        return NULL;
    char *holder = find_holder(o);
    if (!holder) {
        KLOG_DEBUG("no %s found: each mpi-rsh holds its own stream", HOLDER);
        return NULL;
    }
    size_t n = 0;
    while (argv[n])
        n++;
    char **w = calloc(n + 3, sizeof *w);
    if (!w) {
        free(holder);
        return NULL;
    }
    w[0] = holder;
    w[1] = "--";
    memcpy(w + 2, argv, n * sizeof *w);
    KLOG_DEBUG("streams held by %s", holder);
    return w;
}
