/* informer_read.c - the informer's stored form of objects (transform, compact
 * text) and its lookups and write-through (see kube/informer.h). */
#include "informer_int.h"

#include <stdlib.h>
#include <string.h>

#include "kube/json.h"
#include "kube/log.h"
#include "kube/selector.h"
#include "kube/timer.h"
#include "kube/util.h"

char *Kube_informer_group_of(const struct kube_informer *inf, const json_t *obj)
{
    if (inf->index)
        return inf->index(obj);
    const char *ns = kube_obj_namespace(obj);
    return strdup(ns ? ns : "");
}

unsigned long long Kube_informer_rv_num(const json_t *obj)
{
    const char *rv = kube_obj_resource_version(obj);
    char *end = NULL;
    unsigned long long n = rv && *rv ? strtoull(rv, &end, 10) : 0;
    return end && *end == '\0' ? n : 0;
}

/* The form obj is stored in: *o (new reference) or, compact, *text (new string, without
 * metadata.name: the entry holds it). 0 ok, -1 out of memory. */
static int stored_form(const struct kube_informer *inf, const json_t *obj, json_t **o, char **text)
{
    *o = NULL;
    *text = NULL;
    if (!inf->transform && !inf->compact) {
        *o = json_incref((json_t *)obj);
        return 0;
    }
    json_t *copy = json_deep_copy(obj);
    if (!copy)
        return -1;
    if (inf->transform)
        inf->transform(copy);
    if (!inf->compact) {
        *o = copy;
        return 0;
    }
    json_object_del(json_object_get(copy, "metadata"), "name");
    *text = json_dumps(copy, JSON_COMPACT);
    json_decref(copy);
    return *text ? 0 : -1;
}

int Kube_informer_put(struct kube_informer *inf, struct store *s, const char *group, const char *name, const json_t *obj)
{
    json_t *o;
    char *text;
    int rc = stored_form(inf, obj, &o, &text);
    if (rc == 0)
        rc = Kube_store_put(s, group, name, o, text, Kube_informer_rv_num(obj));
    json_decref(o);
    free(text);
    if (rc < 0)
        KLOG_WARN("informer %s: out of memory storing %s", inf->res.resource, name);
    return rc;
}

json_t *Kube_informer_load(const struct store_entry *e)
{
    if (e->obj)
        return json_incref(e->obj);
    json_t *o = json_loads(Kube_store_entry_text(e), 0, NULL);
    json_t *md = json_object_get(o, "metadata");
    if (o && !json_is_object(md)) {
        md = json_object();
        if (json_object_set_new(o, "metadata", md) < 0)
            md = NULL;
    }
    if (!md || json_object_set_new(md, "name", json_string(Kube_store_entry_name(e))) < 0) {
        json_decref(o);
        return NULL;
    }
    return o;
}

void Kube_informer_bump(struct kube_informer *inf)
{
    inf->gen++;
    pthread_cond_broadcast(&inf->cond);
}

/* ---- lookups ---- */

json_t *kube_informer_get_in(struct kube_informer *inf, const char *group, const char *name)
{
    if (!group || !name)
        return NULL;
    pthread_mutex_lock(&inf->mu);
    const struct store_entry *e = Kube_store_get(inf->store, group, name);
    json_t *o = e ? Kube_informer_load(e) : NULL;
    pthread_mutex_unlock(&inf->mu);
    return o;
}

struct find_ctx {
    const char *ns, *name;
    json_t *found;
};

static void find_in(const char *group, const struct store_entry *e, void *ud)
{
    (void)group;
    struct find_ctx *f = ud;
    if (f->found || strcmp(Kube_store_entry_name(e), f->name) != 0)
        return;
    json_t *o = Kube_informer_load(e);
    const char *ns = kube_obj_namespace(o);
    if (o && strcmp(ns ? ns : "", f->ns) == 0)
        f->found = o;
    else
        json_decref(o);
}

json_t *kube_informer_get(struct kube_informer *inf, const char *ns, const char *name)
{
    if (!inf->index)
        return kube_informer_get_in(inf, ns ? ns : "", name);
    struct find_ctx f = { ns ? ns : "", name, NULL };
    if (!name)
        return NULL;
    pthread_mutex_lock(&inf->mu);
    Kube_store_foreach(inf->store, NULL, find_in, &f);
    pthread_mutex_unlock(&inf->mu);
    return f.found;
}

static void append_to(const char *group, const struct store_entry *e, void *ud)
{
    (void)group;
    json_t *o = Kube_informer_load(e);
    if (o)
        json_array_append_new(ud, o);
}

json_t *kube_informer_group(struct kube_informer *inf, const char *group)
{
    json_t *out = json_array();
    if (!out || !group)
        return out;
    pthread_mutex_lock(&inf->mu);
    Kube_store_foreach(inf->store, group, append_to, out);
    pthread_mutex_unlock(&inf->mu);
    return out;
}

struct kv {
    char *key; /* "ns/name" */
    json_t *v;
};

struct list_ctx {
    const struct kube_selector *sel;
    struct kv *items;
    size_t n, cap;
    int oom;
};

static void collect_match(const char *group, const struct store_entry *e, void *ud)
{
    (void)group;
    struct list_ctx *l = ud;
    json_t *o = l->oom ? NULL : Kube_informer_load(e);
    if (!o || !kube_selector_matches_obj(l->sel, o)) {
        json_decref(o);
        return;
    }
    const char *ns = kube_obj_namespace(o);
    char *key = kube_strdup_printf("%s/%s", ns ? ns : "", Kube_store_entry_name(e));
    if (!key || l->n == l->cap) {
        free(key);
        json_decref(o);
        l->oom = 1;
        return;
    }
    l->items[l->n++] = (struct kv){ key, o };
}

static int cmp_kv(const void *a, const void *b) { return strcmp(((const struct kv *)a)->key, ((const struct kv *)b)->key); }

json_t *kube_informer_list(struct kube_informer *inf, const char *label_selector, char **errmsg)
{
    struct kube_selector *sel = kube_selector_parse(label_selector, errmsg);
    if (!sel)
        return NULL;
    json_t *out = json_array();
    pthread_mutex_lock(&inf->mu);
    struct list_ctx l = { sel, NULL, 0, Kube_store_count(inf->store), 0 };
    l.items = calloc(l.cap ? l.cap : 1, sizeof *l.items);
    if (l.items && out)
        Kube_store_foreach(inf->store, NULL, collect_match, &l);
    pthread_mutex_unlock(&inf->mu);
    if (l.items)
        qsort(l.items, l.n, sizeof *l.items, cmp_kv);
    for (size_t i = 0; i < l.n; i++) {
        if (out && json_array_append(out, l.items[i].v) < 0)
            l.oom = 1;
        json_decref(l.items[i].v);
        free(l.items[i].key);
    }
    if (!l.items || !out || l.oom) {
        json_decref(out);
        out = NULL;
        kube_set_err(errmsg, "informer %s: out of memory", inf->res.resource);
    }
    free(l.items);
    kube_selector_free(sel);
    return out;
}

/* ---- write-through ---- */

void kube_informer_store(struct kube_informer *inf, const json_t *obj)
{
    const char *name = kube_obj_name(obj);
    char *group = inf && name ? Kube_informer_group_of(inf, obj) : NULL;
    if (!group)
        return;
    unsigned long long rv = Kube_informer_rv_num(obj);
    pthread_mutex_lock(&inf->mu);
    /* once the watch delivered this revision the cache is at least as new (and knows of a
     * deletion since): storing then could resurrect a deleted object */
    if (rv && rv > inf->seen_rv && Kube_informer_put(inf, inf->store, group, name, obj) == 0)
        Kube_informer_bump(inf);
    pthread_mutex_unlock(&inf->mu);
    free(group);
}

void kube_informer_drop(struct kube_informer *inf, const char *group, const char *name)
{
    if (!inf || !group || !name)
        return;
    pthread_mutex_lock(&inf->mu);
    if (Kube_store_del(inf->store, group, name))
        Kube_informer_bump(inf);
    pthread_mutex_unlock(&inf->mu);
}

/* ---- counters and waits ---- */

/* Reads the cache's size, its generation and whether it synced, under the lock (each may be NULL). */
static void counters(struct kube_informer *inf, size_t *count, uint64_t *gen, int *synced)
{
    pthread_mutex_lock(&inf->mu);
    if (count)
        *count = Kube_store_count(inf->store);
    if (gen)
        *gen = inf->gen;
    if (synced)
        *synced = inf->synced;
    pthread_mutex_unlock(&inf->mu);
}

size_t kube_informer_count(struct kube_informer *inf)
{
    size_t n;
    counters(inf, &n, NULL, NULL);
    return n;
}

uint64_t kube_informer_generation(struct kube_informer *inf)
{
    uint64_t g;
    counters(inf, NULL, &g, NULL);
    return g;
}

int kube_informer_has_synced(struct kube_informer *inf)
{
    int s;
    counters(inf, NULL, NULL, &s);
    return s;
}

int kube_informer_wait_synced(struct kube_informer *inf, long timeout_ms)
{
    struct timespec dl = kube_deadline_after_ms(timeout_ms);
    pthread_mutex_lock(&inf->mu);
    while (!inf->synced && !inf->stopped && !kube_cond_wait_until(&inf->cond, &inf->mu, timeout_ms < 0 ? NULL : &dl))
        ;
    int s = inf->synced;
    pthread_mutex_unlock(&inf->mu);
    return s;
}

uint64_t kube_informer_wait_change(struct kube_informer *inf, uint64_t since, long timeout_ms)
{
    struct timespec dl = kube_deadline_after_ms(timeout_ms);
    pthread_mutex_lock(&inf->mu);
    while (inf->gen == since && !inf->stopped && !kube_cond_wait_until(&inf->cond, &inf->mu, timeout_ms < 0 ? NULL : &dl))
        ;
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
