/* plugin_view.c - what `kubectl mpijob get` shows of one MPIJob, from its JSON alone: kubectl's
 * ages, the state (the condition that decides it), WORKERS, LAUNCH and the short REASON. Pure. */
#include "plugin.h"

#include <stdlib.h>
#include <string.h>

#include "kube/json.h"
#include "kube/rfc3339.h"
#include "kube/util.h"

const char *plugin_human_age(int64_t d_ms, char *buf, size_t bufsz)
{
    long long s = d_ms / 1000, m = s / 60, h = s / 3600, d = h / 24;
    if (d_ms < -1000)
        snprintf(buf, bufsz, "<invalid>");
    else if (s < 120)
        snprintf(buf, bufsz, "%llds", s < 0 ? 0 : s);
    else if (m < 10 && s % 60)
        snprintf(buf, bufsz, "%lldm%llds", m, s % 60);
    else if (m < 180)
        snprintf(buf, bufsz, "%lldm", m);
    else if (h < 8 && m % 60)
        snprintf(buf, bufsz, "%lldh%lldm", h, m % 60);
    else if (h < 48)
        snprintf(buf, bufsz, "%lldh", h);
    else if (h < 24 * 8 && h % 24)
        snprintf(buf, bufsz, "%lldd%lldh", d, h % 24);
    else if (h < 24 * 365 * 2)
        snprintf(buf, bufsz, "%lldd", d);
    else if (h < 24 * 365 * 8 && d % 365)
        snprintf(buf, bufsz, "%lldy%lldd", d / 365, d % 365);
    else
        snprintf(buf, bufsz, "%lldy", d / 365);
    return buf;
}

const char *plugin_age_of(const char *ts, int64_t now_ms, char *buf, size_t bufsz)
{
    int64_t t;
    if (!ts || kube_time_parse_ms(ts, &t) < 0) {
        snprintf(buf, bufsz, "<unknown>");
        return buf;
    }
    return plugin_human_age(now_ms - t, buf, bufsz);
}

const json_t *plugin_true_condition(const json_t *job, const char *type)
{
    size_t i;
    json_t *c;
    json_array_foreach(kube_json_at(job, "status", "conditions"), i, c) {
        const char *t = kube_json_at_str(c, "type"), *st = kube_json_at_str(c, "status");
        if (t && st && !strcmp(t, type) && !strcmp(st, "True"))
            return c;
    }
    return NULL;
}

const char *plugin_job_state(const json_t *job)
{
    static const char *order[] = { "Failed", "Succeeded", "Suspended", "Restarting", "Running", "Created" };
    for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++)
        if (plugin_true_condition(job, order[i]))
            return order[i];
    return "Pending";
}

/* The short form of status.rankFailure, or NULL when there is none (new string). */
static char *rank_reason(const json_t *f)
{
    const char *why = kube_json_at_str(f, MPIK8S_FAIL_REASON) ?: "";
    json_t *rank = kube_json_at(f, MPIK8S_FAIL_RANK);
    const char *pod = kube_json_at_str(f, MPIK8S_FAIL_POD);
    char *who = json_is_integer(rank) ? kube_strdup_printf("rank %lld", (long long)json_integer_value(rank))
                                      : kube_strdup_printf("pod %s", pod ? pod : "?");
    char *out = NULL;
    if (!who)
        return NULL;
    if (!strcmp(why, MPIK8S_FAIL_R_OOM))
        out = kube_strdup_printf("%s OOMKilled", who);
    else if (kube_json_at_str(f, MPIK8S_FAIL_SIGNAL))
        out = kube_strdup_printf("%s %s", who, kube_json_at_str(f, MPIK8S_FAIL_SIGNAL));
    else if (json_is_integer(kube_json_at(f, MPIK8S_FAIL_EXIT_CODE)))
        out = kube_strdup_printf("%s exit code %lld", who, (long long)kube_json_at_int(f, 0, MPIK8S_FAIL_EXIT_CODE));
    else if (!strcmp(why, MPIK8S_FAIL_R_WORKER_LOST))
        out = kube_strdup_printf("worker lost: %s", pod ? pod : "?");
    else
        out = kube_strdup_printf("%s failed", who);
    free(who);
    return out;
}

/* "worker pod P" out of a Blocked message "MPIJob ns/n is blocked: worker pod P: Reason: ...", or NULL. */
static char *blocked_pod(const char *msg)
{
    const char *p = msg ? strstr(msg, " is blocked: ") : NULL;
    if (!p)
        return NULL;
    p += strlen(" is blocked: ");
    const char *e = strstr(p, ": ");
    return e ? strndup(p, (size_t)(e - p)) : strdup(p);
}

char *plugin_short_reason(const json_t *job)
{
    const json_t *c;
    if ((c = plugin_true_condition(job, "Failed"))) {
        const json_t *f = kube_json_at(job, "status", "rankFailure");
        return json_is_object(f) ? rank_reason(f) : strdup(kube_json_at_str(c, "reason") ?: "Failed");
    }
    if (plugin_true_condition(job, "Succeeded"))
        return strdup("");
    if (plugin_true_condition(job, "Suspended") || kube_json_at_bool(job, 0, "spec", "runPolicy", "suspend")) {
        const char *q = kube_json_at_str(job, "metadata", "labels", "kueue.x-k8s.io/queue-name");
        return q ? kube_strdup_printf("suspended: Kueue queue %s", q) : strdup("suspended");
    }
    if ((c = plugin_true_condition(job, "Blocked"))) {
        char *pod = blocked_pod(kube_json_at_str(c, "message"));
        char *out = kube_strdup_printf("%s: %s", kube_json_at_str(c, "reason") ?: "Blocked", pod ? pod : "?");
        free(pod);
        return out;
    }
    if (plugin_true_condition(job, "Restarting")) {
        const char *r = kube_json_at_str(json_array_get(kube_json_at(job, "status", "restarts"), 0), "reason");
        return kube_strdup_printf("restarting%s%s", r ? ": " : "", r ? r : "");
    }
    return strdup("");
}

/* LAUNCH: created → mpirunStarted from status.launchPhases, as an age ("-" before). */
static char *launch_total(const json_t *job)
{
    const json_t *ph = kube_json_at(job, "status", "launchPhases");
    int64_t a, b;
    if (kube_time_parse_ms(kube_json_at_str(ph, "created") ?: "", &a) < 0 ||
        kube_time_parse_ms(kube_json_at_str(ph, MPIK8S_PHASE_MPIRUN_STARTED) ?: "", &b) < 0)
        return strdup("-");
    char buf[32];
    return strdup(plugin_human_age(b - a, buf, sizeof(buf)));
}

/* The wide columns: the newest launcher pod and the distinct nodes of the job's pods. */
static int wide_columns(const json_t *pods, struct plugin_row *r)
{
    const char *launcher = NULL, *lct = "";
    size_t i, cap = sizeof("<none>");
    json_t *p;
    json_array_foreach(pods, i, p) {
        const char *ct = kube_json_at_str(p, "metadata", "creationTimestamp") ?: "";
        if (!strcmp(kube_obj_label(p, MPIK8S_LABEL_ROLE) ?: "", MPIK8S_ROLE_LAUNCHER) && strcmp(ct, lct) >= 0) {
            launcher = kube_obj_name(p);
            lct = ct;
        }
        cap += strlen(kube_json_at_str(p, "spec", "nodeName") ?: "") + 1;
    }
    r->launcher = strdup(launcher ? launcher : "<none>");
    r->nodes = calloc(1, cap);
    if (!r->launcher || !r->nodes)
        return -1;
    json_array_foreach(pods, i, p) {
        const char *n = kube_json_at_str(p, "spec", "nodeName");
        if (!n || !*n)
            continue;
        size_t nl = strlen(n), len = strlen(r->nodes);
        int seen = 0;
        for (const char *q = r->nodes; (q = strstr(q, n)); q += nl)
            seen |= (q == r->nodes || q[-1] == ',') && (q[nl] == ',' || !q[nl]);
        if (!seen)
            snprintf(r->nodes + len, cap - len, "%s%s", len ? "," : "", n);
    }
    if (!*r->nodes)
        strcpy(r->nodes, "<none>");
    return 0;
}

int plugin_row_fill(const json_t *job, const json_t *pods, int64_t now_ms, struct plugin_row *r, char **errmsg)
{
    memset(r, 0, sizeof(*r));
    const char *name = kube_obj_name(job);
    if (!name)
        return kube_set_err(errmsg, "MPIJob: metadata.name: expected a string");
    char age[32];
    long long total = kube_json_at_int(job, 0, "spec", "mpiReplicaSpecs", "Worker", "replicas");
    long long active = kube_json_at_int(job, 0, "status", "replicaStatuses", "Worker", "active");
    r->ns = strdup(kube_obj_namespace(job) ?: "");
    r->name = strdup(name);
    r->state = strdup(plugin_job_state(job));
    r->workers = kube_strdup_printf("%lld/%lld", active, total);
    r->age = strdup(plugin_age_of(kube_json_at_str(job, "metadata", "creationTimestamp"), now_ms, age, sizeof(age)));
    r->launch = launch_total(job);
    r->reason = plugin_short_reason(job);
    if (!r->ns || !r->name || !r->state || !r->workers || !r->age || !r->launch || !r->reason || wide_columns(pods, r) < 0) {
        plugin_row_free(r);
        return kube_set_err(errmsg, "out of memory");
    }
    return 0;
}

void plugin_row_free(struct plugin_row *r)
{
    free(r->ns);
    free(r->name);
    free(r->state);
    free(r->workers);
    free(r->age);
    free(r->launch);
    free(r->reason);
    free(r->launcher);
    free(r->nodes);
    memset(r, 0, sizeof(*r));
}
