/* client.h - the Kubernetes API client: verbs over libcurl (OpenSSL; proxies as
 * client-go picks them; exec credential plugins; impersonation) with JSON bodies,
 * Status-decoded errors, bounded retries, timeouts and a client-side rate limit.
 *
 * Threads: a kube_client may be shared by any number of threads. It keeps a
 * small pool of idle libcurl handles, each keeping its connection alive; a call
 * borrows one for its duration, so N concurrent callers use N connections.
 * kube_client_free must run after every other thread stopped using it. */
#ifndef KUBE_CLIENT_H
#define KUBE_CLIENT_H

#include <stddef.h>
#include <jansson.h>
#include "kube/config.h"
#include "kube/error.h"
#include "kube/url.h"
#include "kube/resource.h"
#include "kube/backoff.h"
#include "kube/cancel.h"

struct kube_client;

struct kube_client_opts {
    long connect_timeout_ms;        /* default 5000 */
    long request_timeout_ms;        /* whole request incl. body, default 30000 (not for watches) */
    struct kube_retry_policy retry; /* max_attempts 0 = defaults; 1 = never retry */
    const char *user_agent;         /* default "mpi-k8s/0.1" */
    double qps;                     /* requests per second (watches aside); 0 = no limit */
    int burst;                      /* requests allowed at once above qps (default 1 with qps) */
};

/* Fills o with the defaults. */
void kube_client_opts_default(struct kube_client_opts *o);
/* Creates a client that takes ownership of cfg (also on failure); opts NULL = defaults.
 * Validates the config (CA/cert files readable) but does not contact the server. */
struct kube_client *kube_client_new(struct kube_config *cfg, const struct kube_client_opts *opts, char **errmsg);
/* Returns the client's config (borrowed). */
const struct kube_config *kube_client_config(const struct kube_client *c);
/* Returns the config's default namespace (borrowed, never NULL). */
const char *kube_client_namespace(const struct kube_client *c);
/* Makes every request, retry sleep and watch on c stop with KUBE_CANCELLED once cancel triggers
 * (borrowed: must outlive c's use). */
void kube_client_set_cancel(struct kube_client *c, struct kube_cancel *cancel);
/* Calls fn(ud, method, code) after each HTTP exchange c makes (each retry and watch too; code
 * 0 when no reply came: a transport error or timeout; cancelled requests not counted), from
 * the thread that made it: fn must be thread-safe. Set it before c is shared; fn NULL: none. */
void kube_client_on_request(struct kube_client *c, void (*fn)(void *ud, const char *method, long code), void *ud);
/* Frees the client, its idle connections and its config (NULL is fine). */
void kube_client_free(struct kube_client *c);

/* Generic request. path starts with '/', query without '?' (NULL/"" = none), body may be NULL.
 * Returns the raw reply body for 2xx (NUL-terminated, *len set) or NULL with err filled
 * (Status-decoded for non-2xx). Retries per policy; idempotent selects the transport/5xx retries. */
char *kube_request_raw(struct kube_client *c, const char *method, const char *path, const char *query, const char *body,
                       size_t body_len, const char *content_type, int idempotent, size_t *len, struct kube_error *err);
/* Like kube_request_raw with JSON in and out (body NULL = none, content_type NULL = application/json;
 * idempotent inferred from method: GET/HEAD/PUT/DELETE). Returns a new reference or NULL + err. */
json_t *kube_request(struct kube_client *c, const char *method, const char *path, const char *query, const json_t *body,
                     const char *content_type, struct kube_error *err);

/* GET one object. New reference or NULL + err (KUBE_NOT_FOUND when absent). */
json_t *kube_get(struct kube_client *c, const struct kube_resource *r, const char *ns, const char *name,
                 struct kube_error *err);
/* GET the status subresource of one object. */
json_t *kube_get_status(struct kube_client *c, const struct kube_resource *r, const char *ns, const char *name,
                        struct kube_error *err);
/* GET one page of a list (ns NULL = all namespaces); the List object incl. metadata.continue. */
json_t *kube_list(struct kube_client *c, const struct kube_resource *r, const char *ns, const struct kube_list_opts *opts,
                  struct kube_error *err);
/* Like kube_list, also stopping with KUBE_CANCELLED once extra (may be NULL) triggers. */
json_t *kube_list_cancel(struct kube_client *c, const struct kube_resource *r, const char *ns,
                         const struct kube_list_opts *opts, struct kube_cancel *extra, struct kube_error *err);
/* Lists every page (following continue; opts->limit is the page size) into one List object whose
 * metadata.resourceVersion is the first page's (the snapshot the pages belong to). */
json_t *kube_list_all(struct kube_client *c, const struct kube_resource *r, const char *ns,
                      const struct kube_list_opts *opts, struct kube_error *err);
/* POST obj to the collection; returns the created object. AlreadyExists -> KUBE_ALREADY_EXISTS. */
json_t *kube_create(struct kube_client *c, const struct kube_resource *r, const char *ns, const json_t *obj,
                    struct kube_error *err);
/* PUT obj (name NULL = obj's metadata.name); a stale metadata.resourceVersion -> KUBE_CONFLICT. */
json_t *kube_update(struct kube_client *c, const struct kube_resource *r, const char *ns, const char *name,
                    const json_t *obj, struct kube_error *err);
/* PUT obj to the status subresource. */
json_t *kube_update_status(struct kube_client *c, const struct kube_resource *r, const char *ns, const char *name,
                           const json_t *obj, struct kube_error *err);

enum kube_patch_type {
    KUBE_PATCH_MERGE,     /* application/merge-patch+json (RFC 7386) */
    KUBE_PATCH_JSON,      /* application/json-patch+json (RFC 6902), patch is an array */
    KUBE_PATCH_STRATEGIC, /* application/strategic-merge-patch+json */
};
/* PATCH one object (subresource NULL or "status"); returns the patched object. */
json_t *kube_patch(struct kube_client *c, const struct kube_resource *r, const char *ns, const char *name,
                   const char *subresource, enum kube_patch_type type, const json_t *patch, struct kube_error *err);

struct kube_delete_opts {
    const char *propagation_policy; /* "Foreground", "Background", "Orphan" or NULL */
    int set_grace_period;           /* nonzero: send grace_period_seconds (0 = delete now) */
    long grace_period_seconds;
    const char *precondition_uid; /* preconditions.uid or NULL */
};
/* DELETE one object (opts NULL = defaults); returns the server's reply (object or Status). */
json_t *kube_delete(struct kube_client *c, const struct kube_resource *r, const char *ns, const char *name,
                    const struct kube_delete_opts *opts, struct kube_error *err);

#endif
