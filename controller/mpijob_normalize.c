/* mpijob_normalize.c - reads an MPIJob of either served version into the one
 * internal struct mpijob: detects the shape (v1alpha2 top-level policies vs
 * v2beta1 runPolicy), type-checks every field it reads, applies defaults. */
#include "mpijob.h"
#include "kube/json.h"

#include <stdlib.h>
#include <string.h>

#include "kube/util.h"

/* Fields only the v1alpha2 shape has at the top of spec. */
static const char *const v1alpha2_only[] = {
    "cleanPodPolicy", "backoffLimit", "activeDeadlineSeconds", "mpiDistribution", "mainContainer", NULL,
};

static enum mpijob_version detect_version(const char *api_version, const json_t *spec)
{
    if (api_version && strcmp(api_version, "kubeflow.org/v1alpha2") == 0)
        return MPIJOB_V1ALPHA2;
    for (int i = 0; v1alpha2_only[i]; i++)
        if (json_object_get(spec, v1alpha2_only[i]))
            return MPIJOB_V1ALPHA2;
    return MPIJOB_V2BETA1;
}

static int read_replica(json_t *specs, const char *key, long long dflt_replicas, const char *dflt_restart,
                        struct replica_spec *r, char **errmsg)
{
    char path[96];
    snprintf(path, sizeof path, "spec.mpiReplicaSpecs.%s", key);
    json_t *rs = json_object_get(specs, key);
    memset(r, 0, sizeof *r);
    r->replicas = dflt_replicas;
    r->restart_policy = dflt_restart;
    if (!rs || json_is_null(rs))
        return 0;
    if (!json_is_object(rs))
        return kube_json_type_err(errmsg, path, "an object", rs);
    r->present = 1;
    if (kube_json_get_int(rs, "replicas", path, &r->replicas, errmsg) < 0)
        return -1;
    const char *rp = NULL;
    if (kube_json_get_str(rs, "restartPolicy", path, &rp, errmsg) < 0)
        return -1;
    if (rp)
        r->restart_policy = rp;
    json_t *t = kube_json_at(rs, "template");
    if (t && !json_is_null(t)) {
        if (!json_is_object(t))
            return kube_json_type_errk(errmsg, path, "template", "an object", t);
        r->template = t;
    }
    return 0;
}

static int read_replicas(json_t *spec, struct mpijob *j, char **errmsg)
{
    json_t *specs = kube_json_at(spec, "mpiReplicaSpecs");
    if (!specs || json_is_null(specs))
        return kube_set_err(errmsg, "spec.mpiReplicaSpecs: required (Launcher and Worker replica specs)");
    if (!json_is_object(specs))
        return kube_json_type_err(errmsg, "spec.mpiReplicaSpecs", "an object", specs);
    const char *k;
    json_t *v;
    char q[96];
    json_object_foreach(specs, k, v) {
        if (strcmp(k, "Launcher") != 0 && strcmp(k, "Worker") != 0)
            return kube_set_err(errmsg, "spec.mpiReplicaSpecs.%s: unknown replica type (expected Launcher or Worker)",
                                kube_excerpt(k, q, sizeof q));
    }
    if (read_replica(specs, "Launcher", 1, "OnFailure", &j->launcher, errmsg) < 0)
        return -1;
    if (read_replica(specs, "Worker", 0, "Never", &j->worker, errmsg) < 0)
        return -1;
    /* v1alpha2 forces the launcher to OnFailure unless Never (upstream default.go). */
    if (j->version == MPIJOB_V1ALPHA2 && strcmp(j->launcher.restart_policy, "Never") != 0)
        j->launcher.restart_policy = "OnFailure";
    return 0;
}

static int read_enum(json_t *o, const char *key, const char *path, const char *const *names, const char *expected, int *out,
                     char **errmsg)
{
    const char *s = NULL;
    if (kube_json_get_str(o, key, path, &s, errmsg) < 0)
        return -1;
    if (!s)
        return 0;
    for (int i = 0; names[i]; i++)
        if (strcmp(s, names[i]) == 0) {
            *out = i;
            return 0;
        }
    char q[96];
    return kube_set_err(errmsg, "%s.%s: expected one of %s, got \"%s\"", path, key, expected, kube_excerpt(s, q, sizeof q));
}

static const char *const clean_names[] = { "None", "Running", "All", NULL };
static const char *const dist_names[] = { "OpenMPI", "IntelMPI", "MPICH", NULL };
static const char *const impl_names[] = { "OpenMPI", "Intel", "MPICH", NULL };
static const char *const launch_names[] = { "AtStartup", "WaitForWorkersReady", NULL };

static int read_policies(json_t *spec, struct mpijob *j, char **errmsg)
{
    int e = CLEAN_NONE;
    if (read_enum(spec, "cleanPodPolicy", "spec", clean_names, "None, Running, All", &e, errmsg) < 0)
        return -1;
    j->clean_policy = e;
    if (kube_json_get_int(spec, "backoffLimit", "spec", &j->backoff_limit, errmsg) < 0 ||
        kube_json_get_int(spec, "activeDeadlineSeconds", "spec", &j->active_deadline_s, errmsg) < 0)
        return -1;
    json_t *rp = kube_json_at(spec, "runPolicy");
    if (!rp || json_is_null(rp))
        return 0;
    if (!json_is_object(rp))
        return kube_json_type_err(errmsg, "spec.runPolicy", "an object", rp);
    e = j->clean_policy;
    if (read_enum(rp, "cleanPodPolicy", "spec.runPolicy", clean_names, "None, Running, All", &e, errmsg) < 0)
        return -1;
    j->clean_policy = e;
    if (kube_json_get_int(rp, "backoffLimit", "spec.runPolicy", &j->backoff_limit, errmsg) < 0 ||
        kube_json_get_int(rp, "activeDeadlineSeconds", "spec.runPolicy", &j->active_deadline_s, errmsg) < 0 ||
        kube_json_get_int(rp, "ttlSecondsAfterFinished", "spec.runPolicy", &j->ttl_after_finished_s, errmsg) < 0 ||
        kube_json_get_bool(rp, "suspend", "spec.runPolicy", &j->suspend, errmsg) < 0 ||
        kube_json_get_str(rp, "managedBy", "spec.runPolicy", &j->managed_by, errmsg) < 0)
        return -1;
    json_t *sp = kube_json_at(rp, "schedulingPolicy");
    if (sp && !json_is_null(sp) && !json_is_object(sp))
        return kube_json_type_err(errmsg, "spec.runPolicy.schedulingPolicy", "an object", sp);
    return 0;
}

static int read_flavour(json_t *spec, struct mpijob *j, char **errmsg)
{
    int e = MPIK8S_MPI_DEFAULT;
    if (read_enum(spec, "mpiDistribution", "spec", dist_names, "OpenMPI, IntelMPI, MPICH", &e, errmsg) < 0 ||
        read_enum(spec, "mpiImplementation", "spec", impl_names, "OpenMPI, Intel, MPICH", &e, errmsg) < 0)
        return -1;
    j->impl = e;
    e = LAUNCH_AT_STARTUP;
    if (read_enum(spec, "launcherCreationPolicy", "spec", launch_names, "AtStartup, WaitForWorkersReady", &e, errmsg) < 0)
        return -1;
    j->launcher_creation = e;
    if (kube_json_get_int(spec, "slotsPerWorker", "spec", &j->slots_per_worker, errmsg) < 0 ||
        kube_json_get_bool(spec, "runLauncherAsWorker", "spec", &j->run_launcher_as_worker, errmsg) < 0 ||
        kube_json_get_str(spec, "sshAuthMountPath", "spec", &j->ssh_auth_mount_path, errmsg) < 0 ||
        kube_json_get_str(spec, "mainContainer", "spec", &j->main_container, errmsg) < 0)
        return -1;
    return 0;
}

/* Reads a numeric annotation; absent keeps *out. */
static int ann_int(json_t *ann, const char *key, long long min, long long max, long long *out, char **errmsg)
{
    const char *s = json_string_value(json_object_get(ann, key));
    if (!json_object_get(ann, key))
        return 0;
    long long v;
    if (kube_parse_int(s, min, max, &v) < 0)
        return kube_set_err(errmsg, "metadata.annotations[%s]: expected an integer string from %lld to %lld", key, min, max);
    *out = v;
    return 0;
}

static int read_annotations(json_t *meta, struct mpijob *j, char **errmsg)
{
    json_t *ann = kube_json_at(meta, "annotations");
    if (!json_is_object(ann))
        return 0;
    json_t *t = kube_json_at(ann, MPIK8S_ANN_TRANSPORT);
    if (t) {
        const char *s = json_string_value(t);
        char q[96];
        if (mpik8s_transport_parse(s, &j->transport) < 0)
            return kube_set_err(errmsg, "metadata.annotations[%s]: expected \"exec\" or \"ssh\", got \"%s\"",
                                MPIK8S_ANN_TRANSPORT, s ? kube_excerpt(s, q, sizeof q) : "(not a string)");
    }
    json_t *a = kube_json_at(ann, MPIK8S_ANN_AGENT_RUN);
    if (a) {
        const char *s = json_string_value(a);
        if (s && strcmp(s, "true") == 0)
            j->agent_run = 1;
        else if (s && strcmp(s, "false") == 0)
            j->agent_run = 0;
        else
            return kube_set_err(errmsg, "metadata.annotations[%s]: expected \"true\" or \"false\"", MPIK8S_ANN_AGENT_RUN);
    }
    json_t *pfp = kube_json_at(ann, MPIK8S_ANN_POD_FAILURE_POLICY);
    if (pfp && !json_is_string(pfp))
        return kube_set_err(errmsg, "metadata.annotations[%s]: expected a string (JSON)", MPIK8S_ANN_POD_FAILURE_POLICY);
    j->pod_failure_policy = json_string_value(pfp);
    json_t *fam = kube_json_at(ann, MPIK8S_ANN_IP_FAMILY);
    if (fam && !mpik8s_ip_family_parse(json_string_value(fam))) {
        char q[96];
        const char *s = json_string_value(fam);
        return kube_set_err(errmsg, "metadata.annotations[%s]: expected \"IPv4\" or \"IPv6\", got \"%s\"",
                            MPIK8S_ANN_IP_FAMILY, s ? kube_excerpt(s, q, sizeof q) : "(not a string)");
    }
    j->ip_family = json_string_value(fam);
    if (ann_int(ann, MPIK8S_ANN_AGENT_TIMEOUT, 1, 86400 * 7, &j->agent_timeout_s, errmsg) < 0 ||
        ann_int(ann, MPIK8S_ANN_PROGRESS_TIMEOUT, 0, 86400 * 7, &j->progress_timeout_s, errmsg) < 0 ||
        ann_int(ann, MPIK8S_ANN_NETWORK_TIMEOUT, 0, 86400 * 7, &j->network_timeout_s, errmsg) < 0 ||
        ann_int(ann, MPIK8S_ANN_SSH_PORT, 1, 65535, &j->ssh_port, errmsg) < 0)
        return -1;
    return 0;
}

static void set_defaults(struct mpijob *j)
{
    j->slots_per_worker = MPIK8S_DEFAULT_SLOTS;
    j->clean_policy = CLEAN_NONE;
    j->backoff_limit = MPIJOB_UNSET;
    j->active_deadline_s = MPIJOB_UNSET;
    j->ttl_after_finished_s = MPIJOB_UNSET;
    j->impl = MPIK8S_MPI_DEFAULT;
    j->ssh_auth_mount_path = ROOT_SSH_PATH;
    j->launcher_creation = LAUNCH_AT_STARTUP;
    j->agent_run = 1;
    j->agent_timeout_s = 900;
    j->progress_timeout_s = 0;
    j->network_timeout_s = MPIK8S_NETWORK_TIMEOUT_DEFAULT;
    j->ssh_port = 2222;
}

int mpijob_normalize(json_t *obj, struct mpijob *j, char **errmsg)
{
    memset(j, 0, sizeof *j);
    set_defaults(j);
    j->obj = obj;
    if (!json_is_object(obj))
        return kube_set_err(errmsg, "MPIJob: expected a JSON object");
    json_t *meta = kube_json_at(obj, "metadata");
    if (!json_is_object(meta))
        return kube_set_err(errmsg, "metadata: required");
    j->name = kube_json_at_str(meta, "name");
    j->ns = kube_json_at_str(meta, "namespace");
    j->uid = kube_json_at_str(meta, "uid");
    j->api_version = kube_json_at_str(obj, "apiVersion");
    if (!j->name || !*j->name)
        return kube_set_err(errmsg, "metadata.name: required");
    if (!j->ns)
        j->ns = "default";
    json_t *spec = kube_json_at(obj, "spec");
    if (!spec || json_is_null(spec))
        return kube_set_err(errmsg, "spec: required");
    if (!json_is_object(spec))
        return kube_json_type_err(errmsg, "spec", "an object", spec);
    j->version = detect_version(j->api_version, spec);
    j->transport = j->version == MPIJOB_V1ALPHA2 ? MPIK8S_TRANSPORT_EXEC : MPIK8S_TRANSPORT_SSH;
    if (j->version == MPIJOB_V1ALPHA2)
        j->backoff_limit = 6;
    if (read_policies(spec, j, errmsg) < 0 || read_flavour(spec, j, errmsg) < 0 || read_replicas(spec, j, errmsg) < 0 ||
        read_annotations(meta, j, errmsg) < 0)
        return -1;
    j->worker_restart_limit =
        j->version == MPIJOB_V2BETA1 && j->backoff_limit != MPIJOB_UNSET && j->backoff_limit > 0 ? j->backoff_limit : 0;
    return 0;
}

int mpijob_load(json_t *obj, struct mpijob *j, char **errmsg)
{
    if (mpijob_normalize(obj, j, errmsg) < 0)
        return -1;
    return mpijob_validate(j, errmsg);
}

const char *mpijob_worker_container(const struct mpijob *j)
{
    if (j->main_container)
        return j->main_container;
    json_t *c0 = json_array_get(kube_json_at(j->worker.template, "spec", "containers"), 0);
    return kube_json_at_str(c0, "name");
}

int mpijob_object_is_v1alpha2(const json_t *obj)
{
    return detect_version(kube_json_at_str(obj, "apiVersion"), kube_json_at(obj, "spec")) == MPIJOB_V1ALPHA2;
}

int mpijob_fqdn_hosts(const struct mpijob *j)
{
    return j->version == MPIJOB_V2BETA1 || j->transport == MPIK8S_TRANSPORT_SSH;
}

const char *mpijob_clean_policy_name(enum clean_pod_policy p) { return clean_names[p]; }
