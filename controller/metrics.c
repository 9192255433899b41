/* metrics.c - metric registry and exposition (see metrics.h). */
#include "metrics.h"
#include "job_state.h"
#include "metrics_process.h"
#include "kube/json.h"
#include "kube/util.h"

#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NBUCKETS 14
static const double buckets[NBUCKETS] = { 0.5, 1, 2, 3, 5, 7.5, 10, 15, 20, 30, 60, 120, 300, 600 };
#define RING 8192

struct histo {
    uint64_t counts[NBUCKETS + 1];
    double sum;
    uint64_t n;
};

/* The failure counter's reasons (mpik8s/contract.h's MPIK8S_FAIL_R_*), "unknown" last. */
static const char *const fail_reasons[] = { "exit_code", "signal", "oom", "worker_lost", "unknown" };
#define NREASONS (sizeof fail_reasons / sizeof fail_reasons[0])

struct metrics {
    pthread_mutex_t mu;
    uint64_t counters[M__COUNT];
    uint64_t failures[NREASONS];
    uint64_t restarts[NREASONS];
    int leader, ready;
    uint64_t reconcile_errors;
    json_t *jobs;     /* key -> [ns, launcher] */
    json_t *states;   /* key -> [state, blocked since, reason or null] */
    json_t *requests; /* "METHOD CODE" -> count */
    size_t (*queue_depth)(void *);
    void *queue_ud;
    struct histo latency;
    json_t *phases; /* phase -> index into phase_h */
    struct histo phase_h[16];
    double ring[RING];
    uint64_t rn;
    double rsum;
};

struct metrics *metrics_new(void)
{
    struct metrics *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->jobs = json_object();
    m->phases = json_object();
    m->states = json_object();
    m->requests = json_object();
    if (!m->jobs || !m->phases || !m->states || !m->requests || pthread_mutex_init(&m->mu, NULL) != 0) {
        json_decref(m->jobs);
        json_decref(m->phases);
        json_decref(m->states);
        json_decref(m->requests);
        free(m);
        return NULL;
    }
    return m;
}

void metrics_free(struct metrics *m)
{
    if (!m)
        return;
    json_decref(m->jobs);
    json_decref(m->phases);
    json_decref(m->states);
    json_decref(m->requests);
    pthread_mutex_destroy(&m->mu);
    free(m);
}

void metrics_inc(struct metrics *m, enum metric_counter c)
{
    pthread_mutex_lock(&m->mu);
    m->counters[c]++;
    pthread_mutex_unlock(&m->mu);
}

/* The index of reason in fail_reasons; anything else (NULL too) is "unknown", the last. */
static size_t reason_index(const char *reason)
{
    size_t i = 0;
    while (i + 1 < NREASONS && (!reason || strcmp(reason, fail_reasons[i]) != 0))
        i++;
    return i;
}

void metrics_failure(struct metrics *m, const char *reason)
{
    size_t i = reason_index(reason);
    pthread_mutex_lock(&m->mu);
    m->failures[i]++;
    pthread_mutex_unlock(&m->mu);
}

void metrics_restart(struct metrics *m, const char *reason)
{
    size_t i = reason_index(reason);
    pthread_mutex_lock(&m->mu);
    m->restarts[i]++;
    pthread_mutex_unlock(&m->mu);
}

void metrics_set_leader(struct metrics *m, int is_leader)
{
    pthread_mutex_lock(&m->mu);
    m->leader = is_leader;
    pthread_mutex_unlock(&m->mu);
}

void metrics_set_ready(struct metrics *m, int ready)
{
    pthread_mutex_lock(&m->mu);
    m->ready = ready;
    pthread_mutex_unlock(&m->mu);
}

int metrics_is_ready(struct metrics *m)
{
    pthread_mutex_lock(&m->mu);
    int r = m->ready;
    pthread_mutex_unlock(&m->mu);
    return r;
}

void metrics_job_info(struct metrics *m, const char *key, const char *ns, const char *launcher)
{
    pthread_mutex_lock(&m->mu);
    if (!launcher)
        json_object_del(m->jobs, key);
    else
        json_object_set_new(m->jobs, key, json_pack("[s, s]", ns, launcher));
    pthread_mutex_unlock(&m->mu);
}

void metrics_job_state(struct metrics *m, const char *key, const struct job_state_info *info)
{
    pthread_mutex_lock(&m->mu);
    if (!info)
        json_object_del(m->states, key);
    else
        json_object_set_new(m->states, key,
                            json_pack("[i, f, s?]", (json_int_t)info->state, info->blocked_since, info->reason));
    pthread_mutex_unlock(&m->mu);
}

void metrics_reconcile_error(struct metrics *m)
{
    pthread_mutex_lock(&m->mu);
    m->reconcile_errors++;
    pthread_mutex_unlock(&m->mu);
}

void metrics_api_request(struct metrics *m, const char *method, long code)
{
    char k[48];
    snprintf(k, sizeof k, "%.15s %ld", method ? method : "?", code);
    pthread_mutex_lock(&m->mu);
    json_t *n = json_object_get(m->requests, k);
    if (n)
        json_integer_set(n, json_integer_value(n) + 1);
    else
        json_object_set_new(m->requests, k, json_integer(1));
    pthread_mutex_unlock(&m->mu);
}

void metrics_set_queue_depth(struct metrics *m, size_t (*fn)(void *ud), void *ud)
{
    pthread_mutex_lock(&m->mu);
    m->queue_depth = fn;
    m->queue_ud = ud;
    pthread_mutex_unlock(&m->mu);
}

static void observe(struct histo *h, double v)
{
    int i = 0;
    while (i < NBUCKETS && v > buckets[i])
        i++;
    h->counts[i]++;
    h->sum += v;
    h->n++;
}

void metrics_launch_latency(struct metrics *m, double seconds)
{
    pthread_mutex_lock(&m->mu);
    observe(&m->latency, seconds);
    pthread_mutex_unlock(&m->mu);
}

void metrics_launch_phase(struct metrics *m, const char *phase, double seconds)
{
    pthread_mutex_lock(&m->mu);
    json_t *idx = json_object_get(m->phases, phase);
    size_t i = idx ? (size_t)json_integer_value(idx) : json_object_size(m->phases);
    if (!idx && i < 16)
        json_object_set_new(m->phases, phase, json_integer((json_int_t)i));
    if (i < 16)
        observe(&m->phase_h[i], seconds);
    pthread_mutex_unlock(&m->mu);
}

void metrics_reconcile(struct metrics *m, double seconds)
{
    pthread_mutex_lock(&m->mu);
    m->ring[m->rn % RING] = seconds;
    m->rn++;
    m->rsum += seconds;
    pthread_mutex_unlock(&m->mu);
}

static void put_histo(FILE *f, const char *name, const char *labels, const struct histo *h)
{
    uint64_t cum = 0;
    for (int i = 0; i <= NBUCKETS; i++) {
        cum += h->counts[i];
        if (i < NBUCKETS)
            fprintf(f, "%s_bucket{%s%sle=\"%g\"} %llu\n", name, labels, *labels ? "," : "", buckets[i],
                    (unsigned long long)cum);
        else
            fprintf(f, "%s_bucket{%s%sle=\"+Inf\"} %llu\n", name, labels, *labels ? "," : "", (unsigned long long)cum);
    }
    fprintf(f, "%s_sum%s%s%s %.6f\n", name, *labels ? "{" : "", labels, *labels ? "}" : "", h->sum);
    fprintf(f, "%s_count%s%s%s %llu\n", name, *labels ? "{" : "", labels, *labels ? "}" : "", (unsigned long long)h->n);
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void put_summary(struct metrics *m, FILE *f)
{
    size_t n = m->rn < RING ? m->rn : RING;
    double *s = malloc((n ? n : 1) * sizeof *s);
    fputs("# HELP mpi_operator_reconcile_duration_seconds Time one MPIJob sync took (quantiles over the last 8192 syncs).\n"
          "# TYPE mpi_operator_reconcile_duration_seconds summary\n",
          f);
    if (s && n) {
        memcpy(s, m->ring, n * sizeof *s);
        qsort(s, n, sizeof *s, cmp_d);
        const double qs[] = { 0.5, 0.9, 0.99 };
        for (int i = 0; i < 3; i++) {
            size_t k = (size_t)ceil(qs[i] * (double)n);
            fprintf(f, "mpi_operator_reconcile_duration_seconds{quantile=\"%g\"} %.6f\n", qs[i], s[k ? k - 1 : 0]);
        }
    }
    free(s);
    fprintf(f, "mpi_operator_reconcile_duration_seconds_sum %.6f\nmpi_operator_reconcile_duration_seconds_count %llu\n",
            m->rsum, (unsigned long long)m->rn);
}

/* One counter family labelled by the reasons of fail_reasons. */
static void put_by_reason(FILE *f, const char *name, const char *help, const uint64_t *counts)
{
    fprintf(f, "# HELP %s %s\n# TYPE %s counter\n", name, help, name);
    for (size_t i = 0; i < NREASONS; i++)
        fprintf(f, "%s{reason=\"%s\"} %llu\n", name, fail_reasons[i], (unsigned long long)counts[i]);
}

static void put_counters(struct metrics *m, FILE *f)
{
    static const char *const names[M__COUNT][2] = {
        { "mpi_operator_jobs_created_total", "Counts number of MPI jobs created" },
        { "mpi_operator_jobs_successful_total", "Counts number of MPI jobs successful" },
        { "mpi_operator_jobs_failed_total", "Counts number of MPI jobs failed" },
        { "mpi_operator_jobs_restarted_total", "Counts number of MPI jobs restarted" },
    };
    for (int i = 0; i < M__COUNT; i++)
        fprintf(f, "# HELP %s %s\n# TYPE %s counter\n%s %llu\n", names[i][0], names[i][1], names[i][0], names[i][0],
                (unsigned long long)m->counters[i]);
    put_by_reason(f, "mpi_operator_job_failures_total",
                  "Counts MPI jobs failed, by what failed them (the failed rank's exit code, signal or OOM kill, a "
                  "lost worker, or unknown).",
                  m->failures);
    put_by_reason(f, "mpi_operator_job_restarts_total",
                  "Counts launcher runs that ended early and were retried, by what ended them (as "
                  "mpi_operator_job_failures_total).",
                  m->restarts);
}

static void put_job_info(struct metrics *m, FILE *f, const char *name, const char *help)
{
    fprintf(f, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name);
    const char *k;
    json_t *v;
    json_object_foreach(m->jobs, k, v) {
        fprintf(f, "%s{launcher=\"%s\",namespace=\"%s\"} 1\n", name, json_string_value(json_array_get(v, 1)),
                json_string_value(json_array_get(v, 0)));
    }
}

/* A label value with \\, \" and \\n escaped, as the exposition format asks. */
static void put_label_value(FILE *f, const char *v)
{
    for (; v && *v; v++) {
        if (*v == '\\' || *v == '"')
            fputc('\\', f);
        if (*v == '\n')
            fputs("\\n", f);
        else
            fputc(*v, f);
    }
}

/* mpi_operator_jobs{state} (every state, 0 too) and each blocked job's blocked-since time. */
static void put_job_states(struct metrics *m, FILE *f)
{
    uint64_t n[JS__COUNT] = { 0 };
    const char *k;
    json_t *v;
    json_object_foreach(m->states, k, v) {
        json_int_t st = json_integer_value(json_array_get(v, 0));
        if (st >= 0 && st < JS__COUNT)
            n[st]++;
    }
    fputs("# HELP mpi_operator_jobs Number of MPIJobs by state (the first true of Failed, Succeeded, Suspended, Blocked, "
          "Restarting, Running, Created; pending: no condition yet).\n# TYPE mpi_operator_jobs gauge\n",
          f);
    for (int i = 0; i < JS__COUNT; i++)
        fprintf(f, "mpi_operator_jobs{state=\"%s\"} %llu\n", job_state_name((enum job_state)i), (unsigned long long)n[i]);
    fputs("# HELP mpi_operator_job_blocked_since_timestamp_seconds When the MPIJob's pods became blocked (its Blocked "
          "condition's lastTransitionTime), for each blocked MPIJob.\n"
          "# TYPE mpi_operator_job_blocked_since_timestamp_seconds gauge\n",
          f);
    json_object_foreach(m->states, k, v) {
        if (json_integer_value(json_array_get(v, 0)) != JS_BLOCKED)
            continue;
        const char *slash = strchr(k, '/');
        fputs("mpi_operator_job_blocked_since_timestamp_seconds{mpijob=\"", f);
        put_label_value(f, slash ? slash + 1 : k);
        fputs("\",namespace=\"", f);
        fprintf(f, "%.*s", slash ? (int)(slash - k) : 0, k);
        fputs("\",reason=\"", f);
        put_label_value(f, json_string_value(json_array_get(v, 2)));
        fprintf(f, "\"} %.3f\n", json_real_value(json_array_get(v, 1)));
    }
}

/* rest_client_requests_total{code,method}, as client-go names it. */
static void put_requests(struct metrics *m, FILE *f)
{
    fputs("# HELP rest_client_requests_total Number of HTTP requests to the API server, partitioned by status code and "
          "method.\n# TYPE rest_client_requests_total counter\n",
          f);
    const char *k;
    json_t *v;
    json_object_foreach(m->requests, k, v) {
        const char *sp = strchr(k, ' ');
        if (!sp)
            continue;
        fputs("rest_client_requests_total{code=\"", f);
        fputs(strcmp(sp + 1, "0") == 0 ? "<error>" : sp + 1, f);
        fprintf(f, "\",method=\"%.*s\"} %lld\n", (int)(sp - k), k, (long long)json_integer_value(v));
    }
}

/* The families that are not the registry's own: the work queue's depth and the process. */
static void put_sampled(FILE *f, size_t (*depth)(void *), void *ud)
{
    if (depth)
        fprintf(f,
                "# HELP mpi_operator_workqueue_depth MPIJob keys waiting in the work queue (delayed ones not counted).\n"
                "# TYPE mpi_operator_workqueue_depth gauge\nmpi_operator_workqueue_depth %zu\n",
                depth(ud));
    struct process_stats ps;
    char *err = NULL;
    if (metrics_process_read(&ps, &err) == 0)
        metrics_process_put(f, &ps);
    free(err);
}

char *metrics_render(struct metrics *m)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return NULL;
    pthread_mutex_lock(&m->mu);
    put_counters(m, f);
    put_job_info(m, f, "mpi_operator_job_info", "Information about MPIJob (value 1; launcher = the launcher pod).");
    put_job_info(m, f, "mpi_operator_job_infos", "Alias of mpi_operator_job_info, the name upstream's README queries.");
    fprintf(f,
            "# HELP mpi_operator_is_leader Is this client the leader of this mpi-operator client set?\n"
            "# TYPE mpi_operator_is_leader gauge\nmpi_operator_is_leader %d\n",
            m->leader);
    fputs("# HELP mpi_operator_launch_latency_seconds Time from MPIJob creation to its Running condition.\n"
          "# TYPE mpi_operator_launch_latency_seconds histogram\n",
          f);
    put_histo(f, "mpi_operator_launch_latency_seconds", "", &m->latency);
    fputs("# HELP mpi_operator_launch_phase_seconds Time from MPIJob creation to each launch phase (status.launchPhases).\n"
          "# TYPE mpi_operator_launch_phase_seconds histogram\n",
          f);
    const char *k;
    json_t *v;
    json_object_foreach(m->phases, k, v) {
        char lab[96];
        snprintf(lab, sizeof lab, "phase=\"%s\"", k);
        put_histo(f, "mpi_operator_launch_phase_seconds", lab, &m->phase_h[json_integer_value(v)]);
    }
    put_summary(m, f);
    put_job_states(m, f);
    fprintf(f,
            "# HELP mpi_operator_reconcile_errors_total Counts MPIJob syncs that failed and were requeued with backoff.\n"
            "# TYPE mpi_operator_reconcile_errors_total counter\nmpi_operator_reconcile_errors_total %llu\n",
            (unsigned long long)m->reconcile_errors);
    put_requests(m, f);
    size_t (*depth)(void *) = m->queue_depth;
    void *ud = m->queue_ud;
    pthread_mutex_unlock(&m->mu);
    put_sampled(f, depth, ud);
    if (fclose(f) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}
