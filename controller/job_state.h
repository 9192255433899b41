/* job_state.h - the one state an MPIJob is in, read from its status conditions, for the
 * metrics mpi_operator_jobs{state} and mpi_operator_job_blocked_since_timestamp_seconds
 * (controller/job_state.c). */
#ifndef CONTROLLER_JOB_STATE_H
#define CONTROLLER_JOB_STATE_H

#include <jansson.h>

/* The states, in the order the metric lists them. A job is in exactly one. */
enum job_state {
    JS_PENDING,    /* no condition yet (not synced since it was created) */
    JS_CREATED,    /* Created, nothing later */
    JS_BLOCKED,    /* Blocked=True (a pod cannot start), not finished, not suspended */
    JS_RUNNING,    /* Running=True */
    JS_RESTARTING, /* Restarting=True */
    JS_SUSPENDED,  /* Suspended=True */
    JS_SUCCEEDED,  /* Succeeded=True */
    JS_FAILED,     /* Failed=True */
    JS__COUNT
};

/* What the metrics keep of one job. */
struct job_state_info {
    enum job_state state;
    double blocked_since; /* JS_BLOCKED: the Blocked condition's lastTransitionTime (epoch s); else 0 */
    const char *reason;   /* JS_BLOCKED: its reason, borrowed from the job (e.g. "Unschedulable"); else NULL */
};

/* Reads job's state from its status.conditions (Failed, Succeeded, Suspended, Blocked,
 * Restarting, Running, Created: the first True wins). A Blocked condition without a parsable
 * lastTransitionTime counts from now_s. */
void job_state_read(const json_t *job, double now_s, struct job_state_info *out);
/* The state's label value ("pending", "created", "blocked", ...); "?" out of range. */
const char *job_state_name(enum job_state s);

#endif
