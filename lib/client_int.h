/* client_int.h - (library-internal) the client's pool of libcurl handles and the single
 * HTTP exchange shared by the request verbs and the watch stream. */
#ifndef KUBE_CLIENT_INT_H
#define KUBE_CLIENT_INT_H

#include "kube/client.h"

/* One exchange: the request body and where the reply body goes. */
struct kube_call {
    const char *body; /* request body, or NULL */
    size_t body_len;
    /* receives reply body bytes; nonzero stops the transfer (Kube_client_call returns 1) */
    int (*on_body)(const char *data, size_t len, void *ud);
    void *ud;
    long code;        /* out: the HTTP status (0 before the headers arrive) */
    long retry_after; /* out: Retry-After in seconds, -1 none */
    /* private to client.c */
    size_t sent;
    int drop_401;
};

/* Returns the client's cancel token (may be NULL). */
struct kube_cancel *Kube_client_cancel(const struct kube_client *c);
/* Returns the client's options. */
const struct kube_client_opts *kube_client_opts(const struct kube_client *c);
/* One request to path?query through libcurl (a pooled handle keeps its connection alive).
 * A 401 when the credential came from an exec plugin runs the plugin again and asks once
 * more; nothing else is sent twice here: libcurl may not resend a request body on a fresh
 * connection (the caller's retry policy decides). timeout_ms bounds the whole exchange
 * (0 = only the connect timeout, for watches). Returns 0 with the reply's status in
 * call->code, 1 when on_body stopped it, -1 with err (message names the URL) and *unsent:
 * 1 the request never left (any verb may retry), -1 retrying cannot help (err->permanent),
 * 0 otherwise. */
int Kube_client_call(struct kube_client *c, const char *method, const char *path, const char *query,
                     const char *content_type, struct kube_call *call, struct kube_cancel *extra, long timeout_ms,
                     struct kube_error *err, int *unsent);
/* kube_request_raw with an extra cancel token (either token stops it). */
char *Kube_request_raw_cancel(struct kube_client *c, const char *method, const char *path, const char *query,
                              const char *body, size_t body_len, const char *content_type, int idempotent,
                              struct kube_cancel *extra, size_t *len, struct kube_error *err);
/* kube_list_all with an extra cancel token. */
json_t *Kube_list_all_cancel(struct kube_client *c, const struct kube_resource *r, const char *ns,
                             const struct kube_list_opts *opts, struct kube_cancel *extra, struct kube_error *err);
/* The client-side rate limit (qps/burst): waits for a token; 0, or -1 when cancelled. */
int Kube_client_throttle(struct kube_client *c, struct kube_cancel *extra);

#endif
