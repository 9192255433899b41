/* workers.c - which pods are the job's workers: the hostfile (upstream's way,
 * any of the three formats), else the worker count the controller passes
 * (<job>-worker-<i>), else the pods carrying the job's worker labels. */
#include "session.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kube/json.h"
#include "kube/log.h"
#include "kube/resource.h"
#include "kube/util.h"
#include "mpik8s/contract.h"

/* Host name for a worker pod: its DNS name when it has a subdomain, else the pod name. */
static char *pod_host(const json_t *pod, const char *ns)
{
    const char *name = kube_obj_name(pod);
    const char *sub = kube_json_at_str(pod, "spec", "subdomain");
    if (sub && *sub)
        return kube_strdup_printf("%s.%s.%s.svc", name, sub, ns);
    return strdup(name);
}

/* Trailing number of a pod name (for natural order), or -1. */
static long name_index(const char *n)
{
    const char *p = n + strlen(n);
    while (p > n && isdigit((unsigned char)p[-1]))
        p--;
    long long i;
    return kube_parse_int(p, 0, LONG_MAX, &i) < 0 ? -1 : (long)i;
}

static int cmp_pods(const void *a, const void *b)
{
    const json_t *pa = *(const json_t *const *)a, *pb = *(const json_t *const *)b;
    const char *na = kube_obj_name(pa), *nb = kube_obj_name(pb);
    long ia = name_index(na), ib = name_index(nb);
    size_t la = strlen(na), lb = strlen(nb);
    if (ia >= 0 && ib >= 0 && ia != ib)
        return ia < ib ? -1 : 1;
    return la != lb ? (la < lb ? -1 : 1) : strcmp(na, nb);
}

/* Lists the job's worker pods by label, sorted by index. New array or NULL + *errmsg. */
json_t *agent_list_worker_pods(struct agent_session *s, char **errmsg)
{
    char *sel = kube_strdup_printf(MPIK8S_LABEL_JOB_NAME "=%s," MPIK8S_LABEL_ROLE "=" MPIK8S_ROLE_WORKER, s->o->job);
    struct kube_list_opts lo = { 0 };
    lo.label_selector = sel;
    struct kube_error ke = KUBE_ERROR_INIT;
    json_t *list = kube_list_all(s->client, &KUBE_RES_PODS, s->ns, &lo, &ke);
    free(sel);
    if (!list) {
        kube_set_err(errmsg, "listing worker pods of job %s/%s: %s", s->ns, s->o->job, ke.message);
        kube_error_clear(&ke);
        return NULL;
    }
    json_t *items = json_incref(kube_json_at(list, "items"));
    json_decref(list);
    size_t n = json_array_size(items);
    json_t **v = calloc(n ? n : 1, sizeof(*v));
    if (!v) {
        json_decref(items);
        kube_set_err(errmsg, "out of memory");
        return NULL;
    }
    size_t kept = 0;
    for (size_t i = 0; i < n; i++) {
        json_t *it = json_array_get(items, i);
        if (kube_obj_name(it))
            v[kept++] = it;
        else
            kube_log(KUBE_LOG_WARN, "ignoring worker pods list item %zu: metadata.name is not a string", i);
    }
    n = kept;
    qsort(v, n, sizeof(*v), cmp_pods);
    json_t *out = json_array();
    for (size_t i = 0; out && i < n; i++)
        json_array_append(out, v[i]);
    free(v);
    json_decref(items);
    return out;
}

static int from_labels(struct agent_session *s, char **errmsg)
{
    json_t *pods = agent_list_worker_pods(s, errmsg);
    if (!pods)
        return -1;
    size_t i;
    json_t *p;
    json_array_foreach(pods, i, p) {
        char *h = pod_host(p, s->ns);
        int rc = h ? agent_hostlist_add(&s->hosts, h, s->o->slots, errmsg) : -1;
        free(h);
        if (rc < 0) {
            json_decref(pods);
            return -1;
        }
    }
    json_decref(pods);
    return 0;
}

static int from_count(struct agent_session *s, char **errmsg)
{
    for (int i = 0; i < s->o->workers; i++) {
        char *h = kube_strdup_printf("%s-worker-%d.%s-worker.%s.svc", s->o->job, i, s->o->job, s->ns);
        int rc = h ? agent_hostlist_add(&s->hosts, h, s->o->slots, errmsg) : -1;
        free(h);
        if (rc < 0)
            return -1;
    }
    return 0;
}

int agent_workers_find(struct agent_session *s, char **errmsg)
{
    const struct agent_opts *o = s->o;
    const char *how;
    if (o->hostfile_given || access(o->hostfile, F_OK) == 0) {
        how = o->hostfile;
        if (agent_hostfile_load(o->hostfile, &s->hosts, errmsg) < 0)
            return -1;
        size_t d = agent_hostlist_drop_launcher(&s->hosts);
        s->launchers_dropped = d;
        if (d)
            KLOG_DEBUG("hostfile: skipped %zu launcher entr%s", d, d == 1 ? "y" : "ies");
    } else if (o->job && o->workers > 0) {
        how = MPIK8S_ENV_WORKERS;
        if (from_count(s, errmsg) < 0)
            return -1;
    } else if (o->job) {
        how = "the job's worker labels";
        if (from_labels(s, errmsg) < 0)
            return -1;
    } else {
        return kube_set_err(
            errmsg, "no workers: %s does not exist and no job name is set (" MPIK8S_ENV_JOB_NAME " or --job)", o->hostfile);
    }
    if (s->hosts.n == 0)
        return kube_set_err(errmsg, "no workers found (from %s)", how);
    KLOG_DEBUG("%zu worker(s) from %s", s->hosts.n, how);
    return 0;
}
