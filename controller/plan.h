/* plan.h - building a reconcile plan (plan.c): its actions, Events and requeue. */
#ifndef CONTROLLER_PLAN_H
#define CONTROLLER_PLAN_H

#include "reconcile.h"

/* Appends an action on obj (stolen; NULL marks the plan for retry). */
void plan_obj(struct plan *p, enum act_kind k, enum res_kind r, json_t *obj);
/* Appends an action on a named object (obj stolen, may be NULL). */
void plan_named(struct plan *p, enum act_kind k, enum res_kind r, const char *name, json_t *obj);
/* Appends an Event on the MPIJob. */
void plan_event(struct plan *p, const char *type, const char *reason, const char *msg);
/* Marks a launcher restart recorded now: the restart counters (reason: the metric's label). */
void plan_restart(struct plan *p, const char *reason);
/* Asks for another sync after ms (the earliest request wins). */
void plan_requeue(struct plan *p, int64_t ms);

#endif
