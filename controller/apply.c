/* apply.c - executes a reconcile plan through the API: creates (AlreadyExists
 * is fine: a cache was behind), status updates and merge patches (a status
 * update, and a patch that carries one, at the resourceVersion it was computed
 * from: Conflict -> retry), deletes (NotFound is fine), the SSH key pair, and Events.
 * Independent writes run concurrently (a creating sync is ~10 round trips one
 * after the other otherwise): a run of consecutive creates of the job's
 * objects (ConfigMap, ServiceAccount, Role, Service, Secret, PodGroup), the launcher's
 * RoleBinding alone once its Role exists (run_class), then a run of pod
 * creates/deletes, each on up to APPLY_PARALLEL threads; every object create
 * of a run is attempted, pod writes go in slow-start batches (4, 8, 16, ...:
 * a failed batch ends the run), every failure is logged, and the sync stops
 * after a run with a failure. The launcher Job, patches and the status stay sequential
 * and after the runs before them: the launcher Job is created only once its
 * ConfigMap, ServiceAccount and the workers exist. */
#include "apply.h"
#include "access.h"
#include "crds.h"
#include "kube/json.h"
#include "kube/util.h"
#include "kind.h"
#include "cond.h"
#include "kube/log.h"
#include "kube/sshkey.h"
#include "status_pruned.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* Most concurrent API calls of one sync (per reconcile worker): with the default 2 workers
 * all fit in the kube client's pool of 8 kept-alive connections. */
#define APPLY_PARALLEL 4

/* The API resource of an action on kind r (obj: its object, whose apiVersion tells the
 * MPIJob version and the PodGroups of one gang scheduler from the other's; may be NULL). */
static const struct kube_resource *resource_of(enum res_kind r, const json_t *obj)
{
    return kind_resource(r, kube_json_at_str(obj, "apiVersion"));
}

static json_t *ssh_secret(struct kube_client *c, const json_t *job, const char *name, struct kube_error *err)
{
    char *priv = NULL, *pub = NULL, *msg = NULL;
    if (kube_sshkey_generate_ed25519(&priv, &pub, "mpi-k8s", &msg) < 0) {
        kube_error_set(err, 0, KUBE_UNKNOWN, "generating the SSH key pair for %s: %s", name, msg ? msg : "error");
        free(msg);
        return NULL;
    }
    struct mpijob j;
    json_t *out = NULL;
    if (mpijob_normalize((json_t *)job, &j, NULL) == 0) {
        json_t *s = objects_ssh_secret(&j, priv, pub);
        out = s ? kube_create(c, &KUBE_RES_SECRETS, j.ns, s, err) : NULL;
        json_decref(s);
    }
    free(priv);
    free(pub);
    return out;
}

/* Tells sink what the server holds after action a answered res (NULL: err). */
static void report(const struct apply_sink *sink, const struct action *a, const json_t *res, const struct kube_error *err)
{
    if (!sink || a->kind == ACT_EVENT)
        return;
    if (res && kube_obj_name(res) && json_is_object(kube_json_at(res, "metadata")) &&
        strcmp(kube_json_at_str(res, "kind") ?: "", "Status") != 0) {
        if (sink->stored)
            sink->stored(sink->ud, a->res, res);
    } else if (sink->gone && ((a->kind == ACT_DELETE && res) ||
                              (a->kind != ACT_CREATE && a->kind != ACT_SSH_SECRET && err->reason == KUBE_NOT_FOUND))) {
        /* deleted, or gone already (e.g. a status update of an MPIJob deleted meanwhile) */
        const char *name = a->name ? a->name : kube_obj_name(a->obj);
        if (name)
            sink->gone(sink->ud, a->res, name);
    }
}

int apply_create_maybe_stored(const struct kube_error *err)
{
    switch (err->reason) {
    case KUBE_ALREADY_EXISTS:
    case KUBE_TIMEOUT:
    case KUBE_INTERNAL:
    case KUBE_TRANSPORT:
    case KUBE_PROTOCOL: return 1;
    case KUBE_UNKNOWN: return err->http_code == 0 || err->http_code >= 500;
    default: return 0; /* refused (4xx), throttled (429/503: not processed) or cancelled */
    }
}

/* 1 when obj's controller ownerReference is job (by uid). */
static int owned_by_job(const json_t *obj, const json_t *job)
{
    const char *uid = kube_json_at_str(job, "metadata", "uid");
    size_t i;
    json_t *r;
    json_array_foreach(kube_json_at(obj, "metadata", "ownerReferences"), i, r) {
        if (kube_json_at_bool(r, 0, "controller"))
            return uid && strcmp(kube_json_at_str(r, "uid") ?: "", uid) == 0;
    }
    return 0;
}

/* A create of name answered *err without the object: when the object may exist all the same
 * (apply_create_maybe_stored), reads the name instead of leaving the next sync to POST again.
 * Returns the object when this job owns it (*err cleared: the create is done), else NULL with
 * *err as it was; *gone = 1 when the GET answered NotFound (nothing was created). */
static json_t *read_back_create(struct kube_client *c, const struct kube_resource *r, const char *ns, const char *name,
                                const json_t *job, struct kube_error *err, int *gone)
{
    *gone = 0;
    if (!name || !apply_create_maybe_stored(err))
        return NULL;
    struct kube_error gerr = KUBE_ERROR_INIT;
    json_t *got = kube_get(c, r, ns, name, &gerr);
    *gone = !got && gerr.reason == KUBE_NOT_FOUND;
    kube_log(err->reason == KUBE_ALREADY_EXISTS ? KUBE_LOG_DEBUG : KUBE_LOG_INFO,
             "%s/%s: create %s %s answered %s; read back: %s", ns, kube_obj_name(job), r->resource, name,
             kube_reason_name(err->reason), got ? "it exists" : kube_reason_name(gerr.reason));
    kube_error_clear(&gerr);
    if (got && owned_by_job(got, job)) {
        kube_error_clear(err);
        return got;
    }
    json_decref(got);
    return NULL;
}

/* Runs one action; returns 0 ok/ignorable, -1 retry. */
static int run_action(struct kube_client *c, const json_t *job, const struct action *a, const struct apply_sink *sink)
{
    const char *ns = kube_json_at_str(job, "metadata", "namespace");
    const struct kube_resource *r = resource_of(a->res, a->obj);
    struct kube_error err = KUBE_ERROR_INIT;
    json_t *res = NULL;
    struct kube_delete_opts bg = { .propagation_policy = "Background", .grace_period_seconds = -1 };
    switch (a->kind) {
    case ACT_EVENT: return 0; /* apply_plan records Events itself, once the writes went through */
    case ACT_CREATE: res = kube_create(c, r, ns, a->obj, &err); break;
    case ACT_STATUS:
        res = kube_update_status(c, r, ns, a->name, a->obj, &err);
        if (res && kube_obj_name(res))
            status_pruned_note(kube_json_at(a->obj, "status"), kube_json_at(res, "status"));
        break;
    case ACT_PATCH:
        res = a->by_update ? access_update_merge(c, r, ns, a->name, a->obj, &err)
                           : kube_patch(c, r, ns, a->name, NULL, KUBE_PATCH_MERGE, a->obj, &err);
        break;
    case ACT_DELETE: res = kube_delete(c, r, ns, a->name, &bg, &err); break;
    case ACT_SSH_SECRET: res = ssh_secret(c, job, a->name, &err); break;
    }
    int gone = 0;
    if (!res && (a->kind == ACT_CREATE || a->kind == ACT_SSH_SECRET))
        res = read_back_create(c, a->kind == ACT_SSH_SECRET ? &KUBE_RES_SECRETS : r, ns, a->name, job, &err, &gone);
    report(sink, a, res, &err);
    int rc = 0;
    if (!res && !(err.reason == KUBE_ALREADY_EXISTS && !gone && (a->kind == ACT_CREATE || a->kind == ACT_SSH_SECRET)) &&
        !(err.reason == KUBE_NOT_FOUND && a->kind == ACT_DELETE)) {
        int quiet = err.reason == KUBE_CONFLICT;
        kube_log(quiet ? KUBE_LOG_DEBUG : KUBE_LOG_WARN, "%s/%s: %s %s %s: %s", ns, kube_obj_name(job),
                 a->kind == ACT_CREATE   ? "create"
                 : a->kind == ACT_DELETE ? "delete"
                                         : "update",
                 kind_name(a->res), a->name ? a->name : "", err.message ? err.message : kube_reason_name(err.reason));
        rc = -1;
    }
    json_decref(res);
    kube_error_clear(&err);
    return rc;
}

/* Which concurrent run action a belongs to: 1 = the job's objects, 2 = pods, 0 = sequential.
 * A RoleBinding is sequential, after the run that creates its Role: the API server checks that
 * we hold every permission of the Role it binds (we have no "bind" verb), and a Role it does
 * not know yet fails that check; created in the same run, every RoleBinding was refused once
 * and the whole sync retried: "create rolebindings X-launcher: NotFound ... not found" on the
 * real API server, 2,067 RoleBinding POSTs for 1,000 jobs (docs/controller.md). */
static int run_class(const struct action *a)
{
    if (a->kind == ACT_SSH_SECRET || (a->kind == ACT_CREATE && a->res != RK_POD && a->res != RK_JOB && a->res != RK_MPIJOB &&
                                      a->res != RK_EVENT && a->res != RK_ROLEBINDING))
        return 1;
    if (a->res == RK_POD && (a->kind == ACT_CREATE || a->kind == ACT_DELETE))
        return 2;
    return 0;
}

struct batch {
    struct kube_client *c;
    const json_t *job;
    const struct action *a;
    size_t n;
    const struct apply_sink *sink;
    atomic_size_t next;
    atomic_int failed;
};

static void *batch_worker(void *arg)
{
    struct batch *b = arg;
    size_t i;
    while ((i = atomic_fetch_add(&b->next, 1)) < b->n) {
        if (b->a[i].kind != ACT_EVENT && run_action(b->c, b->job, &b->a[i], b->sink) < 0)
            atomic_fetch_add(&b->failed, 1);
    }
    return NULL;
}

/* Runs the n actions at a (Events skipped; writes of them are not) on up to APPLY_PARALLEL
 * threads, the caller's included; all are attempted. Returns 0, or -1 when any failed (each
 * one logged). */
static int run_batch(struct kube_client *c, const json_t *job, const struct action *a, size_t n, size_t writes,
                     const struct apply_sink *sink)
{
    struct batch b = { .c = c, .job = job, .a = a, .n = n, .sink = sink };
    atomic_init(&b.next, 0);
    atomic_init(&b.failed, 0);
    pthread_t th[APPLY_PARALLEL - 1];
    size_t started = 0, want = writes < APPLY_PARALLEL ? writes - 1 : APPLY_PARALLEL - 1;
    pthread_attr_t attr;
    int have_attr = pthread_attr_init(&attr) == 0;
    if (have_attr)
        pthread_attr_setstacksize(&attr, 512 * 1024);
    for (; started < want; started++)
        if (pthread_create(&th[started], have_attr ? &attr : NULL, batch_worker, &b) != 0)
            break; /* fewer helpers: the caller works through the rest */
    if (have_attr)
        pthread_attr_destroy(&attr);
    batch_worker(&b);
    for (size_t i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    int failed = atomic_load(&b.failed);
    if (failed > 0)
        KLOG_INFO("%s/%s: %d of %zu concurrent writes failed; the sync is retried",
                  kube_json_at_str(job, "metadata", "namespace"), kube_obj_name(job), failed, writes);
    return failed ? -1 : 0;
}

/* Runs the pod run a[0..n) in slow-start batches of APPLY_PARALLEL, then twice as many
 * each time (4, 8, 16, ...; each batch concurrent as run_batch, at most APPLY_PARALLEL at
 * once), as Kubernetes' Job controller creates pods (it starts at 1; a first batch as wide as
 * our concurrency costs no extra round trip): a batch with a failure ends the run, so a
 * refused pod (quota, PodSecurity, admission) costs at most APPLY_PARALLEL failed requests
 * per sync, not one per worker. 0 ok, -1 retry. */
static int run_slow_start(struct kube_client *c, const json_t *job, const struct action *a, size_t n,
                          const struct apply_sink *sink)
{
    size_t done = 0, size = APPLY_PARALLEL;
    while (done < n) {
        size_t m = n - done < size ? n - done : size, writes = 0, one = done;
        for (size_t i = done; i < done + m; i++)
            if (a[i].kind != ACT_EVENT && writes++ == 0)
                one = i;
        int rc = writes > 1 ? run_batch(c, job, a + done, m, writes, sink) : writes ? run_action(c, job, &a[one], sink) : 0;
        done += m;
        if (rc < 0) {
            size_t left = 0;
            for (size_t i = done; i < n; i++)
                left += a[i].kind != ACT_EVENT;
            if (left)
                KLOG_INFO("%s/%s: pod writes stopped after a failed batch of %zu; %zu not attempted (slow start)",
                          kube_json_at_str(job, "metadata", "namespace"), kube_obj_name(job), writes, left);
            return -1;
        }
        size *= 2;
    }
    return 0;
}

int apply_plan(struct kube_client *c, struct events *ev, const json_t *job, const struct plan *p,
               const struct apply_sink *sink)
{
    /* API changes first; Events only once they all went through, so that a retried sync
     * (e.g. after a status Conflict) does not report the same transition twice. */
    int rc = 0;
    size_t i = 0;
    while (i < p->n && rc == 0) {
        const struct action *a = &p->a[i];
        int cls = run_class(a);
        size_t j = i + 1, writes = 1;
        if (cls)
            for (; j < p->n && (p->a[j].kind == ACT_EVENT || run_class(&p->a[j]) == cls); j++)
                writes += p->a[j].kind != ACT_EVENT;
        if (cls == 2 && writes > 1)
            rc = run_slow_start(c, job, a, j - i, sink);
        else if (cls && writes > 1)
            rc = run_batch(c, job, a, j - i, writes, sink);
        else if (a->kind != ACT_EVENT)
            rc = run_action(c, job, a, sink);
        i = cls && writes > 1 ? j : i + 1;
    }
    for (i = 0; i < p->n && rc == 0; i++) {
        if (p->a[i].kind == ACT_EVENT)
            events_record(ev, c, job, p->a[i].ev_type, p->a[i].ev_reason, p->a[i].ev_msg);
    }
    return rc;
}
