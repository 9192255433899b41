/* rsh_mark.c - mpi-rsh tells mpi-agent that mpirun called it, and for which host, and when a
 * remote MPI daemon ended with a non-zero code: it appends a line to the file the agent named in
 * $MPI_AGENT_RSH_MARK (include/mpik8s/util.h). libc only, as mpi-rsh-thin may link it. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpik8s/contract.h"
#include "mpik8s/util.h"

/* Appends line (len bytes, '\n'-terminated) to the mark file in one write(2). */
static int append(const char *line, size_t len)
{
    const char *path = getenv(MPIK8S_RSH_ENV_MARK);
    if (!path || !*path)
        return 0;
    /* no O_TRUNC, no following a planted link: the agent made the directory 0700 for this */
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return -1;
    ssize_t w = write(fd, line, len);
    int saved = w < 0 ? errno : EIO;
    if (close(fd) != 0)
        return -1;
    if (w != (ssize_t)len) {
        errno = saved;
        return -1;
    }
    return 0;
}

/* host, or "?" when it is NULL, empty, holds a newline or does not fit a line after room bytes */
static const char *line_host(const char *host, size_t room, size_t *n)
{
    *n = host ? strlen(host) : 0;
    if (*n == 0 || *n + room > MPIK8S_RSH_MARK_LINE_MAX || memchr(host, '\n', *n) || host[0] == MPIK8S_RSH_MARK_EXIT)
        host = "?", *n = 1;
    return host;
}

int mpik8s_rsh_mark(const char *host)
{
    char line[MPIK8S_RSH_MARK_LINE_MAX];
    size_t n;
    host = line_host(host, 1, &n);
    memcpy(line, host, n);
    line[n++] = '\n';
    return append(line, n);
}

int mpik8s_rsh_mark_exit(const char *host, int code)
{
    char line[MPIK8S_RSH_MARK_LINE_MAX];
    size_t n;
    if (code < 1 || code > 255)
        code = 255;
    host = line_host(host, 6, &n); /* "!CCC " and '\n' */
    int k = snprintf(line, sizeof line, "%c%d %.*s\n", MPIK8S_RSH_MARK_EXIT, code, (int)n, host);
    if (k < 0 || (size_t)k >= sizeof line) {
        errno = EOVERFLOW;
        return -1;
    }
    return append(line, (size_t)k);
}
