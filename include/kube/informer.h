/* informer.h - a list+watch cache of one resource type (optionally one namespace
 * and a label/field selector), kept current by a background thread: lists page
 * by page (one list at a time per process), watches from the list's
 * resourceVersion (the resuming watch of watch.h: bookmarks, reconnects),
 * relists on 410 Gone and backs off on errors. Lookups are answered from
 * memory and are thread-safe. The operator's caches and the agent's pod watch
 * are both informers.
 *
 * Objects are grouped: by namespace ("" when cluster-scoped), or by what an index
 * function says (e.g. "ns/job" from a label), so a caller reads one group at a
 * time. A transform (e.g. pruning fields never read, as client-go's SetTransform)
 * runs on each object before it is stored. A compact informer keeps its objects
 * as compact JSON text (parsed again on each lookup): a parsed object costs about
 * eight times its text in jansson's tables, which matters with thousands of them.
 *
 * Objects handed out by a non-compact informer are shared, immutable jansson values
 * (refcounts are atomic in jansson >= 2.12): callers own the reference they get and
 * must json_decref it, and must not modify it (json_deep_copy first). A compact
 * informer hands out fresh copies. */
#ifndef KUBE_INFORMER_H
#define KUBE_INFORMER_H

#include <pthread.h>
#include <stdint.h>
#include <jansson.h>
#include "kube/client.h"

/* Callbacks run on the informer thread, in event order, without the cache lock held (they may
 * call the lookup functions). Objects are borrowed for the call (json_incref to keep). */
struct kube_informer_handlers {
    /* The stored (transformed) objects. On a relist, the differences from the old cache are
     * delivered as add/update/delete. Not called by compact informers. */
    void (*on_add)(const json_t *obj, void *ud);
    void (*on_update)(const json_t *old_obj, const json_t *new_obj, void *ud);
    void (*on_delete)(const json_t *obj, void *ud);
    void (*on_synced)(void *ud); /* after each complete list (first sync and relists), or NULL */
    void *ud;
    /* Every object as received (listed, added, modified, or deleted: its last state), before the
     * transform and before the cache changes, with its group; NULL = none. */
    void (*on_object)(const char *group, const json_t *obj, void *ud);
    /* After the cache changed: once per watch event with the object's group; after a relist,
     * once for every group present before or after it. NULL = none. */
    void (*on_group)(const char *group, void *ud);
};

/* The group of obj as a new string, or NULL to leave obj out of the cache. An object's group
 * must not change over its life. */
typedef char *(*kube_informer_index_fn)(const json_t *obj);
/* Reduces obj (a private copy) in place to what the caller reads. */
typedef void (*kube_informer_transform_fn)(json_t *obj);

struct kube_informer_opts {
    const char *ns;                       /* namespace, NULL = all namespaces */
    const char *label_selector;           /* server-side labelSelector, NULL = all */
    const char *field_selector;           /* server-side fieldSelector, NULL = all */
    long page_size;                       /* list page size, 0 = 500 (one page is held parsed at a time) */
    long watch_timeout_s;                 /* timeoutSeconds per watch request, 0 = 300 */
    kube_informer_index_fn index;         /* NULL = group by namespace */
    kube_informer_transform_fn transform; /* NULL = store objects as received */
    int compact;                          /* keep objects as compact JSON text (see above) */
    /* Held around each list (borrowed; informers sharing one hold one list reply in memory at
     * a time); NULL = the library's process-wide gate. */
    pthread_mutex_t *list_gate;
};

struct kube_informer;

/* Creates an informer (not started) on client c (borrowed, must outlive it; NULL: a cache that
 * only kube_informer_store fills, and that cannot start); handlers may be NULL. Strings in opts
 * are copied. NULL with *errmsg on bad input (e.g. selector syntax). */
struct kube_informer *kube_informer_new(struct kube_client *c, const struct kube_resource *r,
                                        const struct kube_informer_opts *opts, const struct kube_informer_handlers *handlers,
                                        char **errmsg);
/* Starts the background thread. 0 ok, -1 with *errmsg. */
int kube_informer_start(struct kube_informer *inf, char **errmsg);
/* Waits until the first list completed; 1 synced, 0 timed out / stopped (timeout_ms < 0 = forever). */
int kube_informer_wait_synced(struct kube_informer *inf, long timeout_ms);
/* Returns 1 once the first list completed. */
int kube_informer_has_synced(struct kube_informer *inf);
/* Returns the cached object ns/name (ns NULL for cluster-scoped) as a new reference, or NULL.
 * With an index function this scans every group: prefer kube_informer_get_in. */
json_t *kube_informer_get(struct kube_informer *inf, const char *ns, const char *name);
/* Returns the cached object name of group as a new reference, or NULL. */
json_t *kube_informer_get_in(struct kube_informer *inf, const char *group, const char *name);
/* Returns a new JSON array of the cached objects of group (empty when none; NULL when out of memory). */
json_t *kube_informer_group(struct kube_informer *inf, const char *group);
/* Returns a new JSON array of the cached objects whose labels match label_selector (NULL = all),
 * sorted by namespace/name, or NULL on a bad selector (*errmsg) / allocation failure. */
json_t *kube_informer_list(struct kube_informer *inf, const char *label_selector, char **errmsg);
/* Write-through of the caller's own write: stores obj (the server's reply to a create/update)
 * unless the list/watch already delivered its (numeric) resourceVersion, so the next lookup does
 * not act on a state the API server already moved past; the watch's own event for it follows.
 * A watch event older than the stored copy is then ignored. */
void kube_informer_store(struct kube_informer *inf, const json_t *obj);
/* Removes name from group now (the caller deleted it; the watch's event follows). */
void kube_informer_drop(struct kube_informer *inf, const char *group, const char *name);
/* Number of cached objects. */
size_t kube_informer_count(struct kube_informer *inf);
/* A counter incremented on every change to the cache (add/update/delete/relist). */
uint64_t kube_informer_generation(struct kube_informer *inf);
/* Waits until the generation differs from since, up to timeout_ms (< 0 = forever) or until the
 * informer stops; returns the current generation (== since on timeout). */
uint64_t kube_informer_wait_change(struct kube_informer *inf, uint64_t since, long timeout_ms);
/* Describes the last error the background thread hit (new string) or NULL if none since the
 * last successful list/watch; e.g. to explain why wait_synced timed out. */
char *kube_informer_last_error(struct kube_informer *inf);
/* Stops the thread (returns within about a second) and wakes waiters; idempotent. */
void kube_informer_stop(struct kube_informer *inf);
/* Stops and frees the informer and its cache (NULL is fine). */
void kube_informer_free(struct kube_informer *inf);

#endif
