/* reconcile.h - the level-triggered sync of one MPIJob as a pure function:
 * observed objects (from the informer caches) + time in, an ordered plan of
 * API actions, events, a status update, metric observations and a requeue
 * delay out (struct plan, plan.h). apply.c executes a plan; unit tests inspect it. */
#ifndef RECONCILE_H
#define RECONCILE_H

#include <stdint.h>
#include <jansson.h>
#include "objects.h"
#include "plan.h"

struct observed {
    json_t *job; /* the MPIJob (required) */
    json_t *configmap, *service, *sa, *role, *rolebinding, *secret, *podgroup, *launcher_job;
    json_t *pods;          /* array: the job's pods (workers and launchers), may be NULL */
    json_t *launcher_seen; /* the newest launcher pod seen with a termination record, possibly
                            * deleted since (launcher_memory.h), may be NULL */
};

/* Computes the plan for one sync at now_ms (epoch). The plan must be freed with plan_free. */
void reconcile_plan(const struct observed *obs, const struct build_opts *o, int64_t now_ms, struct plan *p);

#endif
