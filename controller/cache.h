/* cache.h - the controller's own list+watch caches, built for a small memory
 * footprint: each object is pruned to the fields the reconcile reads and kept
 * as compact serialised JSON, grouped by MPIJob ("ns/job"), so one sync reads
 * exactly its job's objects. A background thread lists, watches from the
 * list's resourceVersion (the library's resuming watch), relists on 410 Gone
 * and backs off on errors; every change notifies the group's key. */
#ifndef CONTROLLER_CACHE_H
#define CONTROLLER_CACHE_H

#include <jansson.h>
#include <pthread.h>
#include "kube/client.h"

/* Reduces obj in place to what the controller needs. */
typedef void (*cache_prune_fn)(json_t *obj);
/* Called (on the cache thread, no lock held) with the "ns/job" key of a changed group. */
typedef void (*cache_notify_fn)(const char *key, void *ud);
/* Called (on the cache thread, no lock held) with every listed, added, modified or deleted
 * object as received (before pruning; a deletion's object is its last state). */
typedef void (*cache_observe_fn)(const char *key, const json_t *obj, void *ud);

struct cache;

struct cache_opts {
    const struct kube_resource *res;
    const char *ns;             /* NULL = all namespaces */
    const char *label_selector; /* server-side selector, NULL = all */
    const char *group_label;    /* label naming the job; NULL = the object's own name */
    cache_prune_fn prune;       /* NULL = keep everything */
    cache_notify_fn notify;
    cache_observe_fn observe;   /* NULL = none */
    void *ud;
    /* Held around each list (borrowed; the caches of one controller share one, so that one
     * list reply at a time is in memory); NULL = lists are not serialised. */
    pthread_mutex_t *list_gate;
};

/* Creates a cache (not started) on client c (borrowed). NULL on allocation failure. */
struct cache *cache_new(struct kube_client *c, const struct cache_opts *o);
/* Starts the list+watch thread. 0 ok, -1 on failure. */
int cache_start(struct cache *k);
/* Waits up to timeout_ms for the first complete list; 1 synced, 0 not (yet). */
int cache_wait_synced(struct cache *k, long timeout_ms);
/* The objects of group "ns/job" as a new array of parsed objects (empty array when none). */
json_t *cache_group(struct cache *k, const char *key);
/* Write-through of the operator's own writes, so the next sync does not act on a state the
 * API server already moved past (duplicate creates, status Conflicts, deletes of deleted pods):
 * stores obj (the server's reply to a create/update) unless the list/watch already delivered
 * its resourceVersion (numeric; etcd revisions); the watch's own event for it follows. */
void cache_store(struct cache *k, const json_t *obj);
/* Removes name from group key now (the operator deleted it; the watch's event follows). */
void cache_drop(struct cache *k, const char *key, const char *name);
/* The object name in group key, parsed (new reference) or NULL. */
json_t *cache_get(struct cache *k, const char *key, const char *name);
/* A new array of every group key currently cached. */
json_t *cache_keys(struct cache *k);
/* Number of cached objects. */
size_t cache_count(struct cache *k);
/* The last list/watch error (new string) or NULL. */
char *cache_last_error(struct cache *k);
/* Stops the thread and frees the cache (NULL is fine). */
void cache_free(struct cache *k);

/* Prune functions for the resources the controller watches. */
void prune_pod(json_t *obj);
void prune_job(json_t *obj);
void prune_meta_only(json_t *obj);
/* Slim metadata plus the fields the reconcile compares: data (ConfigMap), rules (Role). */
void prune_compared(json_t *obj);
void prune_generic(json_t *obj);

#endif
