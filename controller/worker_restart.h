/* worker_restart.h - bounded recovery from lost workers (runPolicy.backoffLimit)
 * and the MPIJob's record of its restarts (status.restartCount, workerRestarts,
 * restarts). */
#ifndef WORKER_RESTART_H
#define WORKER_RESTART_H

#include <jansson.h>

struct sync_ctx;

/* Event reason (Warning) for a worker pod deleted to be re-created. */
#define R_WORKER_RESTARTED "WorkerRestarted"

/* For a v2beta1 MPIJob with runPolicy.backoffLimit N > 0 that has not finished: every worker
 * pod in phase Failed (failed or evicted) is deleted, so that the next sync re-creates it,
 * while status.workerRestarts < N; each is recorded once (pod name and creationTimestamp) in
 * status.restarts with
 * a WorkerRestarted Event. The launcher, whose agent stops mpirun when a worker goes, is
 * retried by its Job (the same backoffLimit). Returns how many failed workers are being
 * restarted now (they do not fail the job). Each sets Restarting=True with the
 * Event's words (the launcher's record of the run's end follows: launcher_restart.h). */
int worker_restart_lost(struct sync_ctx *c);
/* 1 when pod (a worker) is one worker_restart_lost recorded: it is being re-created. */
int worker_restart_recorded(struct sync_ctx *c, const json_t *pod);
/* 1 when a worker restart was recorded after pod (a launcher pod) was created: its failed
 * worker wait was about that worker, and the Job's retry will wait for the new one. */
int worker_restart_after(struct sync_ctx *c, const json_t *pod);

/* The Job's failed count can move before the pod watch delivers the failed launcher's record
 * (two watches, no order): the newest launcher entry written without it takes the record
 * (status.launcherFailure, its reason) once a later sync has it. */
void worker_restart_fill_launcher(struct sync_ctx *c);

#endif
