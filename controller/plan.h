/* plan.h - a reconcile plan (plan.c): its types (the ordered API actions, Events, status
 * update, metric observations and requeue that reconcile_plan computes and apply.c executes),
 * the calls that build it and plan_free. */
#ifndef CONTROLLER_PLAN_H
#define CONTROLLER_PLAN_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>
#include "res_kind.h"

enum act_kind {
    ACT_CREATE,     /* POST obj */
    ACT_PATCH,      /* merge-patch obj onto name (may carry the resourceVersion: a precondition) */
    ACT_DELETE,     /* DELETE name */
    ACT_STATUS,     /* PUT the MPIJob's status subresource (obj = whole MPIJob) */
    ACT_EVENT,      /* record an Event on the MPIJob */
    ACT_SSH_SECRET, /* generate a key pair and POST the Secret <job>-ssh */
};

struct action {
    enum act_kind kind;
    enum res_kind res;
    char *name;                         /* object name (PATCH/DELETE/SSH_SECRET) */
    json_t *obj;                        /* owned */
    char *ev_type, *ev_reason, *ev_msg; /* ACT_EVENT */
    int by_update;                      /* ACT_PATCH through list + PUT (patch not granted, access.h) */
};

struct plan {
    struct action *a;
    size_t n, cap;
    int64_t requeue_after_ms; /* > 0: sync again after this long (deadline, ttl, waiting) */
    int retry;                /* transient problem (e.g. foreign object): retry with backoff */
    /* metrics */
    int created, succeeded, failed, restarted;
    double launch_latency_s; /* created -> Running, < 0 when not observed now */
    json_t *new_phases;      /* {phase: seconds since creation} first recorded now (owned) */
    char *launcher_pod;      /* current launcher pod name, for mpi_operator_job_info */
    int invalid;             /* the job failed validation */
    const char *fail_reason; /* with failed: the failure metric's reason (static; NULL = "unknown") */
    json_t *restart_reasons; /* the restart metric's reason of each restart recorded now (owned) */
};

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
/* Frees everything a plan owns and zeroes it. */
void plan_free(struct plan *p);

#endif
