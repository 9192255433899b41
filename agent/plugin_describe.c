/* plugin_describe.c - `kubectl mpijob describe JOB`: the job's conditions over time, its launch
 * phases (each with its offset from creation), the rank failure, its pods one by one with why
 * each is not ready (the Blocked reasons worker by worker), its restarts, Kueue's admission and
 * the job's recent Events. */
#include "plugin.h"

#include <stdlib.h>
#include <string.h>

#include "podstate.h"
#include "kube/clock.h"
#include "kube/json.h"
#include "kube/rfc3339.h"
#include "kube/util.h"

#define MAX_EVENTS 20

/* Prints rows of a JSON array as a table: each column a key path of one or two keys. */
struct col {
    const char *head, *k1, *k2;
};

static void print_json_table(const json_t *arr, const struct col *cols, size_t ncols, size_t from)
{
    size_t n = json_array_size(arr) > from ? json_array_size(arr) - from : 0;
    const char **cells = calloc((n + 1) * ncols, sizeof(*cells));
    if (!cells)
        return;
    for (size_t c = 0; c < ncols; c++)
        cells[c] = cols[c].head;
    for (size_t r = 0; r < n; r++)
        for (size_t c = 0; c < ncols; c++) {
            json_t *row = json_array_get(arr, from + r);
            json_t *v = cols[c].k2 ? kube_json_at(row, cols[c].k1, cols[c].k2) : kube_json_at(row, cols[c].k1);
            cells[(r + 1) * ncols + c] = json_string_value(v);
        }
    plugin_table_print(stdout, "  ", cells, n + 1, ncols);
    free(cells);
}

static void print_phases(const json_t *job)
{
    const json_t *ph = kube_json_at(job, "status", "launchPhases");
    static const char *order[] = { "created",
                                   "workersScheduled",
                                   "workersReady",
                                   "launcherStarted",
                                   "agentWorkersReady",
                                   MPIK8S_PHASE_WORKERS_REACHABLE,
                                   MPIK8S_PHASE_MPIRUN_STARTED,
                                   MPIK8S_PHASE_FIRST_OUTPUT,
                                   MPIK8S_PHASE_FINISHED };
    int64_t t0 = 0, t;
    printf("Launch Phases:%s\n", json_object_size(ph) ? "" : "  <none>");
    kube_time_parse_ms(kube_json_at_str(ph, "created") ?: "", &t0);
    for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
        const char *v = kube_json_at_str(ph, order[i]);
        if (v && kube_time_parse_ms(v, &t) == 0)
            printf("  %-18s %-26s +%.1fs\n", order[i], v, (double)(t - t0) / 1000.0);
    }
}

static void print_failure(const json_t *job)
{
    const json_t *f = kube_json_at(job, "status", "rankFailure");
    const char *lf = kube_json_at_str(job, "status", "launcherFailure");
    if (!json_is_object(f) && !lf)
        return;
    printf("Failure:\n");
    if (lf)
        printf("  Launcher:   %s\n", lf);
    if (!json_is_object(f))
        return;
    static const char *keys[] = { MPIK8S_FAIL_MESSAGE, MPIK8S_FAIL_REASON, MPIK8S_FAIL_RANK,
                                  MPIK8S_FAIL_POD,     MPIK8S_FAIL_NODE,   MPIK8S_FAIL_EXIT_CODE,
                                  MPIK8S_FAIL_SIGNAL,  MPIK8S_FAIL_OOM,    MPIK8S_FAIL_MEMORY_LIMIT };
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        json_t *v = json_object_get(f, keys[i]);
        char *text = json_is_string(v) ? strdup(json_string_value(v)) : v ? json_dumps(v, JSON_ENCODE_ANY) : NULL;
        if (text)
            printf("  %-11s %s\n", keys[i], text);
        free(text);
    }
    const char *last = kube_json_at_str(f, MPIK8S_FAIL_LAST_LINES);
    if (last && *last) {
        printf("  lastLines:\n");
        for (const char *p = last; *p;) {
            size_t n = strcspn(p, "\n");
            printf("    %.*s\n", (int)n, p);
            p += n + (p[n] == '\n');
        }
    }
}

static void print_pods(const json_t *pods)
{
    size_t n = json_array_size(pods), i;
    json_t *p;
    printf("Pods:%s\n", n ? "" : "  <none>");
    if (!n)
        return;
    char **cells = calloc((n + 1) * 6, sizeof(*cells));
    static const char *head[] = { "POD", "ROLE", "PHASE", "NODE", "RESTARTS", "WHY NOT READY" };
    if (!cells)
        return;
    for (size_t c = 0; c < 6; c++)
        cells[c] = strdup(head[c]);
    json_array_foreach(pods, i, p) {
        struct agent_pod_view v;
        char **row = cells + (i + 1) * 6;
        if (agent_pod_assess(p, &v) < 0)
            continue;
        row[0] = strdup(kube_obj_name(p) ?: "?");
        row[1] = strdup(kube_obj_label(p, MPIK8S_LABEL_ROLE) ?: "?");
        row[2] = strdup(v.phase);
        row[3] = strdup(v.node ? v.node : "");
        row[4] = kube_strdup_printf("%d", v.restarts);
        row[5] = strdup(v.verdict == AGENT_POD_READY ? "-" : v.reason);
        agent_pod_view_free(&v);
    }
    plugin_table_print(stdout, "  ", (const char *const *)cells, n + 1, 6);
    for (size_t k = 0; k < (n + 1) * 6; k++)
        free(cells[k]);
    free(cells);
}

static void print_restarts(const json_t *job)
{
    const json_t *st = kube_json_at(job, "status");
    long long count = kube_json_at_int(st, 0, "restartCount"), wr = kube_json_at_int(st, 0, "workerRestarts");
    json_t *left = kube_json_at(st, "retriesLeft");
    printf("Restarts:     %lld", count);
    if (wr)
        printf(" (worker restarts %lld)", wr);
    if (json_is_integer(left))
        printf(", retries left %lld", (long long)json_integer_value(left));
    printf("\n");
    static const struct col cols[] = { { "TIME", "time", NULL },
                                       { "REASON", "reason", NULL },
                                       { "MESSAGE", "message", NULL } };
    if (json_array_size(kube_json_at(st, "restarts")))
        print_json_table(kube_json_at(st, "restarts"), cols, 3, 0);
}

static void print_kueue(const json_t *job, const json_t *w)
{
    const char *q = kube_obj_label(job, "kueue.x-k8s.io/queue-name");
    int suspended = kube_json_at_bool(job, 0, "spec", "runPolicy", "suspend");
    const char *wq = q ? q : kube_json_at_str(w, "spec", "queueName");
    if (!suspended)
        printf("Suspended:    false\n");
    else if (q || w)
        printf("Suspended:    true, by Kueue until it admits the job (queue %s)\n", wq ? wq : "?");
    else
        printf("Suspended:    true, by spec.runPolicy.suspend (no Kueue queue): set it to false to run\n");
    if (!q && !w)
        return;
    printf("Kueue:\n  Queue:      %s\n", q ? q : "<none>");
    if (!w) {
        printf("  Workload:   <none>\n");
        return;
    }
    printf("  Workload:   %s\n  ClusterQueue: %s\n", kube_obj_name(w),
           kube_json_at_str(w, "status", "admission", "clusterQueue") ?: "<not admitted>");
    static const struct col cols[] = {
        { "TYPE", "type", NULL }, { "STATUS", "status", NULL }, { "REASON", "reason", NULL }, { "MESSAGE", "message", NULL }
    };
    print_json_table(kube_json_at(w, "status", "conditions"), cols, 4, 0);
}

/* The last MAX_EVENTS Events as a table: TYPE, REASON, AGE (of lastTimestamp, else eventTime), FROM,
 * MESSAGE. */
static void print_events(const json_t *events, int64_t now)
{
    size_t n = json_array_size(events), from = n > MAX_EVENTS ? n - MAX_EVENTS : 0;
    printf("Events:%s\n", n ? "" : "  <none>");
    json_t *rows = json_array();
    for (size_t i = from; rows && i < n; i++) {
        const json_t *ev = json_array_get(events, i);
        const char *t = kube_json_at_str(ev, "lastTimestamp");
        char age[32];
        json_t *row = json_pack("{s:s?, s:s?, s:s, s:s?, s:s?}", "type", kube_json_at_str(ev, "type"), "reason",
                                kube_json_at_str(ev, "reason"), "age",
                                plugin_age_of(t && *t ? t : kube_json_at_str(ev, "eventTime"), now, age, sizeof age), "from",
                                kube_json_at_str(ev, "source", "component"), "message", kube_json_at_str(ev, "message"));
        if (row)
            json_array_append_new(rows, row);
    }
    static const struct col cols[] = { { "TYPE", "type", NULL },
                                       { "REASON", "reason", NULL },
                                       { "AGE", "age", NULL },
                                       { "FROM", "from", NULL },
                                       { "MESSAGE", "message", NULL } };
    if (json_array_size(rows))
        print_json_table(rows, cols, 5, 0);
    json_decref(rows);
}

static void print_head(const json_t *job, int64_t now)
{
    char age[32];
    const char *ct = kube_json_at_str(job, "metadata", "creationTimestamp");
    printf("Name:         %s\nNamespace:    %s\nState:        %s\n", kube_obj_name(job), kube_obj_namespace(job),
           plugin_job_state(job));
    printf("Created:      %s (%s ago)\n", ct ? ct : "<unknown>", plugin_age_of(ct, now, age, sizeof(age)));
    printf("Workers:      %lld/%lld Running\n", kube_json_at_int(job, 0, "status", "replicaStatuses", "Worker", "active"),
           kube_json_at_int(job, 0, "spec", "mpiReplicaSpecs", "Worker", "replicas"));
    static const struct col cols[] = { { "TYPE", "type", NULL },
                                       { "STATUS", "status", NULL },
                                       { "REASON", "reason", NULL },
                                       { "LAST TRANSITION", "lastTransitionTime", NULL },
                                       { "MESSAGE", "message", NULL } };
    const json_t *conds = kube_json_at(job, "status", "conditions");
    printf("Conditions:%s\n", json_array_size(conds) ? "" : "  <none>");
    if (json_array_size(conds))
        print_json_table(conds, cols, 5, 0);
}

int plugin_describe(struct agent_session *s, const struct plugin_opts *po)
{
    json_t *job = plugin_one_job(s, po);
    if (!job)
        return 1;
    json_t *pods = plugin_job_pods(s, s->ns, po->args[0]);
    json_t *events = plugin_job_events(s, s->ns, po->args[0]);
    json_t *w = plugin_job_workload(s, job);
    print_head(job, kube_realtime_ms());
    print_phases(job);
    print_failure(job);
    print_pods(pods);
    print_restarts(job);
    print_kueue(job, w);
    print_events(events, kube_realtime_ms());
    json_decref(w);
    json_decref(events);
    json_decref(pods);
    json_decref(job);
    return fflush(stdout) == 0 ? 0 : 1;
}
