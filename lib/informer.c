/* informer.c - the informer's background thread (paged list, resuming watch,
 * relist on 410 Gone, backoff) and its life cycle (see kube/informer.h). */
#include "informer_int.h"

#include <malloc.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "kube/backoff.h"
#include "kube/json.h"
#include "kube/log.h"
#include "kube/selector.h"
#include "kube/timer.h"
#include "kube/util.h"
#include "kube/watch.h"

static void set_error(struct kube_informer *inf, char *msg /* taken */)
{
    pthread_mutex_lock(&inf->mu);
    free(inf->last_error);
    inf->last_error = msg;
    pthread_mutex_unlock(&inf->mu);
}

/* ---- handler deliveries ---- */

enum change { CH_ADD, CH_UPDATE, CH_DELETE };
struct delta {
    enum change kind;
    json_t *old, *new; /* references held */
};

struct deltas {
    struct delta *d;
    size_t n, cap;
    json_t *groups; /* array of changed groups (on_group), or NULL */
};

static int wants_deltas(const struct kube_informer *inf)
{
    return !inf->compact && (inf->h.on_add || inf->h.on_update || inf->h.on_delete);
}

static void push(struct deltas *ds, enum change k, json_t *old, json_t *new)
{
    if (ds->n == ds->cap) {
        size_t nc = ds->cap ? ds->cap * 2 : 64;
        struct delta *nd = realloc(ds->d, nc * sizeof *nd);
        if (!nd) {
            KLOG_WARN("informer: out of memory queueing a change for the handlers");
            return;
        }
        ds->d = nd;
        ds->cap = nc;
    }
    ds->d[ds->n++] = (struct delta){ k, json_incref(old), json_incref(new) };
}

/* Calls the handlers for what ds holds and frees it; no lock held. */
static void dispatch(struct kube_informer *inf, struct deltas *ds)
{
    for (size_t i = 0; i < ds->n; i++) {
        struct delta *d = &ds->d[i];
        if (d->kind == CH_ADD && inf->h.on_add)
            inf->h.on_add(d->new, inf->h.ud);
        else if (d->kind == CH_UPDATE && inf->h.on_update)
            inf->h.on_update(d->old, d->new, inf->h.ud);
        else if (d->kind == CH_DELETE && inf->h.on_delete)
            inf->h.on_delete(d->old, inf->h.ud);
        json_decref(d->old);
        json_decref(d->new);
    }
    free(ds->d);
    size_t i;
    json_t *g;
    if (inf->h.on_group)
        json_array_foreach(ds->groups, i, g)
            inf->h.on_group(json_string_value(g), inf->h.ud);
    json_decref(ds->groups);
}

/* ---- relist ---- */

/* One list at a time per process (unless the caller gives its informers a gate of its own,
 * kube_informer_opts.list_gate): a reply may be as large as the client's cap (64 MiB), so
 * informers listing at once (first sync, relists) could hold one cap each (a hostile server's
 * 256 MiB replies cost ~420 MB with 9 informers); serialised, the peak is one cap. */
static pthread_mutex_t list_gate = PTHREAD_MUTEX_INITIALIZER;

/* Adds a list page's items to fresh (kind and apiVersion filled in: lists omit them). */
static void add_items(struct kube_informer *inf, struct store *fresh, json_t *items, const char *apiv)
{
    size_t i;
    json_t *it;
    json_array_foreach(items, i, it) {
        const char *name = kube_obj_name(it);
        char *group = name ? Kube_informer_group_of(inf, it) : NULL;
        if (!group)
            continue;
        if (!json_object_get(it, "kind") && inf->res.kind)
            json_object_set_new(it, "kind", json_string(inf->res.kind));
        if (!json_object_get(it, "apiVersion") && apiv)
            json_object_set_new(it, "apiVersion", json_string(apiv));
        if (inf->h.on_object)
            inf->h.on_object(group, it, inf->h.ud);
        Kube_informer_put(inf, fresh, group, name, it);
        free(group);
    }
}

/* Lists one snapshot page by page into *fresh (a page at a time is held parsed: a whole list of
 * 3,000 pods parsed at once cost ~115 MB); *rv gets the first page's resourceVersion. 1 done,
 * 0 the continue token expired (start over), -1 failed (err set). */
static int list_pages(struct kube_informer *inf, struct store *fresh, char **rv, struct kube_error *err)
{
    char *apiv = kube_resource_api_version(&inf->res), *cont = NULL;
    int rc = -1;
    for (;;) {
        struct kube_list_opts lo = { .label_selector = inf->label_selector,
                                     .field_selector = inf->field_selector,
                                     .limit = inf->page_size,
                                     .continue_token = cont };
        json_t *page = kube_list_cancel(inf->c, &inf->res, inf->ns, &lo, inf->cancel, err);
        int continued = cont != NULL;
        free(cont);
        cont = NULL;
        if (!page) {
            rc = continued && err->reason == KUBE_GONE ? 0 : -1;
            break;
        }
        if (!*rv && !(*rv = strdup(kube_obj_resource_version(page) ? kube_obj_resource_version(page) : ""))) {
            json_decref(page);
            kube_error_set(err, 0, KUBE_UNKNOWN, "list %s: out of memory", inf->res.resource);
            break;
        }
        add_items(inf, fresh, json_object_get(page, "items"), apiv);
        const char *c = kube_json_at_str(page, "metadata", "continue");
        cont = c && *c ? strdup(c) : NULL;
        json_decref(page);
        if (!cont) {
            rc = 1;
            break;
        }
    }
    free(apiv);
    return rc;
}

/* A fresh store of the whole list, or NULL (err set); *rv its resourceVersion (new string). An
 * expired continue token restarts the listing, at most three times in all. */
static struct store *list_fresh(struct kube_informer *inf, char **rv, struct kube_error *err)
{
    for (int attempt = 0; attempt < 3; attempt++) {
        struct store *fresh = Kube_store_new();
        if (!fresh) {
            kube_error_set(err, 0, KUBE_UNKNOWN, "list %s: out of memory", inf->res.resource);
            return NULL;
        }
        *rv = NULL;
        int rc = list_pages(inf, fresh, rv, err);
        if (rc == 1)
            return fresh;
        Kube_store_free(fresh);
        free(*rv);
        *rv = NULL;
        if (rc < 0)
            return NULL;
        kube_error_clear(err);
    }
    kube_error_set(err, 410, KUBE_GONE, "list %s: the continue token expired three times", inf->res.resource);
    return NULL;
}

struct diff_ctx {
    struct deltas *ds;
    const struct store *other;
    int fresh_side; /* iterating the fresh store (adds/updates) rather than the old (deletes) */
};

static void diff_entry(const char *group, const struct store_entry *e, void *ud)
{
    struct diff_ctx *x = ud;
    const struct store_entry *o = Kube_store_get(x->other, group, Kube_store_entry_name(e));
    if (x->fresh_side && !o)
        push(x->ds, CH_ADD, NULL, e->obj);
    else if (x->fresh_side && (!o->rv || !e->rv || o->rv != e->rv))
        push(x->ds, CH_UPDATE, o->obj, e->obj);
    else if (!x->fresh_side && !o)
        push(x->ds, CH_DELETE, e->obj, NULL);
}

static void diff_group(const char *group, void *ud)
{
    struct diff_ctx *x = ud;
    if (x->fresh_side || !Kube_store_has_group(x->other, group))
        json_array_append_new(x->ds->groups, json_string(group));
}

/* The handler calls a relist from old to fresh makes; lock held. */
static void relist_deltas(struct kube_informer *inf, const struct store *old, const struct store *fresh, struct deltas *ds)
{
    struct diff_ctx add = { ds, old, 1 }, del = { ds, fresh, 0 };
    if (wants_deltas(inf)) {
        Kube_store_foreach(fresh, NULL, diff_entry, &add);
        Kube_store_foreach(old, NULL, diff_entry, &del);
    }
    if (ds->groups) {
        Kube_store_groups_foreach(fresh, diff_group, &add);
        Kube_store_groups_foreach(old, diff_group, &del);
    }
}

/* Replaces the cache with fresh (listed at resourceVersion rv) and tells the handlers. */
static void replace_all(struct kube_informer *inf, struct store *fresh, const char *rv)
{
    struct deltas ds = { NULL, 0, 0, inf->h.on_group ? json_array() : NULL };
    char *end = NULL;
    unsigned long long rvn = rv && *rv ? strtoull(rv, &end, 10) : 0;
    pthread_mutex_lock(&inf->mu);
    struct store *old = inf->store;
    relist_deltas(inf, old, fresh, &ds);
    inf->store = fresh;
    inf->seen_rv = end && *end == '\0' ? rvn : 0;
    inf->synced = 1;
    Kube_informer_bump(inf);
    pthread_mutex_unlock(&inf->mu);
    Kube_store_free(old); /* the deltas hold their own references */
    dispatch(inf, &ds);
    if (inf->h.on_synced)
        inf->h.on_synced(inf->h.ud);
}

/* ---- watch events ---- */

/* Applies one event to the cache; lock held. */
static void apply_event_locked(struct kube_informer *inf, const struct kube_watch_event *ev, const char *group,
                               const char *name, struct deltas *ds)
{
    unsigned long long rv = Kube_informer_rv_num(ev->object);
    const struct store_entry *old = Kube_store_get(inf->store, group, name);
    json_t *old_obj = old ? json_incref(old->obj) : NULL;
    if (ev->type == KUBE_EVENT_DELETED) {
        if (Kube_store_del(inf->store, group, name) && wants_deltas(inf))
            push(ds, CH_DELETE, old_obj, NULL);
    } else if (!rv || !old || old->rv <= rv) { /* older than the cached copy (a write-through): keep that */
        if (Kube_informer_put(inf, inf->store, group, name, ev->object) == 0 && wants_deltas(inf))
            push(ds, old ? CH_UPDATE : CH_ADD, old_obj, Kube_store_get(inf->store, group, name)->obj);
    }
    json_decref(old_obj);
    if (rv > inf->seen_rv)
        inf->seen_rv = rv;
    Kube_informer_bump(inf);
}

static int on_watch_event(const struct kube_watch_event *ev, void *ud)
{
    struct kube_informer *inf = ud;
    const char *name = kube_obj_name(ev->object);
    if (ev->type == KUBE_EVENT_BOOKMARK || !name) /* the resuming watch tracks bookmarks */
        return 0;
    char *group = Kube_informer_group_of(inf, ev->object);
    if (!group)
        return 0;
    KLOG_TRACE("informer %s: %s %s %s resourceVersion %llu", inf->res.resource, kube_event_type_name(ev->type), group, name,
               Kube_informer_rv_num(ev->object));
    if (inf->h.on_object)
        inf->h.on_object(group, ev->object, inf->h.ud);
    struct deltas ds = { NULL, 0, 0, inf->h.on_group ? json_array() : NULL };
    pthread_mutex_lock(&inf->mu);
    apply_event_locked(inf, ev, group, name, &ds);
    pthread_mutex_unlock(&inf->mu);
    json_array_append_new(ds.groups, json_string(group));
    dispatch(inf, &ds);
    free(group);
    return 0;
}

/* ---- the background thread ---- */

/* Records a failure and waits (cancellable) before the next attempt; 1 when cancelled. */
static int fail_and_wait(struct kube_informer *inf, const char *what, const struct kube_error *err, int *attempt)
{
    struct kube_retry_policy p = { 0, 500, 10000, 0 };
    char *m = kube_strdup_printf("%s %s: %s", what, inf->res.resource, err->message ? err->message : "error");
    int64_t delay = kube_backoff_delay_ms(&p, ++*attempt, NULL);
    kube_log(*attempt > 1 ? KUBE_LOG_WARN : KUBE_LOG_DEBUG, "informer: %s; retrying in %lld ms", m ? m : what,
             (long long)delay);
    set_error(inf, m);
    return kube_cancel_sleep_ms(inf->cancel, delay);
}

/* Lists (one list per process at a time) and replaces the cache; *rv the list's
 * resourceVersion. 0 ok, -1 failed (err set). */
static int relist(struct kube_informer *inf, char **rv, struct kube_error *err)
{
    pthread_mutex_t *gate = inf->list_gate ? inf->list_gate : &list_gate;
    pthread_mutex_lock(gate);
    struct store *fresh = list_fresh(inf, rv, err);
    pthread_mutex_unlock(gate);
    if (!fresh)
        return -1;
    replace_all(inf, fresh, *rv);
    set_error(inf, NULL);
    /* the pages' parse trees are freed but their pages stay in this thread's arena, pinned by
     * the stored objects allocated among them: hand the free pages back */
    malloc_trim(0);
    return 0;
}

static void *run(void *arg)
{
    struct kube_informer *inf = arg;
    int attempt = 0;
    while (!kube_cancel_requested(inf->cancel)) {
        struct kube_error err = KUBE_ERROR_INIT;
        char *rv = NULL;
        if (relist(inf, &rv, &err) < 0) {
            int stop = err.reason == KUBE_CANCELLED || fail_and_wait(inf, "list", &err, &attempt);
            kube_error_clear(&err);
            if (stop)
                break;
            continue;
        }
        struct kube_list_opts wo = { .label_selector = inf->label_selector,
                                     .field_selector = inf->field_selector,
                                     .resource_version = rv,
                                     .timeout_seconds = inf->watch_timeout_s,
                                     .allow_bookmarks = 1 };
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
        } else {
            attempt = 0;
        }
        kube_error_clear(&err);
    }
    pthread_mutex_lock(&inf->mu);
    inf->stopped = 1;
    pthread_cond_broadcast(&inf->cond);
    pthread_mutex_unlock(&inf->mu);
    return NULL;
}

/* ---- life cycle ---- */

static int copy_opt(char **dst, const char *src)
{
    *dst = src && *src ? strdup(src) : NULL;
    return src && *src && !*dst ? -1 : 0;
}

/* Copies r and the string options into inf. 0 ok, -1 out of memory. */
static int copy_config(struct kube_informer *inf, const struct kube_resource *r, const struct kube_informer_opts *o)
{
    inf->res = *r;
    if (copy_opt(&inf->strs[0], r->group) || copy_opt(&inf->strs[1], r->version) || copy_opt(&inf->strs[2], r->resource) ||
        copy_opt(&inf->strs[3], r->kind) || copy_opt(&inf->ns, o->ns) || copy_opt(&inf->label_selector, o->label_selector) ||
        copy_opt(&inf->field_selector, o->field_selector))
        return -1;
    inf->res.group = inf->strs[0] ? inf->strs[0] : "";
    inf->res.version = inf->strs[1];
    inf->res.resource = inf->strs[2];
    inf->res.kind = inf->strs[3];
    inf->page_size = o->page_size > 0 ? o->page_size : 500;
    inf->watch_timeout_s = o->watch_timeout_s > 0 ? o->watch_timeout_s : 300;
    inf->index = o->index;
    inf->transform = o->transform;
    inf->compact = o->compact;
    inf->list_gate = o->list_gate;
    return 0;
}

/* Frees what inf owns (not the thread: stopped first) and inf. */
static void release(struct kube_informer *inf)
{
    for (int i = 0; i < 4; i++)
        free(inf->strs[i]);
    free(inf->ns);
    free(inf->label_selector);
    free(inf->field_selector);
    free(inf->last_error);
    Kube_store_free(inf->store);
    kube_cancel_free(inf->cancel);
    free(inf);
}

struct kube_informer *kube_informer_new(struct kube_client *c, const struct kube_resource *r,
                                        const struct kube_informer_opts *opts, const struct kube_informer_handlers *handlers,
                                        char **errmsg)
{
    struct kube_informer_opts o = opts ? *opts : (struct kube_informer_opts){ 0 };
    struct kube_selector *sel = kube_selector_parse(o.label_selector, errmsg);
    if (!sel)
        return NULL;
    kube_selector_free(sel);
    if (!r || !r->resource) {
        kube_set_err(errmsg, "informer: no resource");
        return NULL;
    }
    struct kube_informer *inf = calloc(1, sizeof *inf);
    if (!inf) {
        kube_set_err(errmsg, "informer: out of memory");
        return NULL;
    }
    inf->c = c;
    if (handlers)
        inf->h = *handlers;
    inf->store = Kube_store_new();
    inf->cancel = kube_cancel_new();
    if (copy_config(inf, r, &o) < 0 || !inf->store || !inf->cancel || pthread_mutex_init(&inf->mu, NULL)) {
        kube_set_err(errmsg, "informer: out of memory");
        release(inf);
        return NULL;
    }
    if (kube_cond_init_monotonic(&inf->cond, NULL) < 0) {
        kube_set_err(errmsg, "informer: cannot create a condition variable");
        pthread_mutex_destroy(&inf->mu);
        release(inf);
        return NULL;
    }
    return inf;
}

int kube_informer_start(struct kube_informer *inf, char **errmsg)
{
    if (inf->started || !inf->c)
        return kube_set_err(errmsg, "informer %s: %s", inf->res.resource, inf->c ? "already started" : "no client");
    /* the thread takes no signals: programs handle theirs (SIGCHLD, SIGTERM) on their own threads */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&inf->thr, NULL, run, inf);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc)
        return kube_set_err(errmsg, "informer %s: cannot start thread", inf->res.resource);
    inf->started = 1;
    return 0;
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
    release(inf);
}
