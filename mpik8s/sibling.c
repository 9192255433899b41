/* sibling.c - where a program finds the programs installed beside it (mpi-agent: mpi-rsh, the
 * stream holder, the bundle; mpi-rsh: mpi-rsh-ssh, mpi-rsh-thin): the one reader of /proc/self/exe
 * (include/mpik8s/util.h). */
#include "mpik8s/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SELF_PATH_MAX (1 << 16) /* longer than any path the kernel gives (PATH_MAX is 4096) */

char *mpik8s_self_dir(void)
{
    for (size_t cap = 256; cap <= SELF_PATH_MAX; cap *= 2) {
        char *buf = malloc(cap);
        if (!buf)
            return NULL;
        ssize_t n = readlink("/proc/self/exe", buf, cap);
        if (n >= 0 && (size_t)n < cap) {
            buf[n] = '\0';
            char *slash = strrchr(buf, '/');
            if (slash) {
                *slash = '\0';
                return buf;
            }
            errno = ENOENT;
        }
        int e = errno;
        free(buf);
        errno = e;
        if (n < 0 || (size_t)n < cap)
            return NULL;
    }
    errno = ENAMETOOLONG;
    return NULL;
}

char *mpik8s_program_at(const char *dir, const char *prog)
{
    char *p = NULL;
    if (!dir || asprintf(&p, "%s/%s", dir, prog) < 0)
        return NULL;
    if (access(p, X_OK) == 0)
        return p;
    free(p);
    return NULL;
}

char *mpik8s_sibling(const char *prog)
{
    char *dir = mpik8s_self_dir();
    char *p = mpik8s_program_at(dir, prog);
    free(dir);
    return p;
}
