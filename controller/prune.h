/* prune.h - the informer caches' transforms (prune.c): what each kind's cache keeps. */
#ifndef CONTROLLER_PRUNE_H
#define CONTROLLER_PRUNE_H

#include <jansson.h>

/* Only the fields the reconcile reads. */
void prune_pod(json_t *obj);
void prune_job(json_t *obj);
void prune_meta_only(json_t *obj);
/* Slim metadata plus the fields the reconcile compares: data (ConfigMap), rules (Role). */
void prune_compared(json_t *obj);
void prune_generic(json_t *obj);

#endif
