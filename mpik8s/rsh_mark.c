/* rsh_mark.c - mpi-rsh tells mpi-agent that mpirun called it: it creates the file the agent named
 * in $MPI_AGENT_RSH_MARK (include/mpik8s/util.h). libc only, as mpi-rsh-thin may link it. */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "mpik8s/contract.h"
#include "mpik8s/util.h"

int mpik8s_rsh_mark(void)
{
    const char *path = getenv(MPIK8S_RSH_ENV_MARK);
    if (!path || !*path)
        return 0;
    /* no O_TRUNC, no following a planted link: the agent made the directory 0700 for this */
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return -1;
    return close(fd);
}
