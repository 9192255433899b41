/* str.c - strings: formatted allocation, the one error setter, excerpts for one-line messages,
 * string vectors. */
#include "kube/str.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *kube_strdup_printf(const char *fmt, ...)
{
    va_list ap;
    char *s = NULL;
    va_start(ap, fmt);
    int n = vasprintf(&s, fmt, ap);
    va_end(ap);
    return n < 0 ? NULL : s;
}

const char *kube_excerpt(const char *s, char *buf, size_t bufsz)
{
    size_t n = 0;
    for (; s && s[n] && n + 1 < bufsz; n++)
        buf[n] = ((unsigned char)s[n] < 0x20 || s[n] == 0x7f) ? '?' : s[n];
    if (s && s[n] && bufsz >= 4)
        memcpy(buf + bufsz - 4, "...", 3), n = bufsz - 1;
    buf[n] = '\0';
    return buf;
}

int kube_set_err(char **errmsg, const char *fmt, ...)
{
    if (!errmsg)
        return -1;
    va_list ap;
    char *s = NULL;
    va_start(ap, fmt);
    int n = vasprintf(&s, fmt, ap);
    va_end(ap);
    free(*errmsg);
    *errmsg = n < 0 ? NULL : s;
    return -1;
}

void kube_strv_free(char **v)
{
    for (size_t i = 0; v && v[i]; i++)
        free(v[i]);
    free(v);
}
