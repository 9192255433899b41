/* config_int.h - (library-internal) the bearer-token cache behind
 * kube_config_token, and allocation of an empty kube_config. */
#ifndef KUBE_CONFIG_INT_H
#define KUBE_CONFIG_INT_H


#include "kube/config.h"

/* Allocates an empty config with its token state (NULL on allocation failure). */
struct kube_config *kube_config_alloc(void);
/* Creates the token cache (NULL on allocation failure). */
struct kube_token_state *kube_token_state_new(void);
/* Frees the token cache, wiping the cached token. */
void kube_token_state_free(struct kube_token_state *t);

/* Returns the object attached to cfg, making it with make(arg) on first use; it lives until
 * kube_config_free, which calls destroy on it (http.c keeps its CURLOPT_CONNECT_TO list
 * here, so config and token code need no libcurl). NULL when make fails. */
void *kube_config_attach(const struct kube_config *cfg, void *(*make)(const char *), void (*destroy)(void *),
                         const char *arg);

#endif
