/* controller.h - the running controller (controller.c): the caches it watches, the work
 * queue, worker threads running reconcile plans through the API (apply.h). */
#ifndef CONTROLLER_CONTROLLER_H
#define CONTROLLER_CONTROLLER_H

#include "kube/client.h"
#include "kube/cancel.h"
#include "options.h"

struct controller;

/* Creates the controller: c (borrowed) for changes, watch_c (borrowed) for the caches' lists
 * and watches (give it a cancel token so that shutdown interrupts them). Everything it runs
 * is its own (metrics registry and server, Event queue, caches' list gate, trim timer), so
 * several controllers may live in one process. Starts no thread. */
struct controller *controller_new(struct kube_client *c, struct kube_client *watch_c, const struct options *o);
/* Replaces ctl's options with o: what the operator learned from the API server after the
 * election (the MPIJob version discovery found). Call before controller_start. */
void controller_learned(struct controller *ctl, const struct options *o);
/* Creates and starts the caches, waits for them (60 s at most, or until stop triggers), starts the workers.
 * 0 ok, -1 with *errmsg (NULL *errmsg when stop triggered). */
int controller_start(struct controller *ctl, struct kube_cancel *stop, char **errmsg);
/* Serves this controller's /metrics, /healthz and /readyz on --monitoring-port (nothing when it
 * is 0) until controller_free; call it before the leader election, so that a standby answers
 * /readyz. 0 ok, -1 with *errmsg. */
int controller_serve(struct controller *ctl, char **errmsg);
/* This controller's metrics registry (owned by ctl): leadership and readiness are set on it. */
struct metrics *controller_metrics(struct controller *ctl);
/* Stops workers and caches (returns within a few seconds). */
void controller_stop(struct controller *ctl);
/* Called by the main loop: counts as the workers' beat while no key waits (see health.h). */
void controller_beat(struct controller *ctl);
/* Frees ctl. */
void controller_free(struct controller *ctl);

#endif
