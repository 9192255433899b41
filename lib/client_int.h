/* client_int.h - (library-internal) the client's handle pool and the single
 * HTTP exchange shared by the request verbs and the watch stream. */
#ifndef KUBE_CLIENT_INT_H
#define KUBE_CLIENT_INT_H

#include <curl/curl.h>

#include "kube/client.h"

/* Takes an easy handle from c's pool (or makes one); NULL on allocation failure. */
CURL *kube_client_take_handle(struct kube_client *c);
/* Returns h to c's pool (or cleans it up when the pool is full). */
void kube_client_put_handle(struct kube_client *c, CURL *h);
/* Returns the client's cancel token (may be NULL). */
struct kube_cancel *kube_client_cancel(const struct kube_client *c);
/* Returns the client's options. */
const struct kube_client_opts *kube_client_opts(const struct kube_client *c);
/* Resets h and sets everything for one request to path?query (config, headers incl. content type,
 * user agent, connect timeout). *headers receives the list to free after the transfer. */
int kube_client_prepare(struct kube_client *c, CURL *h, const char *method, const char *url,
                        const char *content_type, struct curl_slist **headers, char **errmsg);
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
