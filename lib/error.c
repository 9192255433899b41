/* error.c - the kube_error value and metav1.Status decoding. */
#include "kube/error.h"
#include "kube/util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
    enum kube_reason r;
    const char *name;
} g_reasons[] = {
    { KUBE_OK, "OK" },
    { KUBE_NOT_FOUND, "NotFound" },
    { KUBE_ALREADY_EXISTS, "AlreadyExists" },
    { KUBE_CONFLICT, "Conflict" },
    { KUBE_FORBIDDEN, "Forbidden" },
    { KUBE_UNAUTHORIZED, "Unauthorized" },
    { KUBE_GONE, "Gone" },
    { KUBE_TOO_MANY_REQUESTS, "TooManyRequests" },
    { KUBE_INVALID, "Invalid" },
    { KUBE_BAD_REQUEST, "BadRequest" },
    { KUBE_METHOD_NOT_ALLOWED, "MethodNotAllowed" },
    { KUBE_INTERNAL, "InternalError" },
    { KUBE_TIMEOUT, "Timeout" },
    { KUBE_SERVICE_UNAVAILABLE, "ServiceUnavailable" },
    { KUBE_TRANSPORT, "Transport" },
    { KUBE_PROTOCOL, "Protocol" },
    { KUBE_CANCELLED, "Cancelled" },
    { KUBE_UNKNOWN, "Unknown" },
};

const char *kube_reason_name(enum kube_reason r)
{
    for (size_t i = 0; i < sizeof g_reasons / sizeof g_reasons[0]; i++)
        if (g_reasons[i].r == r)
            return g_reasons[i].name;
    return "Unknown";
}

enum kube_reason kube_reason_from_string(const char *reason)
{
    if (!reason)
        return KUBE_UNKNOWN;
    /* server-side aliases first */
    if (!strcmp(reason, "Expired") || !strcmp(reason, "Gone"))
        return KUBE_GONE;
    if (!strcmp(reason, "ServerTimeout") || !strcmp(reason, "Timeout"))
        return KUBE_TIMEOUT;
    for (size_t i = 1; i < sizeof g_reasons / sizeof g_reasons[0]; i++)
        if (!strcmp(g_reasons[i].name, reason) && g_reasons[i].r != KUBE_TRANSPORT && g_reasons[i].r != KUBE_PROTOCOL &&
            g_reasons[i].r != KUBE_CANCELLED)
            return g_reasons[i].r;
    return KUBE_UNKNOWN;
}

enum kube_reason kube_reason_from_http(int code)
{
    if (code >= 200 && code < 300)
        return KUBE_OK;
    switch (code) {
    case 400: return KUBE_BAD_REQUEST;
    case 401: return KUBE_UNAUTHORIZED;
    case 403: return KUBE_FORBIDDEN;
    case 404: return KUBE_NOT_FOUND;
    case 405: return KUBE_METHOD_NOT_ALLOWED;
    case 408: return KUBE_TIMEOUT;
    case 409: return KUBE_CONFLICT;
    case 410: return KUBE_GONE;
    case 422: return KUBE_INVALID;
    case 429: return KUBE_TOO_MANY_REQUESTS;
    case 500: return KUBE_INTERNAL;
    case 503: return KUBE_SERVICE_UNAVAILABLE;
    case 504: return KUBE_TIMEOUT;
    default: return KUBE_UNKNOWN;
    }
}

void kube_error_clear(struct kube_error *e)
{
    if (!e)
        return;
    free(e->message);
    e->message = NULL;
    e->http_code = 0;
    e->reason = KUBE_OK;
    e->retry_after_s = -1;
    e->permanent = 0;
}

void kube_error_set(struct kube_error *e, int http_code, enum kube_reason reason, const char *fmt, ...)
{
    if (!e)
        return;
    va_list ap;
    char *s = NULL;
    va_start(ap, fmt);
    if (vasprintf(&s, fmt, ap) < 0)
        s = NULL;
    va_end(ap);
    free(e->message);
    e->message = s;
    e->http_code = http_code;
    e->reason = reason;
    e->retry_after_s = -1;
    e->permanent = 0;
}

/* Copies at most max bytes of s for a message, replacing control characters. */
static char *excerpt(const char *s, size_t len, size_t max)
{
    size_t n = len < max ? len : max;
    char *out = malloc(n + 4);
    if (!out)
        return NULL;
    for (size_t i = 0; i < n; i++)
        out[i] = ((unsigned char)s[i] < 0x20 || s[i] == 0x7f) ? ' ' : s[i];
    if (len > max) {
        memcpy(out + n, "...", 4);
    } else {
        out[n] = '\0';
    }
    return out;
}

void kube_status_decode_json(const json_t *st, int http_code, struct kube_error *e)
{
    const char *reason = NULL, *message = NULL;
    int code = http_code;
    long retry = -1;
    if (json_is_object(st)) {
        json_t *v = json_object_get(st, "code");
        if (json_is_integer(v) && json_integer_value(v) >= 100 && json_integer_value(v) <= 599)
            code = (int)json_integer_value(v);
        v = json_object_get(st, "reason");
        if (json_is_string(v))
            reason = json_string_value(v);
        v = json_object_get(st, "message");
        if (json_is_string(v))
            message = json_string_value(v);
        v = json_object_get(json_object_get(st, "details"), "retryAfterSeconds");
        if (json_is_integer(v) && json_integer_value(v) >= 0 && json_integer_value(v) < 86400)
            retry = (long)json_integer_value(v);
    }
    if (http_code == 0)
        http_code = code;
    enum kube_reason r = reason && *reason ? kube_reason_from_string(reason) : KUBE_UNKNOWN;
    if (r == KUBE_UNKNOWN)
        r = kube_reason_from_http(code);
    if (r == KUBE_OK)
        r = KUBE_UNKNOWN; /* a failure Status with a 2xx code */
    char *m = message ? excerpt(message, strlen(message), 1024) : NULL;
    char *rs = reason && *reason ? excerpt(reason, strlen(reason), 64) : NULL;
    kube_error_set(e, http_code, r, "%s (HTTP %d%s%s): %s", kube_reason_name(r), http_code, rs ? ", reason " : "",
                   rs ? rs : "", m && *m ? m : "no message");
    free(rs);
    free(m);
    e->retry_after_s = retry;
}

void kube_status_decode(const char *body, size_t len, int http_code, struct kube_error *e)
{
    json_error_t jerr;
    json_t *st = body && len ? json_loadb(body, len, 0, &jerr) : NULL;
    if (json_is_object(st) && json_is_string(json_object_get(st, "kind")) &&
        !strcmp(json_string_value(json_object_get(st, "kind")), "Status")) {
        kube_status_decode_json(st, http_code, e);
        json_decref(st);
        return;
    }
    json_decref(st);
    enum kube_reason r = kube_reason_from_http(http_code);
    if (r == KUBE_OK)
        r = KUBE_UNKNOWN;
    char *ex = body && len ? excerpt(body, len, 200) : NULL;
    kube_error_set(e, http_code, r, "%s (HTTP %d): %s%s%s", kube_reason_name(r), http_code,
                   ex ? "reply was not a Status: \"" : "empty reply body", ex ? ex : "", ex ? "\"" : "");
    free(ex);
}
