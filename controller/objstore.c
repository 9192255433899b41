/* objstore.c - grouped, compact storage of serialised objects (see objstore.h):
 * a chained hash table of groups, each a singly linked list of entries. */
#include "objstore.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct entry {
    struct entry *next;
    unsigned long long rv;
    char data[]; /* name '\0' text '\0' */
};

struct group {
    struct group *next;
    struct entry *head;
    char key[];
};

struct objstore {
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

struct objstore *os_new(void)
{
    struct objstore *s = calloc(1, sizeof *s);
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

void os_free(struct objstore *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->nbuckets; i++) {
        for (struct group *g = s->buckets[i], *gn; g; g = gn) {
            gn = g->next;
            for (struct entry *e = g->head, *en; e; e = en) {
                en = e->next;
                free(e);
            }
            free(g);
        }
    }
    free(s->buckets);
    free(s);
}

/* The slot pointing at group key (*slot NULL when absent). */
static struct group **find_group(const struct objstore *s, const char *key)
{
    struct group **p = &s->buckets[hash(key) & (s->nbuckets - 1)];
    while (*p && strcmp((*p)->key, key) != 0)
        p = &(*p)->next;
    return p;
}

/* The slot pointing at entry name in g (*slot NULL when absent). */
static struct entry **find_entry(struct group *g, const char *name)
{
    struct entry **p = &g->head;
    while (*p && strcmp((*p)->data, name) != 0)
        p = &(*p)->next;
    return p;
}

/* Doubles the bucket array once groups outnumber buckets (best effort). */
static void grow(struct objstore *s)
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

int os_put(struct objstore *s, const char *key, const char *name, const char *text, unsigned long long rv)
{
    struct group **gp = find_group(s, key);
    if (!*gp) {
        size_t kl = strlen(key) + 1;
        struct group *g = malloc(sizeof *g + kl);
        if (!g)
            return -1;
        memcpy(g->key, key, kl);
        g->head = NULL;
        g->next = NULL;
        *gp = g;
        s->ngroups++;
    }
    struct group *g = *gp;
    size_t nl = strlen(name) + 1, tl = strlen(text) + 1;
    struct entry *e = malloc(sizeof *e + nl + tl);
    if (!e) {
        if (!g->head)
            os_del(s, key, ""); /* drops the empty group */
        return -1;
    }
    e->rv = rv;
    memcpy(e->data, name, nl);
    memcpy(e->data + nl, text, tl);
    struct entry **ep = find_entry(g, name);
    if (*ep) {
        e->next = (*ep)->next;
        free(*ep);
    } else {
        e->next = NULL;
        s->count++;
    }
    *ep = e;
    if (s->ngroups > s->nbuckets)
        grow(s);
    return 0;
}

int os_del(struct objstore *s, const char *key, const char *name)
{
    struct group **gp = find_group(s, key), *g = *gp;
    if (!g)
        return 0;
    struct entry **ep = find_entry(g, name), *e = *ep;
    if (e) {
        *ep = e->next;
        free(e);
        s->count--;
    }
    if (!g->head) {
        *gp = g->next;
        free(g);
        s->ngroups--;
    }
    return e != NULL;
}

const char *os_get(const struct objstore *s, const char *key, const char *name, unsigned long long *rv)
{
    struct group *g = *find_group(s, key);
    struct entry *e = g ? *find_entry(g, name) : NULL;
    if (!e)
        return NULL;
    if (rv)
        *rv = e->rv;
    return e->data + strlen(e->data) + 1;
}

int os_has_group(const struct objstore *s, const char *key)
{
    return *find_group(s, key) != NULL;
}

void os_group_foreach(const struct objstore *s, const char *key,
                      void (*fn)(const char *name, const char *text, void *ud), void *ud)
{
    struct group *g = *find_group(s, key);
    for (struct entry *e = g ? g->head : NULL; e; e = e->next)
        fn(e->data, e->data + strlen(e->data) + 1, ud);
}

void os_keys_foreach(const struct objstore *s, void (*fn)(const char *key, void *ud), void *ud)
{
    for (size_t i = 0; i < s->nbuckets; i++)
        for (struct group *g = s->buckets[i]; g; g = g->next)
            fn(g->key, ud);
}

size_t os_count(const struct objstore *s)
{
    return s->count;
}
