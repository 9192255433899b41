/* informer_int.h - the informer's state, shared by informer.c (the list+watch
 * thread) and informer_read.c (lookups, write-through); internal to lib/. */
#ifndef KUBE_INFORMER_INT_H
#define KUBE_INFORMER_INT_H

#include <pthread.h>
#include <stdint.h>

#include "informer_store.h"
#include "kube/cancel.h"
#include "kube/informer.h"

struct kube_informer {
    struct kube_client *c;
    struct kube_resource res;
    char *strs[4]; /* owned copies behind res's strings */
    char *ns, *label_selector, *field_selector;
    long page_size, watch_timeout_s;
    kube_informer_index_fn index;
    kube_informer_transform_fn transform;
    int compact;
    pthread_mutex_t *list_gate; /* opts.list_gate (borrowed) or NULL */
    struct kube_informer_handlers h;
    pthread_mutex_t mu;
    pthread_cond_t cond;        /* CLOCK_MONOTONIC; broadcast on every change and on stop */
    struct store *store;        /* guarded by mu */
    unsigned long long seen_rv; /* newest resourceVersion the list/watch delivered */
    uint64_t gen;
    int synced, stopped, started;
    char *last_error;
    struct kube_cancel *cancel;
    pthread_t thr;
};

/* The group of obj (new string) or NULL when it belongs to none / out of memory. */
char *Kube_informer_group_of(const struct kube_informer *inf, const json_t *obj);
/* obj's metadata.resourceVersion as a number, 0 when absent or not numeric. */
unsigned long long Kube_informer_rv_num(const json_t *obj);
/* Stores obj (transformed, serialised when compact) as name in group of s. 0 ok, -1 out of memory
 * (logged). */
int Kube_informer_put(struct kube_informer *inf, struct store *s, const char *group, const char *name, const json_t *obj);
/* The object of entry e as a new reference (parsed again when compact) or NULL. */
json_t *Kube_informer_load(const struct store_entry *e);
/* Counts a change and wakes waiters; mu held. */
void Kube_informer_bump(struct kube_informer *inf);

#endif
