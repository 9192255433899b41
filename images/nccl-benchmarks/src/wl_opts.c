/* wl_opts.c - command-line parsing for cnn-bench and allreduce-bench (see wl_opts.h). */

#include "wl_opts.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int wl_parse_size(const char *s, size_t *out)
{
    char *end = NULL;
    errno = 0;
    if (!s || !*s || *s == '-')
        return -1;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s)
        return -1;
    unsigned long long mul = 1;
    if (*end) {
        switch (*end) {
        case 'k':
        case 'K': mul = 1ULL << 10; break;
        case 'm':
        case 'M': mul = 1ULL << 20; break;
        case 'g':
        case 'G': mul = 1ULL << 30; break;
        default: return -1;
        }
        end++;
        if (*end == 'B' || *end == 'b')
            end++;
        if (*end)
            return -1;
    }
    if (v > (unsigned long long)SIZE_MAX / mul)
        return -1;
    *out = (size_t)(v * mul);
    return 0;
}

static int in_choices(const char *choices, const char *v)
{
    size_t len = strlen(v);
    const char *p = choices;
    while (*p) {
        const char *bar = strchr(p, '|');
        size_t n = bar ? (size_t)(bar - p) : strlen(p);
        if (n == len && strncmp(p, v, n) == 0)
            return 1;
        if (!bar)
            break;
        p = bar + 1;
    }
    return 0;
}

static int set_value(const struct wl_opt *o, const char *v, char **err)
{
    char *end = NULL;
    errno = 0;
    switch (o->type) {
    case WL_OPT_LONG: {
        long x = strtol(v, &end, 10);
        if (errno || end == v || *end || x < o->min || x > o->max)
            goto bad;
        *(long *)o->ptr = x;
        return 0;
    }
    case WL_OPT_DOUBLE: {
        double x = strtod(v, &end);
        if (errno || end == v || *end || !isfinite(x) || x < o->min || x > o->max)
            goto bad;
        *(double *)o->ptr = x;
        return 0;
    }
    case WL_OPT_SIZE: {
        size_t x = 0;
        if (wl_parse_size(v, &x) != 0 || (double)x < o->min || (double)x > o->max)
            goto bad;
        *(size_t *)o->ptr = x;
        return 0;
    }
    case WL_OPT_STRING:
        if (o->choices && !in_choices(o->choices, v)) {
            if (asprintf(err, "--%s: expected one of %s, got '%s'", o->name, o->choices, v) < 0)
                *err = NULL;
            return -1;
        }
        *(const char **)o->ptr = v;
        return 0;
    case WL_OPT_BOOL:
        if (!strcasecmp(v, "true") || !strcmp(v, "1"))
            *(int *)o->ptr = 1;
        else if (!strcasecmp(v, "false") || !strcmp(v, "0"))
            *(int *)o->ptr = 0;
        else
            goto bad;
        return 0;
    case WL_OPT_FLAG: break;
    }
bad:
    if (o->type == WL_OPT_BOOL) {
        if (asprintf(err, "--%s: expected true or false, got '%s'", o->name, v) < 0)
            *err = NULL;
    } else if (asprintf(err, "--%s: expected %s between %g and %g, got '%s'", o->name,
                        o->type == WL_OPT_LONG   ? "an integer"
                        : o->type == WL_OPT_SIZE ? "a size in bytes (suffix K, M or G)"
                                                 : "a number",
                        o->min, o->max, v) < 0) {
        *err = NULL;
    }
    return -1;
}

static const struct wl_opt *find_long(const struct wl_opt *opts, int n, const char *name, size_t len)
{
    for (int i = 0; i < n; i++)
        if (strlen(opts[i].name) == len && strncmp(opts[i].name, name, len) == 0)
            return &opts[i];
    return NULL;
}

static const struct wl_opt *find_short(const struct wl_opt *opts, int n, char c)
{
    for (int i = 0; i < n; i++)
        if (opts[i].short_name && opts[i].short_name == c)
            return &opts[i];
    return NULL;
}

static int fail(char **err, const char *fmt, const char *arg)
{
    if (asprintf(err, fmt, arg) < 0)
        *err = NULL;
    return -1;
}

int wl_opts_parse(const struct wl_opt *opts, int n, int argc, char **argv, char **err)
{
    *err = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const struct wl_opt *o = NULL;
        const char *val = NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h"))
            return 1;
        if (a[0] == '-' && a[1] == '-') {
            const char *eq = strchr(a + 2, '=');
            size_t len = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
            o = find_long(opts, n, a + 2, len);
            if (!o)
                return fail(err, "unknown option '%s' (see --help)", a);
            val = eq ? eq + 1 : NULL;
        } else if (a[0] == '-' && a[1] && a[1] != '-') {
            o = find_short(opts, n, a[1]);
            if (!o)
                return fail(err, "unknown option '%s' (see --help)", a);
            val = a[2] ? a + 2 : NULL;
        } else {
            return fail(err, "unexpected argument '%s' (see --help)", a);
        }
        if (o->type == WL_OPT_FLAG) {
            if (val)
                return fail(err, "option '%s' takes no value", a);
            *(int *)o->ptr = o->flag_value;
            continue;
        }
        if (!val && o->type == WL_OPT_BOOL) {
            *(int *)o->ptr = 1;
            continue;
        }
        if (!val) {
            if (i + 1 >= argc)
                return fail(err, "option '%s' needs a value", a);
            val = argv[++i];
        }
        if (set_value(o, val, err) != 0)
            return -1;
    }
    return 0;
}

void wl_opts_usage(const char *prog, const char *summary, const struct wl_opt *opts, int n)
{
    printf("usage: %s [options]\n%s\n\noptions:\n", prog, summary);
    for (int i = 0; i < n; i++) {
        char name[64];
        if (opts[i].short_name)
            snprintf(name, sizeof(name), "-%c, --%s", opts[i].short_name, opts[i].name);
        else
            snprintf(name, sizeof(name), "    --%s", opts[i].name);
        printf("  %-28s %s\n", name, opts[i].help);
    }
    printf("  %-28s %s\n", "-h, --help", "show this help");
}
