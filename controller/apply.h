/* apply.h - a reconcile plan carried out through the API (apply.c). */
#ifndef CONTROLLER_APPLY_H
#define CONTROLLER_APPLY_H

#include <jansson.h>
#include "kube/client.h"
#include "events.h"
#include "reconcile.h"

/* Where apply_plan reports what the API server now holds after each write (the caches'
 * write-through): stored = the reply object of a create/update/patch/delete-in-progress,
 * gone = an object that no longer exists (deleted, or NotFound on delete). */
struct apply_sink {
    void (*stored)(void *ud, enum res_kind r, const json_t *obj);
    void (*gone)(void *ud, enum res_kind r, const char *name);
    void *ud;
};

/* 1 when a create that failed with err may have stored the object all the same: its answer was
 * lost (no reply, a timeout, a server error after the request was sent) or the name exists
 * (AlreadyExists). apply_plan then reads the name (GET) and, when the job owns what it finds,
 * counts the create as done and puts the object in the cache (sink), so that no sync POSTs it
 * a second time; 0 for a refusal (4xx), a throttle (429/503) or a cancel. */
int apply_create_maybe_stored(const struct kube_error *err);

/* Executes one plan for job key ("ns/name") against the API (sink may be NULL; its Events go
 * to ev, which may be NULL: posted at once). Returns 0 when every action succeeded or needed
 * no retry, -1 when the key should be retried with backoff. */
int apply_plan(struct kube_client *c, struct events *ev, const json_t *job, const struct plan *p,
               const struct apply_sink *sink);

#endif
