/* rsh_mark.c - mpi-rsh tells mpi-agent that mpirun called it, and for which host: it appends a
 * line to the file the agent named in $MPI_AGENT_RSH_MARK (include/mpik8s/util.h). libc only, as
 * mpi-rsh-thin may link it. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpik8s/contract.h"
#include "mpik8s/util.h"

int mpik8s_rsh_mark(const char *host)
{
    const char *path = getenv(MPIK8S_RSH_ENV_MARK);
    if (!path || !*path)
        return 0;
    /* no O_TRUNC, no following a planted link: the agent made the directory 0700 for this */
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return -1;
    char line[MPIK8S_RSH_MARK_LINE_MAX];
    size_t n = host ? strlen(host) : 0;
    if (n == 0 || n + 1 > sizeof(line) || memchr(host, '\n', n))
        host = "?", n = 1;
    memcpy(line, host, n);
    line[n++] = '\n';
    ssize_t w = write(fd, line, n);
    int saved = w < 0 ? errno : EIO;
    if (close(fd) != 0)
        return -1;
    if (w != (ssize_t)n) {
        errno = saved;
        return -1;
    }
    return 0;
}
