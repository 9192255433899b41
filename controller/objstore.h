/* objstore.h - the caches' storage, built for size: serialised objects grouped
 * by job key ("ns/job"). One allocation per object (name and text inline, its
 * resourceVersion as a number) chained in its group; one per group (key inline)
 * chained in a hash table. With 1,000 jobs a jansson object per group and a
 * json_string per object cost more than the pruned objects themselves. Not
 * thread-safe: the cache's lock guards it. */
#ifndef CONTROLLER_OBJSTORE_H
#define CONTROLLER_OBJSTORE_H

#include <stddef.h>

struct objstore;

/* A new empty store, or NULL when out of memory. */
struct objstore *os_new(void);
/* Frees s and everything in it (NULL is fine). */
void os_free(struct objstore *s);
/* Stores (or replaces) name in group key: text and its resourceVersion rv. 0 ok, -1 out of memory. */
int os_put(struct objstore *s, const char *key, const char *name, const char *text, unsigned long long rv);
/* Removes name from group key (and the group once empty); 1 removed, 0 absent. */
int os_del(struct objstore *s, const char *key, const char *name);
/* The text of name in group key (valid until s changes) or NULL; *rv (if given) its resourceVersion. */
const char *os_get(const struct objstore *s, const char *key, const char *name, unsigned long long *rv);
/* 1 when group key has objects. */
int os_has_group(const struct objstore *s, const char *key);
/* Calls fn(name, text, ud) for every object of group key. */
void os_group_foreach(const struct objstore *s, const char *key,
                      void (*fn)(const char *name, const char *text, void *ud), void *ud);
/* Calls fn(key, ud) for every group. */
void os_keys_foreach(const struct objstore *s, void (*fn)(const char *key, void *ud), void *ud);
/* Number of objects stored. */
size_t os_count(const struct objstore *s);

#endif
