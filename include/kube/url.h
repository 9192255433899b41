/* url.h - percent-encoding and the query-string builder for API requests. */
#ifndef KUBE_URL_H
#define KUBE_URL_H

#include <stddef.h>

/* Percent-encodes s for use as one path segment or query value (keeps A-Za-z0-9-._~);
 * returns a new string or NULL on allocation failure. */
char *kube_url_escape(const char *s);
/* Decodes %XX escapes (and '+' as space when plus_is_space); returns a new string or NULL if malformed. */
char *kube_url_unescape(const char *s, int plus_is_space);

/* A query string under construction: "k1=v1&k2=v2" (keys may repeat, order kept). */
struct kube_query;

/* Creates an empty query (NULL on allocation failure). */
struct kube_query *kube_query_new(void);
/* Appends key=value (both escaped); a NULL value is skipped. 0 ok, -1 on allocation failure. */
int kube_query_add(struct kube_query *q, const char *key, const char *value);
/* Appends key=<decimal n>. 0 ok, -1 on allocation failure. */
int kube_query_add_int(struct kube_query *q, const char *key, long long n);
/* Returns the encoded query without the leading '?' ("" when empty); owned by q. */
const char *kube_query_str(const struct kube_query *q);
/* Frees q (NULL is fine). */
void kube_query_free(struct kube_query *q);

/* Common list/watch parameters; any field may be 0/NULL (= not sent). */
struct kube_list_opts {
    const char *label_selector;   /* labelSelector, e.g. "app=x,role in (a,b)" */
    const char *field_selector;   /* fieldSelector, e.g. "metadata.name=foo" */
    long limit;                   /* limit (page size); 0 = server default */
    const char *continue_token;   /* continue */
    const char *resource_version; /* resourceVersion */
    long timeout_seconds;         /* timeoutSeconds (watch) */
    int allow_bookmarks;          /* allowWatchBookmarks=true (watch) */
};

/* Appends opts to q (labelSelector, fieldSelector, limit, continue, resourceVersion,
 * timeoutSeconds, allowWatchBookmarks). 0 ok, -1 on allocation failure. */
int kube_query_add_list_opts(struct kube_query *q, const struct kube_list_opts *opts);

#endif
