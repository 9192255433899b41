/* client_int.h - (library-internal) the client's connection pool and the single
 * HTTP exchange shared by the request verbs and the watch stream. */
#ifndef KUBE_CLIENT_INT_H
#define KUBE_CLIENT_INT_H

#include "http1.h"
#include "kube/client.h"

/* Returns the client's cancel token (may be NULL). */
struct kube_cancel *kube_client_cancel(const struct kube_client *c);
/* Returns the client's options. */
const struct kube_client_opts *kube_client_opts(const struct kube_client *c);
/* One request to path?query on a pooled keep-alive connection (or a new one); a reused
 * connection that fails before any byte of the reply is retried once on a fresh one.
 * call supplies body/body_len/on_body/ud; head, deadline and cancels are set here.
 * timeout_ms bounds connect + exchange (0 = only the connect timeout, for watches).
 * Returns 0 with the reply in call->p, 1 when on_body stopped it, -1 with err (message
 * names the URL) and *unsent: 1 the request never left (any verb may retry), -1 retrying
 * cannot help (err->permanent), 0 otherwise. The caller frees call->p (http1_parser_free). */
int kube_client_call(struct kube_client *c, const char *method, const char *path, const char *query,
                     const char *content_type, struct http1_call *call, struct kube_cancel *extra,
                     long timeout_ms, struct kube_error *err, int *unsent);
/* kube_request_raw with an extra cancel token (either token stops it). */
char *kube_request_raw_cancel(struct kube_client *c, const char *method, const char *path,
                              const char *query, const char *body, size_t body_len,
                              const char *content_type, int idempotent, struct kube_cancel *extra,
                              size_t *len, struct kube_error *err);
/* kube_list_all with an extra cancel token. */
json_t *kube_list_all_cancel(struct kube_client *c, const struct kube_resource *r, const char *ns,
                             const struct kube_list_opts *opts, struct kube_cancel *extra,
                             struct kube_error *err);

#endif
