/* sh_quote.c - one word for /bin/sh (include/mpik8s/util.h): the operator's sshd command and the
 * command line mpi-rsh sends into a pod quote with it. */
#include "mpik8s/util.h"

#include <stdlib.h>
#include <string.h>

char *mpik8s_sh_quote(const char *s)
{
    size_t n = 3;
    for (const char *p = s; *p; p++)
        n += *p == '\'' ? 4 : 1;
    char *q = malloc(n), *w = q;
    if (!q)
        return NULL;
    *w++ = '\'';
    for (const char *p = s; *p; p++) {
        if (*p == '\'') {
            memcpy(w, "'\\''", 4);
            w += 4;
        } else {
            *w++ = *p;
        }
    }
    *w++ = '\'';
    *w = 0;
    return q;
}
