/* controller.h - the running controller: options, the caches it watches, the
 * work queue, worker threads running reconcile plans through the API. */
#ifndef CONTROLLER_CONTROLLER_H
#define CONTROLLER_CONTROLLER_H

#include <jansson.h>
#include "kube/client.h"
#include "kube/cancel.h"
#include "objects.h"
#include "reconcile.h"

struct options {
    const char *kubeconfig, *context, *ns;
    const char *master; /* --master: API server URL overriding the kubeconfig's */
    int threadiness, monitoring_port, verbosity;
    int leader_elect;
    const char *lock_ns, *lock_name;
    int lease_s, renew_deadline_s, retry_s;
    double kube_api_qps;  /* --kube-api-qps: client-side limit on requests, 0 = none (upstream 5) */
    int kube_api_burst;   /* --kube-api-burst (default 10, as upstream) */
    int queue_rate_limit; /* --controller-queue-rate-limit (upstream default 10/s) */
    int queue_burst;      /* --controller-queue-burst (upstream default 100) */
    /* klog's flags, accepted as upstream's Deployment passes them; our log always goes to
     * stderr (klog's default with -logtostderr), whatever they say */
    int alsologtostderr, logtostderr;
    int stderrthreshold; /* 0 INFO, 1 WARNING, 2 ERROR, 3 FATAL */
    struct build_opts build;
    /* The MPIJob version the cluster serves (crds.h's mpijob_discover, at start; not a flag,
     * as upstream has none); NULL = v2beta1. */
    const struct kube_resource *mpijob_res;
};

/* Parses argv into o (defaults from the environment). 0 ok, 1 when the program should exit 0
 * (--help/--version printed), -1 with *err on a bad flag. */
int options_parse(int argc, char **argv, struct options *o, char **err);

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
 * 0 ok, -1 with *err (NULL *err when stop triggered). */
int controller_start(struct controller *ctl, struct kube_cancel *stop, char **err);
/* Serves this controller's /metrics, /healthz and /readyz on --monitoring-port (nothing when it
 * is 0) until controller_free; call it before the leader election, so that a standby answers
 * /readyz. 0 ok, -1 with *err. */
int controller_serve(struct controller *ctl, char **err);
/* This controller's metrics registry (owned by ctl): leadership and readiness are set on it. */
struct metrics *controller_metrics(struct controller *ctl);
/* Stops workers and caches (returns within a few seconds). */
void controller_stop(struct controller *ctl);
/* Called by the main loop: counts as the workers' beat while no key waits (see health.h). */
void controller_beat(struct controller *ctl);
/* Frees ctl. */
void controller_free(struct controller *ctl);

/* Where apply_plan reports what the API server now holds after each write (the caches'
 * write-through): stored = the reply object of a create/update/patch/delete-in-progress,
 * gone = an object that no longer exists (deleted, or NotFound on delete). */
struct apply_sink {
    void (*stored)(void *ud, enum res_kind r, const json_t *obj);
    void (*gone)(void *ud, enum res_kind r, const char *name);
    void *ud;
};

/* The Events of one controller: a bounded queue (4,096) and the thread that posts it. */
struct events;
/* A new queue with no poster (event_record posts at once until events_async_start), or NULL. */
struct events *events_new(void);
/* Stops the poster (as events_async_stop) and frees q (NULL is fine). */
void events_free(struct events *q);

/* Executes one plan for job key ("ns/name") against the API (sink may be NULL; its Events go
 * to ev, which may be NULL: posted at once). Returns 0 when every action succeeded or needed
 * no retry, -1 when the key should be retried with backoff. */
int apply_plan(struct kube_client *c, struct events *ev, const json_t *job, const struct plan *p,
               const struct apply_sink *sink);
/* Records a core v1 Event on the MPIJob (best effort): queued in q for its poster thread while
 * one runs (events_async_start), else (or with q NULL) posted at once through c. */
void event_record(struct events *q, struct kube_client *c, const json_t *job, const char *type, const char *reason,
                  const char *msg);
/* Starts q's thread that posts recorded Events through c (borrowed). 0 ok, -1 on failure. */
int events_async_start(struct events *q, struct kube_client *c);
/* Posts what q holds (5 s at most; the rest is dropped, logged) and stops its thread. */
void events_async_stop(struct events *q);

#endif
