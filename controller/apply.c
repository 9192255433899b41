/* apply.c - executes a reconcile plan through the API: creates (AlreadyExists
 * is fine: a cache was behind), updates and status updates with the
 * resourceVersion they were computed from (Conflict -> retry), merge patches,
 * deletes (NotFound is fine), the SSH key pair, and Events. */
#include "controller.h"
#include "jsonutil.h"
#include "kube/log.h"
#include "kube/sshkey.h"

#include <stdlib.h>
#include <string.h>

static const struct kube_resource RES_SP_PODGROUPS = { "scheduling.x-k8s.io", "v1alpha1", "podgroups", "PodGroup", 1 };

static const struct kube_resource *resource_of(enum res_kind r, const json_t *obj)
{
    switch (r) {
    case RK_CONFIGMAP: return &KUBE_RES_CONFIGMAPS;
    case RK_SERVICEACCOUNT: return &KUBE_RES_SERVICEACCOUNTS;
    case RK_ROLE: return &KUBE_RES_ROLES;
    case RK_ROLEBINDING: return &KUBE_RES_ROLEBINDINGS;
    case RK_SECRET: return &KUBE_RES_SECRETS;
    case RK_SERVICE: return &KUBE_RES_SERVICES;
    case RK_POD: return &KUBE_RES_PODS;
    case RK_JOB: return &KUBE_RES_JOBS;
    case RK_PODGROUP: {
        const char *av = ju_str(obj, "apiVersion");
        return av && strncmp(av, "scheduling.x-k8s.io/", 20) == 0 ? &RES_SP_PODGROUPS : &KUBE_RES_PODGROUPS;
    }
    case RK_MPIJOB: return &KUBE_RES_MPIJOBS;
    default: return &KUBE_RES_EVENTS;
    }
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
        json_t *s = obj_ssh_secret(&j, priv, pub);
        out = s ? kube_create(c, &KUBE_RES_SECRETS, j.ns, s, err) : NULL;
        json_decref(s);
    }
    free(priv);
    free(pub);
    return out;
}

/* Tells sink what the server holds after action a answered res (NULL: err). */
static void report(const struct apply_sink *sink, const struct action *a, const json_t *res,
                   const struct kube_error *err)
{
    if (!sink || a->kind == ACT_EVENT)
        return;
    if (res && obj_name(res) && json_is_object(json_object_get(res, "metadata")) &&
        strcmp(ju_str(res, "kind") ?: "", "Status") != 0) {
        if (sink->stored)
            sink->stored(sink->ud, a->res, res);
    } else if (sink->gone && ((a->kind == ACT_DELETE && res) ||
                              (a->kind != ACT_CREATE && a->kind != ACT_SSH_SECRET && err->reason == KUBE_NOT_FOUND))) {
        /* deleted, or gone already (e.g. a status update of an MPIJob deleted meanwhile) */
        const char *name = a->name ? a->name : obj_name(a->obj);
        if (name)
            sink->gone(sink->ud, a->res, name);
    }
}

/* Runs one action; returns 0 ok/ignorable, -1 retry. */
static int run_action(struct kube_client *c, const json_t *job, const struct action *a,
                      const struct apply_sink *sink)
{
    const char *ns = ju_str(job, "metadata", "namespace");
    const struct kube_resource *r = resource_of(a->res, a->obj);
    struct kube_error err = KUBE_ERROR_INIT;
    json_t *res = NULL;
    struct kube_delete_opts bg = { .propagation_policy = "Background", .grace_period_seconds = -1 };
    switch (a->kind) {
    case ACT_EVENT:
        event_record(c, job, a->ev_type, a->ev_reason, a->ev_msg);
        return 0;
    case ACT_CREATE: res = kube_create(c, r, ns, a->obj, &err); break;
    case ACT_UPDATE: res = kube_update(c, r, ns, a->name, a->obj, &err); break;
    case ACT_STATUS: res = kube_update_status(c, r, ns, a->name, a->obj, &err); break;
    case ACT_PATCH: res = kube_patch(c, r, ns, a->name, NULL, KUBE_PATCH_MERGE, a->obj, &err); break;
    case ACT_DELETE: res = kube_delete(c, r, ns, a->name, &bg, &err); break;
    case ACT_SSH_SECRET: res = ssh_secret(c, job, a->name, &err); break;
    }
    report(sink, a, res, &err);
    int rc = 0;
    if (!res && !(err.reason == KUBE_ALREADY_EXISTS && (a->kind == ACT_CREATE || a->kind == ACT_SSH_SECRET)) &&
        !(err.reason == KUBE_NOT_FOUND && a->kind == ACT_DELETE)) {
        int quiet = err.reason == KUBE_CONFLICT;
        kube_log(quiet ? KUBE_LOG_DEBUG : KUBE_LOG_WARN, "%s/%s: %s %s %s: %s", ns, obj_name(job),
                 a->kind == ACT_CREATE ? "create" : a->kind == ACT_DELETE ? "delete" : "update",
                 res_kind_name(a->res), a->name ? a->name : "", err.message ? err.message : kube_reason_name(err.reason));
        rc = -1;
    }
    json_decref(res);
    kube_error_clear(&err);
    return rc;
}

int apply_plan(struct kube_client *c, const json_t *job, const struct plan *p, const struct apply_sink *sink)
{
    /* API changes first; Events only once they all went through, so that a retried sync
     * (e.g. after a status Conflict) does not report the same transition twice. */
    int rc = 0;
    for (size_t i = 0; i < p->n && rc == 0; i++) {
        if (p->a[i].kind != ACT_EVENT && run_action(c, job, &p->a[i], sink) < 0)
            rc = -1;
    }
    for (size_t i = 0; i < p->n && rc == 0; i++) {
        if (p->a[i].kind == ACT_EVENT)
            run_action(c, job, &p->a[i], NULL);
    }
    return rc;
}
