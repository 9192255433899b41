/* cond.h - MPIJob status conditions with upstream's setCondition semantics
 * (no-op when type+status+reason are unchanged, lastTransitionTime kept while
 * the status stays, Running/Restarting exclusive, Running flipped to False on
 * Succeeded/Failed, nothing changes once Failed) and the standard messages. */
#ifndef CONTROLLER_COND_H
#define CONTROLLER_COND_H

#include <jansson.h>

#define COND_CREATED "Created"
#define COND_RUNNING "Running"
#define COND_RESTARTING "Restarting"
#define COND_SUCCEEDED "Succeeded"
#define COND_FAILED "Failed"
#define COND_SUSPENDED "Suspended"
#define COND_BLOCKED "Blocked" /* a pod cannot start: controller/blocked.c */

#define R_CREATED "MPIJobCreated"
#define R_RUNNING "MPIJobRunning"
#define R_SUCCEEDED "MPIJobSucceeded"
#define R_FAILED "MPIJobFailed"
#define R_RESTARTING "MPIJobRestarting"
#define R_SUSPENDED "MPIJobSuspended"
#define R_RESUMED "MPIJobResumed"
#define R_EVICTED "MPIJobEvicted"
#define R_VALIDATION "ValidationError"
#define R_DEADLINE "DeadlineExceeded"
#define R_UNBLOCKED "Unblocked"

/* status field keeping the newest failed launcher record ("launcher pod P: <agent summary>"),
 * which the Failed message quotes when the pod is gone (an operator restart lost its memory). */
#define ST_LAUNCHER_FAILURE "launcherFailure"

/* mpi-agent init's exit code when the workers decided its wait (agent/commands.h). */
#define AGENT_EXIT_WORKERS_NOT_READY 3

/* Returns the condition of type in status.conditions (borrowed) or NULL. */
json_t *cond_get(const json_t *status, const char *type);
/* Returns 1 when the condition of type has status "True". */
int cond_true(const json_t *status, const char *type);
/* Returns 1 once Succeeded or Failed is True. */
int cond_finished(const json_t *status);
/* Sets a condition on status (an object; conditions created if missing) at time now (RFC 3339).
 * Returns 1 when the status changed, 0 when it was a no-op. */
int cond_set(json_t *status, const char *type, const char *cstatus, const char *reason, const char *message,
             const char *now);
/* The standard message "MPIJob <ns>/<name> <what>" (new string), e.g. what = "is created.". */
/* Replaces the message and lastUpdateTime of condition type (kept in place, its status, reason
 * and lastTransitionTime unchanged); nothing when there is none. */
void cond_reword(json_t *status, const char *type, const char *message, const char *now);
char *cond_msg(const char *ns, const char *name, const char *what);

#endif
