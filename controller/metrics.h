/* metrics.h - the operator's Prometheus metrics and its HTTP endpoint
 * (/metrics, /healthz, /readyz on --monitoring-port). Counters as upstream
 * (mpi_operator_jobs_{created,successful,failed,restarted}_total), gauges
 * mpi_operator_job_info{launcher,namespace} (+ the alias mpi_operator_job_infos
 * the seed's PromQL uses) and mpi_operator_is_leader, histograms of launch
 * latency (created -> Running) and of each launch phase, and a summary of
 * reconcile durations. Thread-safe. */
#ifndef CONTROLLER_METRICS_H
#define CONTROLLER_METRICS_H

#include <stdint.h>

enum metric_counter { M_CREATED, M_SUCCEEDED, M_FAILED, M_RESTARTED, M__COUNT };

/* Initialises the registry (once, before any other call). */
void metrics_init(void);
/* Adds 1 to a counter. */
void metrics_inc(enum metric_counter c);
/* Sets mpi_operator_is_leader. */
void metrics_set_leader(int is_leader);
/* Sets readiness for /readyz. */
void metrics_set_ready(int ready);
/* Returns the readiness set by metrics_set_ready. */
int metrics_is_ready(void);
/* Records (or with launcher NULL removes) job "ns/name"'s info gauge. */
void metrics_job_info(const char *key, const char *ns, const char *launcher);
/* Observes the created -> Running latency in seconds. */
void metrics_launch_latency(double seconds);
/* Observes one launch phase (seconds since the MPIJob was created). */
void metrics_launch_phase(const char *phase, double seconds);
/* Observes one reconcile's duration in seconds. */
void metrics_reconcile(double seconds);
/* The exposition text (new string). */
char *metrics_render(void);
/* Starts the HTTP server on port (0 = off) on a background thread. 0 ok, -1 with *err. */
int metrics_serve(int port, char **err);
/* Stops the server thread. */
void metrics_stop(void);

#endif
