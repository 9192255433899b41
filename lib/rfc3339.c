/* rfc3339.c - RFC 3339 times: formatting epoch milliseconds and parsing them back. */
#include "kube/rfc3339.h"
#include "kube/parse_int.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

char *kube_time_format(int64_t epoch_ms, char *buf, size_t bufsz)
{
    kube_time_format_ms(epoch_ms, buf, bufsz);
    char *dot = strrchr(buf, '.');
    if (dot)
        memcpy(dot, "Z", 2); /* "...:02.123Z" -> "...:02Z" */
    return buf;
}

char *kube_time_format_ms(int64_t epoch_ms, char *buf, size_t bufsz)
{
    time_t secs = (time_t)(epoch_ms / 1000);
    int ms = (int)(epoch_ms % 1000);
    if (ms < 0) {
        ms += 1000;
        secs -= 1;
    }
    struct tm tm;
    if (!gmtime_r(&secs, &tm)) {
        snprintf(buf, bufsz, "?");
        return buf;
    }
    snprintf(buf, bufsz, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
             tm.tm_min, tm.tm_sec, ms);
    return buf;
}

/* n digits at *p (a field of an RFC 3339 time), advancing *p. */
static int parse_digits(const char **p, int n, int *out)
{
    long long v;
    if (kube_parse_int_n(*p, (size_t)n, 0, LLONG_MAX, &v) < 0)
        return -1;
    *p += n;
    *out = (int)v;
    return 0;
}

static int expect(const char **p, char c)
{
    if (**p != c && !(c == 'T' && (**p == 't' || **p == ' ')))
        return -1;
    (*p)++;
    return 0;
}

int kube_time_parse_ms(const char *s, int64_t *epoch_ms)
{
    if (!s)
        return -1;
    const char *p = s;
    int Y, M, D, h, m, sec, ms = 0;
    if (parse_digits(&p, 4, &Y) || expect(&p, '-') || parse_digits(&p, 2, &M) || expect(&p, '-') ||
        parse_digits(&p, 2, &D) || expect(&p, 'T') || parse_digits(&p, 2, &h) || expect(&p, ':') ||
        parse_digits(&p, 2, &m) || expect(&p, ':') || parse_digits(&p, 2, &sec))
        return -1;
    if (*p == '.') {
        p++;
        int nd = 0;
        while (*p >= '0' && *p <= '9') {
            if (nd < 3)
                ms = ms * 10 + (*p - '0');
            nd++;
            p++;
        }
        if (nd == 0)
            return -1;
        for (int i = nd; i < 3; i++)
            ms *= 10;
    }
    int off_min = 0;
    if (*p == 'Z' || *p == 'z') {
        p++;
    } else if (*p == '+' || *p == '-') {
        int sign = *p == '-' ? -1 : 1, oh, om;
        p++;
        if (parse_digits(&p, 2, &oh) || expect(&p, ':') || parse_digits(&p, 2, &om))
            return -1;
        off_min = sign * (oh * 60 + om);
    } else {
        return -1;
    }
    if (*p || M < 1 || M > 12 || D < 1 || D > 31 || h > 23 || m > 59 || sec > 60)
        return -1;
    struct tm tm = { 0 };
    tm.tm_year = Y - 1900;
    tm.tm_mon = M - 1;
    tm.tm_mday = D;
    tm.tm_hour = h;
    tm.tm_min = m;
    tm.tm_sec = sec;
    time_t t = timegm(&tm);
    *epoch_ms = ((int64_t)t - (int64_t)off_min * 60) * 1000 + ms;
    return 0;
}
