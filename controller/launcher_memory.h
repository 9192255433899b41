/* launcher_memory.h - the last launcher pod of each MPIJob seen with a termination record,
 * remembered from the pod informer's events. The batch Job deletes a restarting
 * (restartPolicy OnFailure) launcher pod when it gives up, often before a sync reads it from
 * the cache; the agent's reason (which worker, ImagePullBackOff, ...) lives only in that pod's
 * termination message, so the Failed condition takes it from here (issue #8, F7). */
#ifndef LAUNCHER_MEMORY_H
#define LAUNCHER_MEMORY_H

#include <jansson.h>

struct launcher_memory;

/* A new, empty memory (NULL on allocation failure). */
struct launcher_memory *launcher_memory_new(void);
/* Looks at one pod as the informer received it (group key "ns/job"); a launcher pod with a
 * terminated container (a failed init container, or any main container) is remembered
 * (pruned) when it is the newest such pod of its job. Returns 1 when pod is a launcher pod
 * with such a record (remembered or not), else 0. Thread-safe. */
int launcher_memory_observe(struct launcher_memory *m, const char *key, const json_t *pod);
/* The remembered pod of key (new reference) or NULL. Thread-safe. */
json_t *launcher_memory_get(struct launcher_memory *m, const char *key);
/* Forgets key (the MPIJob is gone). Thread-safe. */
void launcher_memory_forget(struct launcher_memory *m, const char *key);
/* Frees the memory (NULL is fine). */
void launcher_memory_free(struct launcher_memory *m);

#endif
