/* jsonutil.c - typed field reads with field-naming errors, nested lookups,
 * object building and RFC 3339 timestamps for the controller. */
#include "jsonutil.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int ju_err(char **err, const char *fmt, ...)
{
    if (!err)
        return -1;
    free(*err);
    *err = NULL;
    va_list ap;
    va_start(ap, fmt);
    if (vasprintf(err, fmt, ap) < 0)
        *err = NULL;
    va_end(ap);
    return -1;
}

static const char *type_name(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER: return "an integer";
    case JSON_REAL: return "a number with a fraction";
    case JSON_TRUE:
    case JSON_FALSE: return "a boolean";
    default: return "null";
    }
}

int ju_type_err(char **err, const char *path, const char *what, const json_t *v)
{
    return ju_err(err, "%s: expected %s, got %s", path, what, v ? type_name(v) : "nothing");
}

int ju_type_errk(char **err, const char *path, const char *key, const char *what, const json_t *v)
{
    return ju_err(err, "%s.%s: expected %s, got %s", path, key, what, v ? type_name(v) : "nothing");
}

int ju_get_int(const json_t *o, const char *key, const char *path, long long *out, char **err)
{
    json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v))
        return 0;
    if (json_is_real(v)) {
        /* only whole numbers inside long long's range convert (a cast outside it is UB) */
        double d = json_real_value(v);
        if (d >= -9223372036854775808.0 && d < 9223372036854775808.0 && d == (double)(long long)d) {
            *out = (long long)d;
            return 0;
        }
    }
    if (!json_is_integer(v))
        return ju_type_errk(err, path, key, "an integer", v);
    *out = json_integer_value(v);
    return 0;
}

int ju_get_bool(const json_t *o, const char *key, const char *path, int *out, char **err)
{
    json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_boolean(v))
        return ju_type_errk(err, path, key, "a boolean", v);
    *out = json_is_true(v);
    return 0;
}

int ju_get_str(const json_t *o, const char *key, const char *path, const char **out, char **err)
{
    json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_string(v))
        return ju_type_errk(err, path, key, "a string", v);
    *out = json_string_value(v);
    return 0;
}

json_t *ju_at_(const json_t *o, ...)
{
    va_list ap;
    va_start(ap, o);
    const char *k;
    json_t *cur = (json_t *)o;
    while (cur && (k = va_arg(ap, const char *)) != NULL)
        cur = json_object_get(cur, k);
    va_end(ap);
    return cur;
}

json_t *ju_obj(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    if (json_is_object(v))
        return v;
    v = json_object();
    if (json_object_set_new(o, key, v) < 0)
        return NULL;
    return v;
}

json_t *ju_arr(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    if (json_is_array(v))
        return v;
    v = json_array();
    if (json_object_set_new(o, key, v) < 0)
        return NULL;
    return v;
}

void ju_set_str(json_t *o, const char *key, const char *s)
{
    json_object_set_new(o, key, json_string(s ? s : ""));
}

int64_t ju_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

char *ju_time_format(int64_t ms, char *buf, size_t n)
{
    time_t s = (time_t)(ms / 1000);
    struct tm tm;
    gmtime_r(&s, &tm);
    strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

char *ju_time_format_ms(int64_t ms, char *buf, size_t n)
{
    time_t s = (time_t)(ms / 1000);
    struct tm tm;
    gmtime_r(&s, &tm);
    char tmp[32];
    strftime(tmp, sizeof tmp, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf, n, "%s.%03dZ", tmp, (int)(ms % 1000));
    return buf;
}

int ju_time_parse(const char *s, int64_t *ms)
{
    if (!s)
        return -1;
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    const char *p = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
    if (!p)
        return -1;
    int frac_ms = 0;
    if (*p == '.') {
        int digits = 0;
        p++;
        while (*p >= '0' && *p <= '9') {
            if (digits < 3) {
                frac_ms = frac_ms * 10 + (*p - '0');
                digits++;
            }
            p++;
        }
        if (digits == 0)
            return -1;
        while (digits++ < 3)
            frac_ms *= 10;
    }
    long off = 0;
    if (*p == 'Z' || *p == 'z') {
        p++;
    } else if (*p == '+' || *p == '-') {
        int hh, mm;
        if (sscanf(p + 1, "%2d:%2d", &hh, &mm) != 2)
            return -1;
        off = (hh * 3600L + mm * 60L) * (*p == '-' ? -1 : 1);
        p += 6;
    } else {
        return -1;
    }
    if (*p)
        return -1;
    time_t t = timegm(&tm);
    *ms = ((int64_t)t - off) * 1000 + frac_ms;
    return 0;
}

int ju_equal(const json_t *a, const json_t *b)
{
    if (!a || !b)
        return a == b;
    return json_equal((json_t *)a, (json_t *)b);
}

char *ju_base64(const char *s)
{
    static const char tbl[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t n = strlen(s);
    char *out = malloc(4 * ((n + 2) / 3) + 1);
    if (!out)
        return NULL;
    const unsigned char *p = (const unsigned char *)s;
    size_t o = 0;
    for (size_t i = 0; i < n; i += 3) {
        unsigned v = (unsigned)p[i] << 16;
        if (i + 1 < n)
            v |= (unsigned)p[i + 1] << 8;
        if (i + 2 < n)
            v |= p[i + 2];
        out[o++] = tbl[(v >> 18) & 63];
        out[o++] = tbl[(v >> 12) & 63];
        out[o++] = i + 1 < n ? tbl[(v >> 6) & 63] : '=';
        out[o++] = i + 2 < n ? tbl[v & 63] : '=';
    }
    out[o] = 0;
    return out;
}
