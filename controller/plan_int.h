/* plan_int.h - internal helpers for building a reconcile plan (reconcile*.c). */
#ifndef PLAN_INT_H
#define PLAN_INT_H

#include "reconcile.h"

/* Appends an action on obj (stolen; NULL marks the plan for retry). */
void plan_obj(struct plan *p, enum act_kind k, enum res_kind r, json_t *obj);
/* Appends an action on a named object (obj stolen, may be NULL). */
void plan_named(struct plan *p, enum act_kind k, enum res_kind r, const char *name, json_t *obj);
/* Appends an Event on the MPIJob. */
void plan_event(struct plan *p, const char *type, const char *reason, const char *msg);
/* Asks for another sync after ms (the earliest request wins). */
void plan_requeue(struct plan *p, int64_t ms);

/* The per-sync working state shared by reconcile.c and reconcile_status.c. */
struct sync_ctx {
    const struct observed *obs;
    const struct build_opts *o;
    const struct mpijob *j;
    struct plan *p;
    json_t *status; /* the status being computed (owned) */
    int64_t now_ms;
    char now[40];
    json_t **workers;     /* [replicas] borrowed worker pods by index, NULL = absent */
    json_t *launcher_pod; /* newest launcher pod (borrowed) or NULL */
    long long launchers_running;
};

/* Sets a condition and emits its event when it changed; returns 1 when it changed. */
int ctx_cond(struct sync_ctx *c, const char *type, const char *st, const char *reason, const char *what,
             const char *ev_type);
/* Computes replicaStatuses, Running/Restarting/Succeeded/Failed and the launch phases. */
void status_from_observed(struct sync_ctx *c);
/* The Blocked condition and its Event from the first pod that cannot start (written only when
 * that pod or its reason changes); "has failed: ..." (new string) once the launcher has been
 * blocked on itself for the worker timeout, else NULL (controller/blocked.c). */
char *blocked_update(struct sync_ctx *c);
/* Returns 1 when a batch Job has a Complete or Failed condition. */
int job_finished(const json_t *job);
/* Returns 1 when pod is being deleted. */
int pod_terminating(const json_t *pod);
/* pod's status.phase or "". */
const char *pod_phase(const json_t *pod);
/* Returns 1 when pod's Ready condition is True. */
int pod_ready(const json_t *pod);

#endif
