/* cache.c - pruned, grouped list+watch caches (see cache.h). */
#include "cache.h"
#include "jsonutil.h"
#include "objstore.h"
#include "textpack.h"
#include "kube/cancel.h"
#include "kube/log.h"
#include "kube/watch.h"

#include <malloc.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct cache {
    struct kube_client *c;
    struct cache_opts o;
    char *ns, *selector, *group_label;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct objstore *groups; /* "ns/job" -> name -> compact JSON without name and namespace, packed */
    int synced, started;
    unsigned long long seen_rv; /* the newest resourceVersion the list/watch delivered */
    char *last_error;
    struct kube_cancel *cancel;
    pthread_t th;
};

struct cache *cache_new(struct kube_client *c, const struct cache_opts *o)
{
    struct cache *k = calloc(1, sizeof *k);
    if (!k)
        return NULL;
    k->c = c;
    k->o = *o;
    k->ns = o->ns ? strdup(o->ns) : NULL;
    k->selector = o->label_selector ? strdup(o->label_selector) : NULL;
    k->group_label = o->group_label ? strdup(o->group_label) : NULL;
    k->groups = os_new();
    k->cancel = kube_cancel_new();
    pthread_mutex_init(&k->mu, NULL);
    pthread_cond_init(&k->cv, NULL);
    if (!k->groups || !k->cancel) {
        cache_free(k);
        return NULL;
    }
    return k;
}

/* resourceVersion as a number (Kubernetes' are etcd revisions); 0 when not numeric. */
static unsigned long long rv_num(const json_t *obj)
{
    const char *rv = ju_str(obj, "metadata", "resourceVersion");
    char *end = NULL;
    unsigned long long n = rv && *rv ? strtoull(rv, &end, 10) : 0;
    return end && *end == '\0' ? n : 0;
}

/* "ns/job" for obj, or 0 when it belongs to no job. */
static int group_key(struct cache *k, const json_t *obj, char *buf, size_t n)
{
    const char *ns = ju_str(obj, "metadata", "namespace");
    const char *g = k->group_label ? ju_str(obj, "metadata", "labels", k->group_label) : obj_name(obj);
    if (!g)
        return 0;
    snprintf(buf, n, "%s/%s", ns ? ns : "", g);
    return 1;
}

/* Stores (obj != NULL, pruned, serialised without its name and namespace: the store's keys
 * hold them) or removes the object; caller holds the lock (or owns groups). */
static void put_locked(struct cache *k, struct objstore *groups, const char *key, const char *name, const json_t *obj)
{
    if (!obj) {
        os_del(groups, key, name);
        return;
    }
    json_t *copy = json_deep_copy(obj);
    if (!copy)
        return;
    if (k->o.prune)
        k->o.prune(copy);
    json_t *md = json_object_get(copy, "metadata");
    json_object_del(md, "name");
    json_object_del(md, "namespace");
    char *s = json_dumps(copy, JSON_COMPACT);
    json_decref(copy);
    char *packed = s ? tp_pack(s) : NULL;
    if (!packed || os_put(groups, key, name, packed, rv_num(obj)) < 0)
        KLOG_WARN("cache %s: out of memory storing %s", k->o.res->resource, name);
    free(packed);
    free(s);
}

/* Parses a stored object and gives it back its name and namespace (from key "ns/job"). */
static json_t *load(const char *key, const char *name, const char *packed)
{
    char *text = tp_unpack(packed);
    json_t *o = text ? json_loads(text, 0, NULL) : NULL;
    free(text);
    if (!o)
        return NULL;
    json_t *md = json_object_get(o, "metadata");
    if (!json_is_object(md)) {
        md = json_object();
        json_object_set_new(o, "metadata", md);
    }
    json_object_set_new(md, "name", json_string(name));
    const char *slash = strchr(key, '/');
    if (slash && slash > key)
        json_object_set_new(md, "namespace", json_stringn(key, (size_t)(slash - key)));
    return o;
}

static void set_error(struct cache *k, const char *what, const struct kube_error *e)
{
    pthread_mutex_lock(&k->mu);
    free(k->last_error);
    k->last_error = NULL;
    if (asprintf(&k->last_error, "%s %s: %s", what, k->o.res->resource, e->message ? e->message : "error") < 0)
        k->last_error = NULL;
    pthread_mutex_unlock(&k->mu);
    KLOG_WARN("cache %s: %s: %s", k->o.res->resource, what, e->message ? e->message : kube_reason_name(e->reason));
}

/* Adds a list page's items to fresh (pruned, grouped); returns how many it kept. */
static size_t add_items(struct cache *k, struct objstore *fresh, json_t *items)
{
    size_t i, n = 0;
    json_t *it;
    char key[512];
    json_array_foreach(items, i, it) {
        if (group_key(k, it, key, sizeof key)) {
            if (k->o.observe)
                k->o.observe(key, it, k->o.ud);
            put_locked(k, fresh, key, obj_name(it), it);
            n++;
        }
    }
    return n;
}

/* Page size of the caches' lists: one page at a time is held as parsed JSON (a whole list
 * of 3,000 pods parsed at once cost ~115 MB of RSS; a page of 50 about 1 MB). */
#define LIST_PAGE 50

/* Lists the resource page by page into a fresh group map; *rv gets the first page's
 * resourceVersion (the snapshot the pages belong to). NULL on failure (err set). An
 * expired continue token (410) restarts the listing, at most twice. */
static struct objstore *list_fresh(struct cache *k, char **rv, size_t *count, struct kube_error *err)
{
    for (int attempt = 0; attempt < 3; attempt++) {
        struct objstore *fresh = os_new();
        if (!fresh) {
            kube_error_set(err, 0, KUBE_UNKNOWN, "list %s: out of memory", k->o.res->resource);
            return NULL;
        }
        char *cont = NULL;
        *rv = NULL;
        *count = 0;
        for (;;) {
            struct kube_list_opts lo = { .label_selector = k->selector, .limit = LIST_PAGE, .continue_token = cont };
            json_t *page = kube_list(k->c, k->o.res, k->ns, &lo, err);
            int was_continued = cont != NULL;
            free(cont);
            cont = NULL;
            if (!page) {
                os_free(fresh);
                free(*rv);
                *rv = NULL;
                if (was_continued && err->reason == KUBE_GONE) {
                    kube_error_clear(err);
                    break; /* start over */
                }
                return NULL;
            }
            if (!*rv) {
                const char *r = ju_str(page, "metadata", "resourceVersion");
                *rv = strdup(r ? r : "");
                if (!*rv) {
                    json_decref(page);
                    os_free(fresh);
                    kube_error_set(err, 0, KUBE_UNKNOWN, "list %s: out of memory", k->o.res->resource);
                    return NULL;
                }
            }
            *count += add_items(k, fresh, json_object_get(page, "items"));
            const char *c = ju_str(page, "metadata", "continue");
            cont = c && *c ? strdup(c) : NULL;
            json_decref(page);
            if (!cont)
                return fresh;
        }
    }
    kube_error_set(err, 410, KUBE_GONE, "list %s: the continue token expired three times", k->o.res->resource);
    return NULL;
}

struct keys_ctx {
    json_t *keys;                /* collected keys */
    const struct objstore *skip; /* NULL, or: leave out keys with a group here */
};

static void collect_key(const char *key, void *ud)
{
    struct keys_ctx *c = ud;
    if (!c->skip || !os_has_group(c->skip, key))
        json_array_append_new(c->keys, json_string(key));
}

/* Replaces the cache with a fresh listing and notifies every group present before or after. */
static void replace_all(struct cache *k, struct objstore *fresh, unsigned long long list_rv)
{
    json_t *keys = json_array();
    pthread_mutex_lock(&k->mu);
    struct objstore *old = k->groups;
    k->groups = fresh;
    k->seen_rv = list_rv;
    k->synced = 1;
    pthread_cond_broadcast(&k->cv);
    struct keys_ctx now = { keys, NULL }, gone = { keys, fresh };
    os_keys_foreach(fresh, collect_key, &now);
    os_keys_foreach(old, collect_key, &gone);
    pthread_mutex_unlock(&k->mu);
    os_free(old);
    size_t i;
    json_t *v;
    if (k->o.notify)
        json_array_foreach(keys, i, v) k->o.notify(json_string_value(v), k->o.ud);
    json_decref(keys);
}

/* resourceVersion of the cached copy of name in group key (0: none or not numeric); lock held. */
static unsigned long long cached_rv_locked(struct cache *k, const char *key, const char *name)
{
    unsigned long long rv = 0;
    return os_get(k->groups, key, name, &rv) ? rv : 0;
}

static int on_event(const struct kube_watch_event *ev, void *ud)
{
    struct cache *k = ud;
    char key[512];
    if (ev->type == KUBE_EVENT_BOOKMARK || !group_key(k, ev->object, key, sizeof key))
        return 0;
    const char *name = obj_name(ev->object);
    if (!name)
        return 0;
    if (k->o.observe)
        k->o.observe(key, ev->object, k->o.ud);
    unsigned long long rv = rv_num(ev->object);
    KLOG_TRACE("watch %s: %s %s/%s resourceVersion %llu", k->o.res->resource, kube_event_type_name(ev->type),
               key, name, rv);
    pthread_mutex_lock(&k->mu);
    /* an event older than the cached copy (our own write, cache_store) would undo it; one
     * for the revision our own write stored already brings nothing new: no sync for it */
    unsigned long long have = rv ? cached_rv_locked(k, key, name) : 0;
    int news = ev->type == KUBE_EVENT_DELETED || !rv || have < rv;
    if (ev->type == KUBE_EVENT_DELETED || !rv || have <= rv)
        put_locked(k, k->groups, key, name, ev->type == KUBE_EVENT_DELETED ? NULL : ev->object);
    if (rv > k->seen_rv)
        k->seen_rv = rv;
    pthread_mutex_unlock(&k->mu);
    if (k->o.notify && news)
        k->o.notify(key, k->o.ud);
    return 0;
}


static void *run(void *arg)
{
    struct cache *k = arg;
    int64_t delay = 500;
    while (!kube_cancel_requested(k->cancel)) {
        struct kube_error err = KUBE_ERROR_INIT;
        char *rvc = NULL;
        size_t n = 0;
        if (k->o.list_gate)
            pthread_mutex_lock(k->o.list_gate);
        struct objstore *fresh = list_fresh(k, &rvc, &n, &err);
        if (k->o.list_gate)
            pthread_mutex_unlock(k->o.list_gate);
        if (!fresh) {
            if (err.reason != KUBE_CANCELLED)
                set_error(k, "list", &err);
            kube_error_clear(&err);
            kube_cancel_sleep_ms(k->cancel, delay);
            delay = delay * 2 > 30000 ? 30000 : delay * 2;
            continue;
        }
        char *end = NULL;
        unsigned long long rvn = *rvc ? strtoull(rvc, &end, 10) : 0;
        replace_all(k, fresh, end && *end == '\0' ? rvn : 0);
        /* the pages' parse trees are freed but their pages stay in this thread's arena,
         * pinned by the cached strings allocated among them: hand the free pages back */
        malloc_trim(0);
        struct kube_list_opts wo = { .label_selector = k->selector, .resource_version = rvc,
                                     .timeout_seconds = 300, .allow_bookmarks = 1 };
        int rc = kube_watch(k->c, k->o.res, k->ns, &wo, on_event, k, k->cancel, NULL, &err);
        free(rvc);
        if (rc < 0 && err.reason != KUBE_CANCELLED && err.reason != KUBE_GONE) {
            set_error(k, "watch", &err);
            kube_cancel_sleep_ms(k->cancel, delay);
            delay = delay * 2 > 30000 ? 30000 : delay * 2;
        } else {
            delay = 500;
        }
        kube_error_clear(&err);
    }
    return NULL;
}

int cache_start(struct cache *k)
{
    if (pthread_create(&k->th, NULL, run, k) != 0)
        return -1;
    k->started = 1;
    return 0;
}

int cache_wait_synced(struct cache *k, long timeout_ms)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += timeout_ms / 1000;
    ts.tv_nsec += (timeout_ms % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&k->mu);
    while (!k->synced && pthread_cond_timedwait(&k->cv, &k->mu, &ts) == 0)
        ;
    int s = k->synced;
    pthread_mutex_unlock(&k->mu);
    return s;
}

struct group_ctx {
    const char *key;
    json_t *out;
};

static void load_into(const char *name, const char *text, void *ud)
{
    struct group_ctx *g = ud;
    json_t *o = load(g->key, name, text);
    if (o)
        json_array_append_new(g->out, o);
}

json_t *cache_group(struct cache *k, const char *key)
{
    struct group_ctx g = { key, json_array() };
    pthread_mutex_lock(&k->mu);
    os_group_foreach(k->groups, key, load_into, &g);
    pthread_mutex_unlock(&k->mu);
    return g.out;
}

void cache_store(struct cache *k, const json_t *obj)
{
    char key[512];
    const char *name = obj_name(obj);
    if (!k || !name || !group_key(k, obj, key, sizeof key))
        return;
    unsigned long long rv = rv_num(obj);
    pthread_mutex_lock(&k->mu);
    /* once the watch delivered this revision the cache is at least as new (and knows of a
     * deletion since): storing then could resurrect a deleted object */
    if (rv && rv > k->seen_rv)
        put_locked(k, k->groups, key, name, obj);
    pthread_mutex_unlock(&k->mu);
}

void cache_drop(struct cache *k, const char *key, const char *name)
{
    if (!k || !key || !name)
        return;
    pthread_mutex_lock(&k->mu);
    put_locked(k, k->groups, key, name, NULL);
    pthread_mutex_unlock(&k->mu);
}

json_t *cache_get(struct cache *k, const char *key, const char *name)
{
    pthread_mutex_lock(&k->mu);
    const char *text = os_get(k->groups, key, name, NULL);
    json_t *o = text ? load(key, name, text) : NULL;
    pthread_mutex_unlock(&k->mu);
    return o;
}

json_t *cache_keys(struct cache *k)
{
    struct keys_ctx c = { json_array(), NULL };
    pthread_mutex_lock(&k->mu);
    os_keys_foreach(k->groups, collect_key, &c);
    pthread_mutex_unlock(&k->mu);
    return c.keys;
}

size_t cache_count(struct cache *k)
{
    pthread_mutex_lock(&k->mu);
    size_t n = os_count(k->groups);
    pthread_mutex_unlock(&k->mu);
    return n;
}

char *cache_last_error(struct cache *k)
{
    pthread_mutex_lock(&k->mu);
    char *s = k->last_error ? strdup(k->last_error) : NULL;
    pthread_mutex_unlock(&k->mu);
    return s;
}

void cache_free(struct cache *k)
{
    if (!k)
        return;
    if (k->started) {
        kube_cancel_trigger(k->cancel);
        pthread_join(k->th, NULL);
    }
    kube_cancel_free(k->cancel);
    os_free(k->groups);
    free(k->ns);
    free(k->selector);
    free(k->group_label);
    free(k->last_error);
    pthread_mutex_destroy(&k->mu);
    pthread_cond_destroy(&k->cv);
    free(k);
}
