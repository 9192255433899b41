/* error.h - the error model: every API call reports a kube_error whose reason
 * callers switch on; non-2xx replies are decoded from their metav1.Status body. */
#ifndef KUBE_ERROR_H
#define KUBE_ERROR_H

#include <stddef.h>
#include <jansson.h>

enum kube_reason {
    KUBE_OK = 0,
    KUBE_NOT_FOUND,           /* 404 NotFound */
    KUBE_ALREADY_EXISTS,      /* 409 AlreadyExists */
    KUBE_CONFLICT,            /* 409 Conflict (stale resourceVersion) */
    KUBE_FORBIDDEN,           /* 403 */
    KUBE_UNAUTHORIZED,        /* 401 */
    KUBE_GONE,                /* 410 Expired/Gone (watch resourceVersion too old) */
    KUBE_TOO_MANY_REQUESTS,   /* 429 */
    KUBE_INVALID,             /* 422 Invalid */
    KUBE_BAD_REQUEST,         /* 400 */
    KUBE_METHOD_NOT_ALLOWED,  /* 405 */
    KUBE_INTERNAL,            /* 500 InternalError */
    KUBE_TIMEOUT,             /* 504 / Timeout / ServerTimeout, or a client-side request timeout */
    KUBE_SERVICE_UNAVAILABLE, /* 503 */
    KUBE_TRANSPORT,           /* no reply: DNS, connect, TLS, connection reset */
    KUBE_PROTOCOL,            /* reply not understood: malformed JSON, wrong type */
    KUBE_CANCELLED,           /* stopped by the caller (kube_cancel) */
    KUBE_UNKNOWN,             /* any other non-2xx */
};

struct kube_error {
    int http_code; /* HTTP status, 0 when there was no reply */
    enum kube_reason reason;
    char *message;      /* one line, malloc'd (NULL when KUBE_OK) */
    long retry_after_s; /* Retry-After or Status details.retryAfterSeconds, -1 if none */
    int permanent;      /* 1: retrying cannot help (TLS verification, bad CA/cert file, bad URL) */
};

/* Initializer for a struct kube_error on the stack. */
#define KUBE_ERROR_INIT                                                                                                     \
    {                                                                                                                       \
        0, KUBE_OK, NULL, -1, 0                                                                                             \
    }

/* Frees the message and resets e to KUBE_OK. */
void kube_error_clear(struct kube_error *e);
/* Replaces e's content with (http_code, reason, formatted message). */
void kube_error_set(struct kube_error *e, int http_code, enum kube_reason reason, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Decodes a non-2xx reply body (metav1.Status JSON, or anything else) into e; never fails:
 * an undecodable body gives a reason from the HTTP code and a message quoting the body's start. */
void kube_status_decode(const char *body, size_t len, int http_code, struct kube_error *e);
/* Same as kube_status_decode for an already-parsed Status object (e.g. a watch ERROR event). */
void kube_status_decode_json(const json_t *status, int http_code, struct kube_error *e);
/* Maps a Status "reason" string (e.g. "NotFound") to the enum; KUBE_UNKNOWN if not known. */
enum kube_reason kube_reason_from_string(const char *reason);
/* Maps an HTTP status code to the most likely reason (2xx -> KUBE_OK). */
enum kube_reason kube_reason_from_http(int http_code);
/* Returns the reason's name ("NotFound", "Transport", ...); never NULL. */
const char *kube_reason_name(enum kube_reason r);

#endif
