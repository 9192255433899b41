/* reconcile.h - the level-triggered sync of one MPIJob as a pure function:
 * observed objects (from the informer caches) + time in, an ordered plan of
 * API actions, events, a status update, metric observations and a requeue
 * delay out. apply.c executes a plan; unit tests inspect it. */
#ifndef RECONCILE_H
#define RECONCILE_H

#include <stdint.h>
#include <jansson.h>
#include "objects.h"
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

struct observed {
    json_t *job; /* the MPIJob (required) */
    json_t *configmap, *service, *sa, *role, *rolebinding, *secret, *podgroup, *launcher_job;
    json_t *pods;          /* array: the job's pods (workers and launchers), may be NULL */
    json_t *launcher_seen; /* the newest launcher pod seen with a termination record, possibly
                            * deleted since (launcher_memory.h), may be NULL */
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

/* Computes the plan for one sync at now_ms (epoch). The plan must be freed with plan_free. */
void reconcile_plan(const struct observed *obs, const struct build_opts *o, int64_t now_ms, struct plan *p);
/* Frees everything a plan owns and zeroes it. */
void plan_free(struct plan *p);

#endif
