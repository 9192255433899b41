/* plugin_get.c - `kubectl mpijob get [JOB...]`: the MPIJobs of a namespace (-A: all) or the ones
 * named, as kubectl prints them: a table padded as kubectl's (-o wide adds LAUNCHER and NODES),
 * or the objects (-o json|yaml: one object, or a List), or mpijob.kubeflow.org/NAME (-o name). */
#include "plugin.h"

#include <stdlib.h>
#include <string.h>

#include "kube/clock.h"
#include "kube/json.h"
#include "kube/util.h"

#define COLS 9

/* Prints the rows: NAMESPACE (with -A) NAME STATE WORKERS AGE LAUNCH REASON [LAUNCHER NODES (wide)]. */
static int print_table(const struct plugin_row *rows, size_t n, const struct plugin_opts *po)
{
    static const char *head[COLS] = {
        "NAMESPACE", "NAME", "STATE", "WORKERS", "AGE", "LAUNCH", "REASON", "LAUNCHER", "NODES"
    };
    size_t first = po->all_namespaces ? 0 : 1, ncols = (po->output == PLUGIN_OUT_WIDE ? COLS : COLS - 2) - first;
    const char **cells = calloc((n + 1) * ncols, sizeof(*cells));
    if (!cells)
        return plugin_error("out of memory");
    for (size_t i = 0; i <= n; i++) {
        const struct plugin_row *r = i ? &rows[i - 1] : NULL;
        const char *v[COLS] = { r ? r->ns : NULL,      r ? r->name : NULL,     r ? r->state : NULL,
                                r ? r->workers : NULL, r ? r->age : NULL,      r ? r->launch : NULL,
                                r ? r->reason : NULL,  r ? r->launcher : NULL, r ? r->nodes : NULL };
        for (size_t c = 0; c < ncols; c++)
            cells[i * ncols + c] = r ? v[first + c] : head[first + c];
    }
    plugin_table_print(stdout, "", cells, n + 1, ncols);
    free(cells);
    return 0;
}

/* The pods of job (same namespace) out of all, as a new array. */
static json_t *pods_of(const json_t *all, const json_t *job)
{
    json_t *out = json_array(), *p;
    size_t i;
    json_array_foreach(all, i, p) {
        if (!strcmp(kube_obj_label(p, MPIK8S_LABEL_JOB_NAME) ?: "", kube_obj_name(job) ?: "") &&
            !strcmp(kube_obj_namespace(p) ?: "", kube_obj_namespace(job) ?: ""))
            json_array_append(out, p);
    }
    return out;
}

static int print_rows(struct agent_session *s, const json_t *items, const struct plugin_opts *po)
{
    size_t n = json_array_size(items);
    struct plugin_row *rows = calloc(n + 1, sizeof(*rows));
    json_t *all = po->output == PLUGIN_OUT_WIDE ? plugin_job_pods(s, po->all_namespaces ? NULL : s->ns, NULL) : NULL;
    int rc = rows ? 0 : plugin_error("out of memory");
    int64_t now = kube_realtime_ms();
    for (size_t i = 0; rc == 0 && i < n; i++) {
        json_t *job = json_array_get(items, i), *pods = all ? pods_of(all, job) : NULL;
        char *err = NULL;
        if (plugin_row_fill(job, pods, now, &rows[i], &err) < 0)
            rc = plugin_error("%s", err);
        free(err);
        json_decref(pods);
    }
    if (rc == 0)
        rc = print_table(rows, n, po);
    for (size_t i = 0; rows && i < n; i++)
        plugin_row_free(&rows[i]);
    free(rows);
    json_decref(all);
    return rc;
}

/* Prints items (or the one object when single) in po's output format. */
static int print_items(struct agent_session *s, json_t *items, int single, const struct plugin_opts *po)
{
    size_t i;
    json_t *job;
    if (po->output == PLUGIN_OUT_NAME) {
        json_array_foreach(items, i, job)
            printf("mpijob.kubeflow.org/%s\n", kube_obj_name(job));
        return 0;
    }
    if (po->output != PLUGIN_OUT_JSON && po->output != PLUGIN_OUT_YAML)
        return print_rows(s, items, po);
    json_t *doc = single ? json_incref(json_array_get(items, 0))
                         : json_pack("{s:s, s:O, s:s, s:{s:s}}", "apiVersion", "v1", "items", items, "kind", "List",
                                     "metadata", "resourceVersion", "");
    char *err = NULL;
    int rc = 0;
    if (!doc)
        rc = plugin_error("out of memory");
    else if (po->output == PLUGIN_OUT_YAML)
        rc = plugin_yaml_write(stdout, doc, &err) < 0 ? plugin_error("%s", err) : 0;
    else if (json_dumpf(doc, stdout, JSON_INDENT(4) | JSON_SORT_KEYS) < 0 || fputc('\n', stdout) == EOF)
        rc = plugin_error("writing the output failed");
    free(err);
    json_decref(doc);
    return rc;
}

/* The jobs named in po->args, in order; a missing one is reported (kubectl's words) and sets *missing. */
static json_t *named_jobs(struct agent_session *s, const struct plugin_opts *po, int *missing)
{
    json_t *items = json_array();
    for (int i = 0; items && i < po->nargs; i++) {
        json_t *job = plugin_get_job(s, po->args[i]);
        if (job)
            json_array_append_new(items, job);
        else
            *missing = 1;
    }
    return items;
}

int plugin_get(struct agent_session *s, const struct plugin_opts *po)
{
    if (po->all_namespaces && po->nargs)
        return plugin_error("a resource cannot be retrieved by name across all namespaces");
    int missing = 0;
    json_t *list = NULL, *items;
    if (po->nargs) {
        items = named_jobs(s, po, &missing);
    } else {
        list = plugin_list_jobs(s, po->all_namespaces ? NULL : s->ns);
        if (!list)
            return 1;
        items = json_incref(kube_json_at(list, "items"));
    }
    int rc = items ? 0 : plugin_error("out of memory");
    if (rc == 0 && !po->nargs && !json_array_size(items) && po->output != PLUGIN_OUT_JSON && po->output != PLUGIN_OUT_YAML)
        fprintf(stderr, "No resources found%s%s%s\n", po->all_namespaces ? "" : " in ", po->all_namespaces ? "" : s->ns,
                po->all_namespaces ? "" : " namespace.");
    else if (rc == 0 && json_array_size(items))
        rc = print_items(s, items, po->nargs == 1, po);
    else if (rc == 0 && !po->nargs)
        rc = print_items(s, items, 0, po);
    json_decref(items);
    json_decref(list);
    return rc ? rc : missing;
}
