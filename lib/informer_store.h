/* informer_store.h - the informer's storage (internal to lib/): objects grouped
 * by a group key (the namespace, or what the informer's index function says,
 * e.g. "ns/job"), each held either as a shared jansson value or, for caches of
 * thousands of objects, as compact JSON text in one allocation with its name
 * (a parsed pruned object costs ~8x its text in jansson's hash tables). One
 * allocation per group (key inline) chained in a hash table; entries chained
 * in their group. Not thread-safe: the informer's lock guards it. */
#ifndef KUBE_INFORMER_STORE_H
#define KUBE_INFORMER_STORE_H

#include <stddef.h>
#include <jansson.h>

struct store;

struct store_entry {
    struct store_entry *next;
    unsigned long long rv; /* metadata.resourceVersion as a number, 0 when not numeric */
    json_t *obj;           /* the object (reference held), or NULL when stored as text */
    char data[];           /* name '\0', then the text '\0' when obj is NULL */
};

/* A new empty store, or NULL when out of memory. */
struct store *Kube_store_new(void);
/* Frees s and everything in it (NULL is fine). */
void Kube_store_free(struct store *s);
/* Stores (or replaces) name in group: obj (a reference is taken) when not NULL, else text.
 * 0 ok, -1 out of memory (the old entry, if any, stays). */
int Kube_store_put(struct store *s, const char *group, const char *name, json_t *obj, const char *text,
                   unsigned long long rv);
/* Removes name from group (and the group once empty); 1 removed, 0 absent. */
int Kube_store_del(struct store *s, const char *group, const char *name);
/* The entry name in group (valid until s changes) or NULL. */
const struct store_entry *Kube_store_get(const struct store *s, const char *group, const char *name);
/* The entry's object name and its text (NULL when held as a jansson value). */
const char *Kube_store_entry_name(const struct store_entry *e);
const char *Kube_store_entry_text(const struct store_entry *e);
/* 1 when group has objects. */
int Kube_store_has_group(const struct store *s, const char *group);
/* Calls fn(group, entry, ud) for every object of group (group NULL: of every group). */
void Kube_store_foreach(const struct store *s, const char *group,
                        void (*fn)(const char *group, const struct store_entry *e, void *ud), void *ud);
/* Calls fn(group, ud) for every group. */
void Kube_store_groups_foreach(const struct store *s, void (*fn)(const char *group, void *ud), void *ud);
/* Number of objects stored. */
size_t Kube_store_count(const struct store *s);

#endif
