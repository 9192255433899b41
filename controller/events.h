/* events.h - core v1 Events on MPIJobs, queued and posted by a thread (events.c). */
#ifndef CONTROLLER_EVENTS_H
#define CONTROLLER_EVENTS_H

#include <jansson.h>
#include "kube/client.h"

/* The Events of one controller: a bounded queue (4,096) and the thread that posts it. */
struct events;
/* A new queue with no poster (events_record posts at once until events_async_start), or NULL. */
struct events *events_new(void);
/* Stops the poster (as events_async_stop) and frees q (NULL is fine). */
void events_free(struct events *q);
/* Records a core v1 Event on the MPIJob (best effort): queued in q for its poster thread while
 * one runs (events_async_start), else (or with q NULL) posted at once through c. */
void events_record(struct events *q, struct kube_client *c, const json_t *job, const char *type, const char *reason,
                   const char *msg);
/* Starts q's thread that posts recorded Events through c (borrowed). 0 ok, -1 on failure. */
int events_async_start(struct events *q, struct kube_client *c);
/* Posts what q holds (5 s at most; the rest is dropped, logged) and stops its thread. */
void events_async_stop(struct events *q);

#endif
