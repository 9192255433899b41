/* metrics.h - the operator's Prometheus metrics and its HTTP endpoint
 * (/metrics, /healthz, /readyz on --monitoring-port). Counters as upstream
 * (mpi_operator_jobs_{created,successful,failed,restarted}_total), gauges
 * mpi_operator_job_info{launcher,namespace} (+ the alias mpi_operator_job_infos
 * the seed's PromQL uses) and mpi_operator_is_leader, histograms of launch
 * latency (created -> Running) and of each launch phase, and a summary of
 * reconcile durations; for alerts and dashboards the jobs by state
 * (mpi_operator_jobs{state}), each blocked job's blocked-since time, reconcile errors, the
 * work queue's depth, the API requests by method and code (rest_client_requests_total) and
 * the process_* metrics. Thread-safe. */
#ifndef CONTROLLER_METRICS_H
#define CONTROLLER_METRICS_H

#include <stddef.h>
#include <stdint.h>

struct job_state_info;

enum metric_counter { M_CREATED, M_SUCCEEDED, M_FAILED, M_RESTARTED, M__COUNT };

/* One registry (a controller owns one; several may live in one process). */
struct metrics;
/* A new, empty registry, or NULL (out of memory). */
struct metrics *metrics_new(void);
/* Frees m (NULL is fine); stop its server first. */
void metrics_free(struct metrics *m);
/* Adds 1 to a counter. */
void metrics_inc(struct metrics *m, enum metric_counter c);
/* Sets mpi_operator_is_leader. */
void metrics_set_leader(struct metrics *m, int is_leader);
/* Sets readiness for /readyz. */
void metrics_set_ready(struct metrics *m, int ready);
/* Returns the readiness set by metrics_set_ready. */
int metrics_is_ready(struct metrics *m);
/* Records (or with launcher NULL removes) job "ns/name"'s info gauge. */
void metrics_job_info(struct metrics *m, const char *key, const char *ns, const char *launcher);
/* Observes the created -> Running latency in seconds. */
void metrics_launch_latency(struct metrics *m, double seconds);
/* Observes one launch phase (seconds since the MPIJob was created). */
void metrics_launch_phase(struct metrics *m, const char *phase, double seconds);
/* Adds 1 to mpi_operator_job_failures_total{reason} (reason: exit_code, signal, oom,
 * worker_lost; anything else or NULL counts as unknown). */
void metrics_failure(struct metrics *m, const char *reason);
/* Adds 1 to mpi_operator_job_restarts_total{reason} (the same reasons as metrics_failure). */
void metrics_restart(struct metrics *m, const char *reason);
/* Observes one reconcile's duration in seconds. */
void metrics_reconcile(struct metrics *m, double seconds);
/* Records job "ns/name"'s state (job_state.h: mpi_operator_jobs{state} and, while it is
 * blocked, mpi_operator_job_blocked_since_timestamp_seconds); info NULL removes the job. */
void metrics_job_state(struct metrics *m, const char *key, const struct job_state_info *info);
/* Adds 1 to mpi_operator_reconcile_errors_total (a sync that failed and is retried). */
void metrics_reconcile_error(struct metrics *m);
/* Adds 1 to rest_client_requests_total{code,method}: one API request answered with HTTP code
 * (0: no answer, the label "<error>"). */
void metrics_api_request(struct metrics *m, const char *method, long code);
/* Makes mpi_operator_workqueue_depth read fn(ud) at each scrape (fn NULL: the gauge is absent).
 * fn must not call into m. */
void metrics_set_queue_depth(struct metrics *m, size_t (*fn)(void *ud), void *ud);
/* The exposition text (new string). */
char *metrics_render(struct metrics *m);

#endif
