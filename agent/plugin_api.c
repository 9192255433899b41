/* plugin_api.c - the reads `kubectl mpijob` makes: the MPIJob (kubectl's NotFound wording when
 * it is absent), the job's pods and Events, and the Kueue Workload that owns its admission. */
#include "plugin.h"

#include <stdlib.h>
#include <string.h>

#include "kube/json.h"
#include "kube/resource.h"
#include "kube/util.h"

static const struct kube_resource MPIJOBS = { "kubeflow.org", "v2beta1", "mpijobs", "MPIJob", 1 };
static const struct kube_resource WORKLOADS_V1BETA2 = { "kueue.x-k8s.io", "v1beta2", "workloads", "Workload", 1 };
static const struct kube_resource WORKLOADS_V1BETA1 = { "kueue.x-k8s.io", "v1beta1", "workloads", "Workload", 1 };

json_t *plugin_get_job(struct agent_session *s, const char *name)
{
    struct kube_error e = KUBE_ERROR_INIT;
    json_t *job = kube_get(s->client, &MPIJOBS, s->ns, name, &e);
    if (!job && e.reason == KUBE_NOT_FOUND && e.http_code == 404 && e.message && strstr(e.message, "not found"))
        fprintf(stderr, "Error from server (NotFound): mpijobs.kubeflow.org \"%s\" not found\n", name);
    else if (!job)
        plugin_error("MPIJob %s/%s: %s", s->ns, name, e.message ? e.message : kube_reason_name(e.reason));
    kube_error_clear(&e);
    return job;
}

json_t *plugin_one_job(struct agent_session *s, const struct plugin_opts *po)
{
    if (po->nargs != 1) {
        plugin_error("%s: expected one JOB argument, got %d (see kubectl mpijob %s --help)", po->verb, po->nargs, po->verb);
        return NULL;
    }
    return plugin_get_job(s, po->args[0]);
}

json_t *plugin_list_jobs(struct agent_session *s, const char *ns)
{
    struct kube_error e = KUBE_ERROR_INIT;
    struct kube_list_opts lo = { .limit = 500 };
    json_t *l = kube_list_all(s->client, &MPIJOBS, ns, &lo, &e);
    if (!l)
        plugin_error("listing MPIJobs%s%s: %s", ns ? " in namespace " : "", ns ? ns : "",
                     e.message ? e.message : kube_reason_name(e.reason));
    kube_error_clear(&e);
    return l;
}

static int by_name(const void *a, const void *b)
{
    const json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
    return strcmp(kube_obj_name(x) ?: "", kube_obj_name(y) ?: "");
}

/* The items of a List sorted with cmp, as a new array ([] when l has none). */
static json_t *sorted_items(json_t *l, int (*cmp)(const void *, const void *))
{
    json_t *items = kube_json_at(l, "items");
    size_t n = json_array_size(items);
    json_t **v = calloc(n + 1, sizeof(*v)), *out = json_array();
    for (size_t i = 0; v && i < n; i++)
        v[i] = json_array_get(items, i);
    if (v && n)
        qsort(v, n, sizeof(*v), cmp);
    for (size_t i = 0; v && out && i < n; i++)
        json_array_append(out, v[i]);
    free(v);
    return out;
}

/* The items of r in ns matching lo (selectors: sel, owned, may be NULL on allocation failure) sorted
 * with cmp, as a new array; [] on any error (the verbs show what they have). */
static json_t *list_sorted(struct agent_session *s, const struct kube_resource *r, const char *ns, struct kube_list_opts *lo,
                           char *sel, int (*cmp)(const void *, const void *))
{
    struct kube_error e = KUBE_ERROR_INIT;
    json_t *l = sel ? kube_list(s->client, r, ns, lo, &e) : NULL;
    json_t *out = sorted_items(l, cmp);
    json_decref(l);
    kube_error_clear(&e);
    free(sel);
    return out;
}

json_t *plugin_job_pods(struct agent_session *s, const char *ns, const char *job)
{
    char *sel = job ? kube_strdup_printf(MPIK8S_LABEL_JOB_NAME "=%s", job) : strdup(MPIK8S_LABEL_JOB_NAME);
    struct kube_list_opts lo = { .label_selector = sel };
    return list_sorted(s, &KUBE_RES_PODS, ns, &lo, sel, by_name);
}

/* The time an Event last happened: lastTimestamp, eventTime, else its creation. */
static const char *event_time(const json_t *ev)
{
    const char *t = kube_json_at_str(ev, "lastTimestamp");
    if (!t || !*t)
        t = kube_json_at_str(ev, "eventTime");
    return t && *t ? t : kube_json_at_str(ev, "metadata", "creationTimestamp") ?: "";
}

/* By time, then by resourceVersion (Events of the same second in the order they were written: the
 * versions are opaque to clients, but both API servers give increasing numbers). */
static int by_time(const void *a, const void *b)
{
    const json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
    int c = strcmp(event_time(x), event_time(y));
    if (c)
        return c;
    long long rx = strtoll(kube_obj_resource_version(x) ?: "0", NULL, 10);
    long long ry = strtoll(kube_obj_resource_version(y) ?: "0", NULL, 10);
    return rx < ry ? -1 : rx > ry;
}

json_t *plugin_job_events(struct agent_session *s, const char *ns, const char *job)
{
    char *fs = kube_strdup_printf("involvedObject.name=%s,involvedObject.kind=MPIJob", job);
    struct kube_list_opts lo = { .field_selector = fs };
    return list_sorted(s, &KUBE_RES_EVENTS, ns, &lo, fs, by_time);
}

/* The Workload of r in ns whose ownerReferences name the job's uid (new reference) or NULL. */
static json_t *owned_workload(struct agent_session *s, const struct kube_resource *r, const json_t *job, int *served)
{
    struct kube_error e = KUBE_ERROR_INIT;
    json_t *l = kube_list(s->client, r, kube_obj_namespace(job), NULL, &e), *w, *found = NULL, *ref;
    *served = l != NULL;
    if (!l && e.reason != KUBE_NOT_FOUND) /* 404: Kueue (this version of it) is not installed */
        fprintf(stderr, "Warning: listing Kueue Workloads (%s/%s) in namespace %s: %s\n", r->group, r->version,
                kube_obj_namespace(job), e.message ? e.message : kube_reason_name(e.reason));
    size_t i, j;
    json_array_foreach(kube_json_at(l, "items"), i, w) {
        json_array_foreach(kube_json_at(w, "metadata", "ownerReferences"), j, ref) {
            const char *uid = kube_json_at_str(ref, "uid");
            if (!found && uid && kube_obj_uid(job) && !strcmp(uid, kube_obj_uid(job)))
                found = json_incref(w);
        }
    }
    json_decref(l);
    kube_error_clear(&e);
    return found;
}

json_t *plugin_job_workload(struct agent_session *s, const json_t *job)
{
    int served = 0;
    json_t *w = owned_workload(s, &WORKLOADS_V1BETA2, job, &served);
    if (!w && !served)
        w = owned_workload(s, &WORKLOADS_V1BETA1, job, &served);
    return w;
}
