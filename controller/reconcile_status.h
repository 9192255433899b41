/* reconcile_status.h - the MPIJob's status from what a sync observed (reconcile_status.c). */
#ifndef CONTROLLER_RECONCILE_STATUS_H
#define CONTROLLER_RECONCILE_STATUS_H

#include <jansson.h>
#include "sync_ctx.h"

/* Computes replicaStatuses, Running/Restarting/Succeeded/Failed and the launch phases. */
void reconcile_status(struct sync_ctx *c);
/* Returns 1 when a batch Job has a Complete or Failed condition. */
int reconcile_job_finished(const json_t *job);

#endif
