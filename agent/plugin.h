/* plugin.h - `kubectl mpijob`: mpi-agent run under the name kubectl-mpijob (the kubectl plugin,
 * docs/agent.md "kubectl mpijob"). Its options (kubectl's conventions), its verbs, the API reads
 * they share and the pure functions that turn an MPIJob (and its pods, its Kueue Workload) into a
 * table row, an age or the one sentence of `why`. */
#ifndef MPI_AGENT_PLUGIN_H
#define MPI_AGENT_PLUGIN_H

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

#include "session.h"

#define PLUGIN_NAME "kubectl-mpijob"

enum plugin_output {
    PLUGIN_OUT_TABLE = 0,
    PLUGIN_OUT_WIDE,
    PLUGIN_OUT_JSON,
    PLUGIN_OUT_YAML,
    PLUGIN_OUT_NAME,
};

/* The plugin's command line: kubectl passes it everything after `kubectl mpijob`. */
struct plugin_opts {
    const char *verb;   /* get, describe, logs, why, exec, hostfile */
    char *namespace;    /* -n/--namespace (NULL: the context's, else "default") */
    int all_namespaces; /* -A/--all-namespaces (get) */
    char *context;      /* --context */
    char *kubeconfig;   /* --kubeconfig (NULL: $KUBECONFIG, ~/.kube/config) */
    enum plugin_output output;
    int follow;   /* logs -f */
    int previous; /* logs --previous */
    long rank;    /* logs --rank R, -1 = every line */
    long worker;  /* exec --worker I, -1 = not given */
    int verbose;  /* -v */
    char **args;  /* positional arguments (JOB...) */
    int nargs;
    char **cmd; /* exec: the command after -- */
    int ncmd;
};

/* Entry point when argv[0]'s basename is kubectl-mpijob: parses, connects, runs the verb.
 * Returns the exit code: 0 ok, 1 an error (`error: ...` or kubectl's NotFound line on stderr). */
int agent_plugin_main(int argc, char **argv);

/* The verbs: each returns the exit code and prints its own errors. s is connected. */
int plugin_get(struct agent_session *s, const struct plugin_opts *po);
int plugin_describe(struct agent_session *s, const struct plugin_opts *po);
int plugin_why(struct agent_session *s, const struct plugin_opts *po);
int plugin_logs(struct agent_session *s, const struct plugin_opts *po);
int plugin_exec(struct agent_session *s, const struct plugin_opts *po);
int plugin_hostfile(struct agent_session *s, const struct plugin_opts *po);

/* ---- API reads shared by the verbs (plugin_api.c) ---- */

/* Gets MPIJob ns/name. NULL when absent: prints kubectl's
 * `Error from server (NotFound): mpijobs.kubeflow.org "NAME" not found`, or `error: ...`. */
json_t *plugin_get_job(struct agent_session *s, const char *name);
/* The one JOB argument of a verb, got: NULL when there is not exactly one or it cannot be read
 * (printed: the usage, or as plugin_get_job). */
json_t *plugin_one_job(struct agent_session *s, const struct plugin_opts *po);
/* Lists the MPIJobs of ns (NULL: every namespace): the List object, or NULL (error printed). */
json_t *plugin_list_jobs(struct agent_session *s, const char *ns);
/* The pods of a job (label mpi_job_name) as an array sorted by name, [] on any error. */
json_t *plugin_job_pods(struct agent_session *s, const char *ns, const char *job);
/* The Events whose involvedObject is the MPIJob (name, kind), oldest first; [] on any error. */
json_t *plugin_job_events(struct agent_session *s, const char *ns, const char *job);
/* The Kueue Workload owned by the job (kueue.x-k8s.io v1beta2, else v1beta1), or NULL when there is
 * none or Kueue is not installed. */
json_t *plugin_job_workload(struct agent_session *s, const json_t *job);
/* Prints `error: MSG` on stderr (kubectl's style) and returns 1. */
int plugin_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- pure parts (plugin_view.c, plugin_why_text.c) ---- */

/* kubectl's age: "5s", "3m2s", "15m", "2h5m", "20h", "2d3h", "40d", "3y12d" (d = now - then, ms).
 * Writes into buf (at least 16 bytes) and returns it. */
const char *plugin_human_age(int64_t d_ms, char *buf, size_t bufsz);
/* The age of an RFC 3339 timestamp at now_ms into buf; "<unknown>" when ts is absent or bad. */
const char *plugin_age_of(const char *ts, int64_t now_ms, char *buf, size_t bufsz);
/* The job's state: Failed, Succeeded, Suspended, Restarting, Running, Created, else Pending. */
const char *plugin_job_state(const json_t *job);
/* The condition of that type whose status is "True", or NULL. */
const json_t *plugin_true_condition(const json_t *job, const char *type);

/* One row of `kubectl mpijob get` (strings owned by the row). */
struct plugin_row {
    char *ns, *name, *state, *workers, *age, *launch, *reason;
    char *launcher, *nodes; /* -o wide, from the job's pods */
};
/* Fills r from job (and its pods, an array, for the wide columns; NULL: "<none>") at now_ms.
 * WORKERS is Running workers (status.replicaStatuses.Worker.active) / spec replicas; LAUNCH is
 * created → mpirunStarted from status.launchPhases ("-" before). 0, or -1 with *errmsg. */
int plugin_row_fill(const json_t *job, const json_t *pods, int64_t now_ms, struct plugin_row *r, char **errmsg);
/* Frees the row's strings and zeroes it. */
void plugin_row_free(struct plugin_row *r);
/* The REASON column: the short attribution ("rank 1 exit code 3", "ImagePullBackOff: pod P",
 * "suspended", ...) or "" (new string, NULL on allocation failure). */
char *plugin_short_reason(const json_t *job);

/* The one sentence of `why`, from the job, its pods (array, may be empty) and its Kueue Workload
 * (or NULL). New string (no newline), NULL on allocation failure. */
char *plugin_why_text(const json_t *job, const json_t *pods, const json_t *workload);

/* Prints rows x cols cells (row-major, row 0 the header) as kubectl lays out a table, each line
 * after indent; NULL or "" cells show as <none>. */
void plugin_table_print(FILE *f, const char *indent, const char *const *cells, size_t rows, size_t cols);
/* Writes v as YAML the way kubectl -o yaml does (block style, quoted strings where plain
 * would read as another type). 0, or -1 with *errmsg. */
int plugin_yaml_write(FILE *f, const json_t *v, char **errmsg);
/* The line of an Open MPI (`[1,R]<stdout>:`) or MPICH (`[R] `) tagged output that belongs to
 * rank: 1 when line (not NUL-terminated, len bytes) is that rank's, else 0. */
int plugin_line_of_rank(const char *line, size_t len, long rank);

#endif
