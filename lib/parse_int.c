/* parse_int.c - the one decimal integer parser: digits only, bounded. */
#include "kube/parse_int.h"

#include <limits.h>
#include <string.h>

int kube_parse_int_n(const char *s, size_t len, long long lo, long long hi, long long *out)
{
    int neg = s && len > 0 && s[0] == '-' && lo < 0;
    unsigned long long v = 0, lim = neg ? (unsigned long long)LLONG_MAX + 1 : (unsigned long long)LLONG_MAX;
    if (!s || len <= (size_t)neg)
        return -1;
    for (size_t i = (size_t)neg; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        unsigned d = (unsigned)(s[i] - '0');
        if (v > (lim - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    long long x = !neg ? (long long)v : v > (unsigned long long)LLONG_MAX ? LLONG_MIN : -(long long)v;
    if (x < lo || x > hi)
        return -1;
    *out = x;
    return 0;
}

int kube_parse_int(const char *s, long long lo, long long hi, long long *out)
{
    return kube_parse_int_n(s, s ? strlen(s) : 0, lo, hi, out);
}
