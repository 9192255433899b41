/* initrecord.c - writing and trusting DEST/init-ready.json, the record `mpi-agent init`
 * leaves for `mpi-agent run` so that a launch waits for its workers once. */
#include "initrecord.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "podstate.h"
#include "safefile.h"
#include "kube/json.h"
#include "kube/util.h"

#define RECORD_MAX (1 << 20) /* 1 MiB: thousands of workers */

static char *record_path(const struct agent_opts *o) { return kube_strdup_printf("%s/%s", o->dest, AGENT_INIT_RECORD); }

/* The record as JSON (new reference) or NULL on allocation failure. */
static json_t *record_json(const struct agent_session *s)
{
    json_t *workers = json_array();
    for (size_t i = 0; workers && i < s->hosts.n; i++) {
        json_t *pod = kube_informer_get(s->inf, s->ns, s->hosts.v[i].pod);
        const char *uid = kube_obj_uid(pod);
        json_array_append_new(workers, json_pack("{s:s, s:s}", "pod", s->hosts.v[i].pod, "uid", uid ? uid : ""));
        json_decref(pod);
    }
    return json_pack("{s:s, s:s, s:s, s:b, s:I, s:I, s:I, s:o}", "job", s->o->job ? s->o->job : "", "namespace", s->ns,
                     "transport", mpik8s_transport_name(s->o->transport), "reachChecked", !s->o->no_reach, "writtenAtMs",
                     (json_int_t)kube_realtime_ms(), "workersReadyMs",
                     (json_int_t)s->phases.at_ms[AGENT_PHASE_WORKERS_READY], "workersReachableMs",
                     (json_int_t)s->phases.at_ms[AGENT_PHASE_WORKERS_REACHABLE], "workers", workers);
}

int agent_init_record_write(const struct agent_session *s, char **errmsg)
{
    char *path = record_path(s->o);
    json_t *rec = s->inf ? record_json(s) : NULL;
    char *text = rec ? json_dumps(rec, JSON_COMPACT) : NULL;
    int rc = -1;
    if (!path || !text)
        kube_set_err(errmsg, "%s: out of memory (or no pod cache)", path ? path : AGENT_INIT_RECORD);
    else
        rc = agent_replace_file(path, text, 0644, errmsg);
    free(text);
    json_decref(rec);
    free(path);
    return rc;
}

/* Reads and parses the record; NULL with *why. */
static json_t *record_read(const struct agent_opts *o, char **why)
{
    char *path = record_path(o);
    char *text = NULL, *err = NULL;
    json_t *rec = NULL;
    if (!path) {
        kube_set_err(why, "out of memory");
    } else if (access(path, F_OK) != 0 && errno == ENOENT) {
        kube_set_err(why, "no %s", path);
    } else if (kube_read_file(path, RECORD_MAX, &text, NULL, &err) < 0) {
        kube_set_err(why, "%s", err ? err : path);
    } else if (!(rec = kube_json_parse(text, strlen(text), &err)) || !json_is_object(rec)) {
        kube_set_err(why, "%s: %s", path, err ? err : "not a JSON object");
        json_decref(rec);
        rec = NULL;
    }
    free(err);
    free(text);
    free(path);
    return rec;
}

/* Checks the record's job, namespace, transport, reach flag and age; 0 ok, -1 with *why. */
static int check_header(const struct agent_session *s, const json_t *rec, int64_t max_age_ms, char **why)
{
    const char *job = kube_json_at_str(rec, "job"), *ns = kube_json_at_str(rec, "namespace");
    const char *tr = kube_json_at_str(rec, "transport");
    const char *want_job = s->o->job ? s->o->job : "";
    if (!job || strcmp(job, want_job) != 0 || !ns || strcmp(ns, s->ns) != 0)
        return kube_set_err(why, "it is for job %s/%s, not %s/%s", ns ? ns : "?", job ? job : "?", s->ns, want_job);
    if (!tr || strcmp(tr, mpik8s_transport_name(s->o->transport)) != 0)
        return kube_set_err(why, "it checked transport %s, not %s", tr ? tr : "?", mpik8s_transport_name(s->o->transport));
    if (!s->o->no_reach && !kube_json_at_bool(rec, 0, "reachChecked"))
        return kube_set_err(why, "init did not check reachability");
    int64_t age = kube_realtime_ms() - kube_json_at_int(rec, 0, "writtenAtMs");
    if (age < 0 || age > max_age_ms)
        return kube_set_err(why, "it is %lld s old (at most %lld s is trusted)", (long long)(age / 1000),
                            (long long)(max_age_ms / 1000));
    return 0;
}

/* Checks that the record lists s->hosts in order, each the same pod (uid) and Ready now. */
static int check_workers(const struct agent_session *s, const json_t *rec, char **why)
{
    const json_t *w = kube_json_at(rec, "workers");
    if (json_array_size(w) != s->hosts.n)
        return kube_set_err(why, "it lists %zu worker(s), the job has %zu", json_array_size(w), s->hosts.n);
    for (size_t i = 0; i < s->hosts.n; i++) {
        const char *name = s->hosts.v[i].pod;
        const char *rpod = kube_json_at_str(json_array_get(w, i), "pod");
        const char *ruid = kube_json_at_str(json_array_get(w, i), "uid");
        if (!rpod || strcmp(rpod, name) != 0)
            return kube_set_err(why, "worker %zu is %s, not %s", i, rpod ? rpod : "?", name);
        json_t *pod = kube_informer_get(s->inf, s->ns, name);
        const char *uid = kube_obj_uid(pod);
        struct agent_pod_view v = { 0 };
        int rc = 0;
        if (!uid || !ruid || strcmp(uid, ruid) != 0)
            rc = kube_set_err(why, "worker %s was replaced (uid %s, init saw %s)", name, uid ? uid : "none",
                              ruid ? ruid : "none");
        else if (agent_pod_assess(pod, &v) < 0)
            rc = kube_set_err(why, "out of memory");
        else if (v.verdict != AGENT_POD_READY)
            rc = kube_set_err(why, "worker %s is no longer ready: %s", name, v.reason);
        agent_pod_view_free(&v);
        json_decref(pod);
        if (rc < 0)
            return -1;
    }
    return 0;
}

int agent_init_record_trust(struct agent_session *s, int64_t max_age_ms, char **why)
{
    json_t *rec = record_read(s->o, why);
    if (!rec)
        return 0;
    int ok = 0;
    if (!s->inf)
        kube_set_err(why, "no pod cache to check it against");
    else if (check_header(s, rec, max_age_ms, why) == 0 && check_workers(s, rec, why) == 0)
        ok = 1;
    if (ok) {
        s->phases.at_ms[AGENT_PHASE_WORKERS_READY] = kube_json_at_int(rec, 0, "workersReadyMs");
        s->phases.at_ms[AGENT_PHASE_WORKERS_REACHABLE] = kube_json_at_int(rec, 0, "workersReachableMs");
    }
    json_decref(rec);
    return ok;
}
