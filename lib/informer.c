/* informer.c - list+watch cache of one resource type with a background thread,
 * event handlers, thread-safe lookups and change notification. */
#include "kube/informer.h"

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "client_int.h"
#include "kube/json.h"
#include "kube/log.h"
#include "kube/selector.h"
#include "kube/util.h"
#include "kube/watch.h"

struct kube_informer {
    struct kube_client *c;
    struct kube_resource res;
    char *strs[4]; /* owned copies behind res's strings */
    char *ns, *label_selector, *field_selector;
    long page_size, watch_timeout_s;
    struct kube_informer_handlers h;
    pthread_mutex_t mu;
    pthread_cond_t cond;
    json_t *cache; /* "ns/name" (or "name") -> object */
    uint64_t gen;
    int synced, stopped, started;
    char *last_error;
    struct kube_cancel *cancel;
    pthread_t thr;
};

enum change { CH_ADD, CH_UPDATE, CH_DELETE };
struct delta {
    enum change kind;
    json_t *old, *new; /* references held */
};

static char *obj_key(const json_t *obj)
{
    const char *name = kube_obj_name(obj), *ns = kube_obj_namespace(obj);
    if (!name)
        return NULL;
    return ns && *ns ? kube_strdup_printf("%s/%s", ns, name) : strdup(name);
}

static void bump(struct kube_informer *inf)
{
    inf->gen++;
    pthread_cond_broadcast(&inf->cond);
}

static void set_error(struct kube_informer *inf, const char *msg)
{
    char *m = msg ? strdup(msg) : NULL;
    pthread_mutex_lock(&inf->mu);
    free(inf->last_error);
    inf->last_error = m;
    pthread_mutex_unlock(&inf->mu);
}

static void dispatch(struct kube_informer *inf, struct delta *d, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (d[i].kind == CH_ADD && inf->h.on_add)
            inf->h.on_add(d[i].new, inf->h.ud);
        else if (d[i].kind == CH_UPDATE && inf->h.on_update)
            inf->h.on_update(d[i].old, d[i].new, inf->h.ud);
        else if (d[i].kind == CH_DELETE && inf->h.on_delete)
            inf->h.on_delete(d[i].old, inf->h.ud);
        json_decref(d[i].old);
        json_decref(d[i].new);
    }
}

/* ---- relist: replace the cache, compute the differences ---- */

static int push(struct delta **d, size_t *n, size_t *cap, enum change k, json_t *old, json_t *new)
{
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 64;
        struct delta *nd = realloc(*d, nc * sizeof *nd);
        if (!nd)
            return -1;
        *d = nd;
        *cap = nc;
    }
    (*d)[(*n)++] = (struct delta){k, json_incref(old), json_incref(new)};
    return 0;
}

/* Builds the new cache from a List; fills kind/apiVersion on items (lists omit them). */
static json_t *cache_from_list(struct kube_informer *inf, json_t *list)
{
    json_t *cache = json_object(), *item;
    char *apiv = kube_resource_api_version(&inf->res);
    size_t i;
    json_array_foreach(json_object_get(list, "items"), i, item) {
        char *key = obj_key(item);
        if (!key)
            continue;
        if (!json_object_get(item, "kind") && inf->res.kind)
            json_object_set_new(item, "kind", json_string(inf->res.kind));
        if (!json_object_get(item, "apiVersion") && apiv)
            json_object_set_new(item, "apiVersion", json_string(apiv));
        if (cache)
            json_object_set(cache, key, item);
        free(key);
    }
    free(apiv);
    return cache;
}

static void replace_cache(struct kube_informer *inf, json_t *list)
{
    json_t *next = cache_from_list(inf, list);
    struct delta *d = NULL;
    size_t n = 0, cap = 0;
    const char *key;
    json_t *v;
    if (!next)
        return;
    pthread_mutex_lock(&inf->mu);
    json_object_foreach(next, key, v) {
        json_t *old = json_object_get(inf->cache, key);
        const char *orv = kube_obj_resource_version(old), *nrv = kube_obj_resource_version(v);
        if (!old)
            push(&d, &n, &cap, CH_ADD, NULL, v);
        else if (!orv || !nrv || strcmp(orv, nrv))
            push(&d, &n, &cap, CH_UPDATE, old, v);
    }
    json_object_foreach(inf->cache, key, v) {
        if (!json_object_get(next, key))
            push(&d, &n, &cap, CH_DELETE, v, NULL);
    }
    json_decref(inf->cache);
    inf->cache = next;
    inf->synced = 1;
    bump(inf);
    pthread_mutex_unlock(&inf->mu);
    dispatch(inf, d, n);
    free(d);
    if (inf->h.on_synced)
        inf->h.on_synced(inf->h.ud);
}

/* ---- watch events ---- */

static int on_watch_event(const struct kube_watch_event *ev, void *ud)
{
    struct kube_informer *inf = ud;
    if (ev->type == KUBE_EVENT_BOOKMARK)
        return 0;
    char *key = obj_key(ev->object);
    if (!key)
        return 0;
    struct delta d = {CH_ADD, NULL, NULL};
    pthread_mutex_lock(&inf->mu);
    json_t *old = json_incref(json_object_get(inf->cache, key));
    if (ev->type == KUBE_EVENT_DELETED) {
        json_object_del(inf->cache, key);
        d = (struct delta){CH_DELETE, json_incref(ev->object), NULL};
        json_decref(old);
    } else {
        json_object_set(inf->cache, key, ev->object);
        d = (struct delta){old ? CH_UPDATE : CH_ADD, old, json_incref(ev->object)};
    }
    bump(inf);
    pthread_mutex_unlock(&inf->mu);
    free(key);
    dispatch(inf, &d, 1);
    return 0;
}

/* ---- the background thread ---- */

/* Records a failure and waits (cancellable) before the next attempt; 1 when cancelled. */
static int fail_and_wait(struct kube_informer *inf, const char *what, const struct kube_error *err, int *attempt)
{
    struct kube_retry_policy p = {0, 500, 10000, 0};
    char *m = kube_strdup_printf("%s %s: %s", what, inf->res.resource, err->message ? err->message : "?");
    set_error(inf, m);
    int64_t delay = kube_backoff_delay_ms(&p, ++*attempt, NULL);
    kube_log(*attempt > 1 ? KUBE_LOG_WARN : KUBE_LOG_DEBUG, "informer: %s; retrying in %lld ms", m ? m : what,
             (long long)delay);
    free(m);
    return kube_cancel_sleep_ms(inf->cancel, delay);
}

static void *run(void *arg)
{
    struct kube_informer *inf = arg;
    int attempt = 0;
    while (!kube_cancel_requested(inf->cancel)) {
        struct kube_error err = KUBE_ERROR_INIT;
        struct kube_list_opts lo = {.label_selector = inf->label_selector,
                                    .field_selector = inf->field_selector,
                                    .limit = inf->page_size};
        json_t *list = kube_list_all_cancel(inf->c, &inf->res, inf->ns, &lo, inf->cancel, &err);
        if (!list) {
            int stop = err.reason == KUBE_CANCELLED || fail_and_wait(inf, "list", &err, &attempt);
            kube_error_clear(&err);
            if (stop)
                break;
            continue;
        }
        char *rv = kube_obj_resource_version(list) ? strdup(kube_obj_resource_version(list)) : NULL;
        replace_cache(inf, list);
        json_decref(list);
        set_error(inf, NULL);
        struct kube_list_opts wo = lo;
        wo.limit = 0;
        wo.resource_version = rv;
        wo.timeout_seconds = inf->watch_timeout_s;
        wo.allow_bookmarks = 1;
        int rc = kube_watch(inf->c, &inf->res, inf->ns, &wo, on_watch_event, inf, inf->cancel, NULL, &err);
        free(rv);
        if (rc < 0 && err.reason == KUBE_GONE) {
            KLOG_DEBUG("informer %s: resourceVersion expired; relisting", inf->res.resource);
            attempt = 0;
        } else if (rc < 0 && err.reason != KUBE_CANCELLED) {
            if (fail_and_wait(inf, "watch", &err, &attempt)) {
                kube_error_clear(&err);
                break;
            }
        }
        kube_error_clear(&err);
    }
    pthread_mutex_lock(&inf->mu);
    inf->stopped = 1;
    pthread_cond_broadcast(&inf->cond);
    pthread_mutex_unlock(&inf->mu);
    return NULL;
}

/* ---- public API ---- */

static int copy_opt(char **dst, const char *src)
{
    *dst = src && *src ? strdup(src) : NULL;
    return src && *src && !*dst ? -1 : 0;
}

struct kube_informer *kube_informer_new(struct kube_client *c, const struct kube_resource *r,
                                        const struct kube_informer_opts *opts,
                                        const struct kube_informer_handlers *handlers, char **errmsg)
{
    struct kube_informer_opts o = opts ? *opts : (struct kube_informer_opts){0};
    struct kube_selector *sel = kube_selector_parse(o.label_selector, errmsg);
    if (!sel)
        return NULL;
    kube_selector_free(sel);
    struct kube_informer *inf = calloc(1, sizeof *inf);
    pthread_condattr_t ca;
    if (!inf || !c || !r || !r->resource)
        goto fail;
    inf->c = c;
    inf->res = *r;
    if (copy_opt(&inf->strs[0], r->group) || copy_opt(&inf->strs[1], r->version) ||
        copy_opt(&inf->strs[2], r->resource) || copy_opt(&inf->strs[3], r->kind) || copy_opt(&inf->ns, o.ns) ||
        copy_opt(&inf->label_selector, o.label_selector) || copy_opt(&inf->field_selector, o.field_selector))
        goto fail;
    inf->res.group = inf->strs[0] ? inf->strs[0] : "";
    inf->res.version = inf->strs[1];
    inf->res.resource = inf->strs[2];
    inf->res.kind = inf->strs[3];
    inf->page_size = o.page_size > 0 ? o.page_size : 500;
    inf->watch_timeout_s = o.watch_timeout_s > 0 ? o.watch_timeout_s : 300;
    if (handlers)
        inf->h = *handlers;
    inf->cache = json_object();
    inf->cancel = kube_cancel_new();
    if (!inf->cache || !inf->cancel || pthread_mutex_init(&inf->mu, NULL) || pthread_condattr_init(&ca))
        goto fail;
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    int crc = pthread_cond_init(&inf->cond, &ca);
    pthread_condattr_destroy(&ca);
    if (crc)
        goto fail;
    return inf;
fail:
    kube_set_err(errmsg, "informer: %s", !c || !r || !r->resource ? "no client or resource" : "out of memory");
    if (inf) {
        for (int i = 0; i < 4; i++)
            free(inf->strs[i]);
        free(inf->ns);
        free(inf->label_selector);
        free(inf->field_selector);
        json_decref(inf->cache);
        kube_cancel_free(inf->cancel);
        free(inf);
    }
    return NULL;
}

int kube_informer_start(struct kube_informer *inf, char **errmsg)
{
    if (inf->started) {
        kube_set_err(errmsg, "informer %s: already started", inf->res.resource);
        return -1;
    }
    /* the thread takes no signals: programs handle theirs (SIGCHLD, SIGTERM) on their own threads */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&inf->thr, NULL, run, inf);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc) {
        kube_set_err(errmsg, "informer %s: cannot start thread", inf->res.resource);
        return -1;
    }
    inf->started = 1;
    return 0;
}

int kube_informer_wait_synced(struct kube_informer *inf, long timeout_ms)
{
    struct timespec dl = kube_deadline_ts(CLOCK_MONOTONIC, timeout_ms < 0 ? 0 : timeout_ms);
    pthread_mutex_lock(&inf->mu);
    int timed_out = 0;
    while (!inf->synced && !inf->stopped && !timed_out) {
        if (timeout_ms < 0)
            pthread_cond_wait(&inf->cond, &inf->mu);
        else
            timed_out = pthread_cond_timedwait(&inf->cond, &inf->mu, &dl) != 0;
    }
    int s = inf->synced;
    pthread_mutex_unlock(&inf->mu);
    return s;
}

int kube_informer_has_synced(struct kube_informer *inf)
{
    pthread_mutex_lock(&inf->mu);
    int s = inf->synced;
    pthread_mutex_unlock(&inf->mu);
    return s;
}

json_t *kube_informer_get(struct kube_informer *inf, const char *ns, const char *name)
{
    if (!name)
        return NULL;
    char *key = ns && *ns ? kube_strdup_printf("%s/%s", ns, name) : strdup(name);
    if (!key)
        return NULL;
    pthread_mutex_lock(&inf->mu);
    json_t *v = json_incref(json_object_get(inf->cache, key));
    pthread_mutex_unlock(&inf->mu);
    free(key);
    return v;
}

struct kv {
    const char *key;
    json_t *v;
};

static int cmp_kv(const void *a, const void *b)
{
    return strcmp(((const struct kv *)a)->key, ((const struct kv *)b)->key);
}

json_t *kube_informer_list(struct kube_informer *inf, const char *label_selector, char **errmsg)
{
    struct kube_selector *sel = kube_selector_parse(label_selector, errmsg);
    if (!sel)
        return NULL;
    json_t *out = json_array();
    pthread_mutex_lock(&inf->mu);
    size_t n = 0, cap = json_object_size(inf->cache);
    struct kv *items = calloc(cap ? cap : 1, sizeof *items);
    const char *key;
    json_t *v;
    if (items && out) {
        json_object_foreach(inf->cache, key, v) {
            if (kube_selector_matches_obj(sel, v))
                items[n++] = (struct kv){key, v};
        }
        qsort(items, n, sizeof *items, cmp_kv);
        for (size_t i = 0; i < n; i++)
            json_array_append(out, items[i].v);
    }
    pthread_mutex_unlock(&inf->mu);
    if (!items) {
        json_decref(out);
        out = NULL;
        kube_set_err(errmsg, "out of memory");
    }
    free(items);
    kube_selector_free(sel);
    return out;
}

size_t kube_informer_count(struct kube_informer *inf)
{
    pthread_mutex_lock(&inf->mu);
    size_t n = json_object_size(inf->cache);
    pthread_mutex_unlock(&inf->mu);
    return n;
}

uint64_t kube_informer_generation(struct kube_informer *inf)
{
    pthread_mutex_lock(&inf->mu);
    uint64_t g = inf->gen;
    pthread_mutex_unlock(&inf->mu);
    return g;
}

uint64_t kube_informer_wait_change(struct kube_informer *inf, uint64_t since, long timeout_ms)
{
    struct timespec dl = kube_deadline_ts(CLOCK_MONOTONIC, timeout_ms < 0 ? 0 : timeout_ms);
    pthread_mutex_lock(&inf->mu);
    int timed_out = 0;
    while (inf->gen == since && !inf->stopped && !timed_out) {
        if (timeout_ms < 0)
            pthread_cond_wait(&inf->cond, &inf->mu);
        else
            timed_out = pthread_cond_timedwait(&inf->cond, &inf->mu, &dl) != 0;
    }
    uint64_t g = inf->gen;
    pthread_mutex_unlock(&inf->mu);
    return g;
}

char *kube_informer_last_error(struct kube_informer *inf)
{
    pthread_mutex_lock(&inf->mu);
    char *m = inf->last_error ? strdup(inf->last_error) : NULL;
    pthread_mutex_unlock(&inf->mu);
    return m;
}

void kube_informer_stop(struct kube_informer *inf)
{
    if (!inf)
        return;
    kube_cancel_trigger(inf->cancel);
    if (inf->started) {
        pthread_join(inf->thr, NULL);
        inf->started = 0;
    }
    pthread_mutex_lock(&inf->mu);
    inf->stopped = 1;
    pthread_cond_broadcast(&inf->cond);
    pthread_mutex_unlock(&inf->mu);
}

void kube_informer_free(struct kube_informer *inf)
{
    if (!inf)
        return;
    kube_informer_stop(inf);
    pthread_cond_destroy(&inf->cond);
    pthread_mutex_destroy(&inf->mu);
    json_decref(inf->cache);
    kube_cancel_free(inf->cancel);
    for (int i = 0; i < 4; i++)
        free(inf->strs[i]);
    free(inf->ns);
    free(inf->label_selector);
    free(inf->field_selector);
    free(inf->last_error);
    free(inf);
}
