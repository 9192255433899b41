/* config_int.h - (library-internal) the bearer-token cache behind
 * kube_config_token, and allocation of an empty kube_config. */
#ifndef KUBE_CONFIG_INT_H
#define KUBE_CONFIG_INT_H

#include <jansson.h>

#include "kube/config.h"

/* Allocates an empty config with its token state (NULL on allocation failure). */
struct kube_config *Kube_config_alloc(void);
/* Creates the token cache (NULL on allocation failure). */
struct kube_token_state *Kube_token_state_new(void);
/* Frees the token cache, wiping the cached token. */
void Kube_token_state_free(struct kube_token_state *t);

#endif
