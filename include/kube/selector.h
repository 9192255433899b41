/* selector.h - Kubernetes label selectors evaluated locally (informer lookups):
 * "a=b", "a==b", "a!=b", "a in (x,y)", "a notin (x)", "a", "!a", comma = AND. */
#ifndef KUBE_SELECTOR_H
#define KUBE_SELECTOR_H

#include <jansson.h>

struct kube_selector;

/* Parses s (NULL or "" = match everything). NULL with *errmsg naming the position on bad syntax. */
struct kube_selector *kube_selector_parse(const char *s, char **errmsg);
/* Returns 1 when the labels object (may be NULL = no labels) satisfies sel. */
int kube_selector_matches(const struct kube_selector *sel, const json_t *labels);
/* Returns 1 when obj's metadata.labels satisfy sel. */
int kube_selector_matches_obj(const struct kube_selector *sel, const json_t *obj);
/* Frees sel (NULL is fine). */
void kube_selector_free(struct kube_selector *sel);

#endif
