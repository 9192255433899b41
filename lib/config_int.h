/* config_int.h - (library-internal) the bearer-token cache behind
 * kube_config_token, and allocation of an empty kube_config. */
#ifndef KUBE_CONFIG_INT_H
#define KUBE_CONFIG_INT_H

#include <curl/curl.h>

#include "kube/config.h"

/* Allocates an empty config with its token state (NULL on allocation failure). */
struct kube_config *kube_config_alloc(void);
/* Creates the token cache (NULL on allocation failure). */
struct kube_token_state *kube_token_state_new(void);
/* Frees the token cache, wiping the cached token. */
void kube_token_state_free(struct kube_token_state *t);

/* Returns cfg's CURLOPT_CONNECT_TO list, creating it from entry on first use (kept until
 * kube_config_free); NULL on allocation failure. */
struct curl_slist *kube_config_connect_to(const struct kube_config *cfg, const char *entry);

#endif
