/* informer_store.c - the informer's grouped object storage (see informer_store.h):
 * a chained hash table of groups, each a singly linked list of entries. */
#include "informer_store.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct group {
    struct group *next;
    struct store_entry *head;
    char key[];
};

struct store {
    struct group **buckets;
    size_t nbuckets, ngroups, count;
};

static uint64_t hash(const char *s)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

static void entry_free(struct store_entry *e)
{
    json_decref(e->obj);
    free(e);
}

struct store *Kube_store_new(void)
{
    struct store *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->nbuckets = 64;
    s->buckets = calloc(s->nbuckets, sizeof *s->buckets);
    if (!s->buckets) {
        free(s);
        return NULL;
    }
    return s;
}

void Kube_store_free(struct store *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->nbuckets; i++) {
        for (struct group *g = s->buckets[i], *gn; g; g = gn) {
            gn = g->next;
            for (struct store_entry *e = g->head, *en; e; e = en) {
                en = e->next;
                entry_free(e);
            }
            free(g);
        }
    }
    free(s->buckets);
    free(s);
}

/* The slot pointing at group key (*slot NULL when absent). */
static struct group **find_group(const struct store *s, const char *key)
{
    struct group **p = &s->buckets[hash(key) & (s->nbuckets - 1)];
    while (*p && strcmp((*p)->key, key) != 0)
        p = &(*p)->next;
    return p;
}

/* The slot pointing at entry name in g (*slot NULL when absent). */
static struct store_entry **find_entry(struct group *g, const char *name)
{
    struct store_entry **p = &g->head;
    while (*p && strcmp((*p)->data, name) != 0)
        p = &(*p)->next;
    return p;
}

/* Doubles the bucket array once groups outnumber buckets (best effort). */
static void grow(struct store *s)
{
    size_t n = s->nbuckets * 2;
    struct group **b = calloc(n, sizeof *b);
    if (!b)
        return;
    for (size_t i = 0; i < s->nbuckets; i++) {
        for (struct group *g = s->buckets[i], *gn; g; g = gn) {
            gn = g->next;
            struct group **slot = &b[hash(g->key) & (n - 1)];
            g->next = *slot;
            *slot = g;
        }
    }
    free(s->buckets);
    s->buckets = b;
    s->nbuckets = n;
}

/* The group's slot, creating the group when absent; NULL when out of memory. */
static struct group *group_at(struct store *s, const char *key)
{
    struct group **gp = find_group(s, key);
    if (!*gp) {
        size_t kl = strlen(key) + 1;
        struct group *g = malloc(sizeof *g + kl);
        if (!g)
            return NULL;
        memcpy(g->key, key, kl);
        g->head = NULL;
        g->next = NULL;
        *gp = g;
        s->ngroups++;
    }
    return *gp;
}

int Kube_store_put(struct store *s, const char *key, const char *name, json_t *obj, const char *text, unsigned long long rv)
{
    struct group *g = group_at(s, key);
    if (!g)
        return -1;
    size_t nl = strlen(name) + 1, tl = obj || !text ? 0 : strlen(text) + 1;
    struct store_entry *e = malloc(sizeof *e + nl + tl);
    if (!e) {
        if (!g->head)
            Kube_store_del(s, key, ""); /* drops the empty group */
        return -1;
    }
    e->rv = rv;
    e->obj = json_incref(obj);
    memcpy(e->data, name, nl);
    if (tl)
        memcpy(e->data + nl, text, tl);
    struct store_entry **ep = find_entry(g, name);
    if (*ep) {
        e->next = (*ep)->next;
        entry_free(*ep);
    } else {
        e->next = NULL;
        s->count++;
    }
    *ep = e;
    if (s->ngroups > s->nbuckets)
        grow(s);
    return 0;
}

int Kube_store_del(struct store *s, const char *key, const char *name)
{
    struct group **gp = find_group(s, key), *g = *gp;
    if (!g)
        return 0;
    struct store_entry **ep = find_entry(g, name), *e = *ep;
    if (e) {
        *ep = e->next;
        entry_free(e);
        s->count--;
    }
    if (!g->head) {
        *gp = g->next;
        free(g);
        s->ngroups--;
    }
    return e != NULL;
}

const struct store_entry *Kube_store_get(const struct store *s, const char *key, const char *name)
{
    struct group *g = *find_group(s, key);
    return g ? *find_entry(g, name) : NULL;
}

const char *Kube_store_entry_name(const struct store_entry *e) { return e->data; }

const char *Kube_store_entry_text(const struct store_entry *e) { return e->obj ? NULL : e->data + strlen(e->data) + 1; }

int Kube_store_has_group(const struct store *s, const char *key) { return *find_group(s, key) != NULL; }

static void group_foreach(const struct group *g, void (*fn)(const char *group, const struct store_entry *e, void *ud),
                          void *ud)
{
    for (const struct store_entry *e = g->head; e; e = e->next)
        fn(g->key, e, ud);
}

void Kube_store_foreach(const struct store *s, const char *key,
                        void (*fn)(const char *group, const struct store_entry *e, void *ud), void *ud)
{
    if (key) {
        struct group *g = *find_group(s, key);
        if (g)
            group_foreach(g, fn, ud);
        return;
    }
    for (size_t i = 0; i < s->nbuckets; i++)
        for (struct group *g = s->buckets[i]; g; g = g->next)
            group_foreach(g, fn, ud);
}

void Kube_store_groups_foreach(const struct store *s, void (*fn)(const char *key, void *ud), void *ud)
{
    for (size_t i = 0; i < s->nbuckets; i++)
        for (struct group *g = s->buckets[i]; g; g = g->next)
            fn(g->key, ud);
}

size_t Kube_store_count(const struct store *s) { return s->count; }
