/* mpijob_validate.c - semantic checks of a normalised MPIJob (the controller-side
 * validation upstream v2 does, plus the CRD minimums): every failure is one
 * line naming the field and what was expected. */
#include "mpijob.h"
#include "objects.h"
#include "pod_failure_policy.h"
#include "kube/json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/util.h"

#define MAX_WORKERS 10000

/* DNS-1035 label: [a-z]([-a-z0-9]*[a-z0-9])?, at most 63 characters. */
static int dns1035(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 63 || s[0] < 'a' || s[0] > 'z' || s[n - 1] == '-')
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'))
            return 0;
    }
    return 1;
}

static int check_name(const struct mpijob *j, char **errmsg)
{
    long long last = j->worker.replicas > 0 ? j->worker.replicas - 1 : 0;
    char *pod = objects_name_worker(j, last), *launcher = objects_name_launcher(j);
    char qn[96], qp[96];
    int rc = 0;
    if (!pod || !launcher)
        rc = kube_set_err(errmsg, "metadata.name: out of memory checking it");
    else if (strlen(j->name) > 253 || !dns1035(pod))
        rc = kube_set_err(errmsg,
                          "metadata.name: \"%s\" gives worker pod name \"%s\", which must be a DNS-1035 "
                          "label (lower-case letters, digits, '-', starting with a letter, at most 63 characters)",
                          kube_excerpt(j->name, qn, sizeof qn), kube_excerpt(pod, qp, sizeof qp));
    else if (!dns1035(launcher))
        rc = kube_set_err(errmsg, "metadata.name: \"%s\" gives launcher name \"%s\", which must be a DNS-1035 label",
                          kube_excerpt(j->name, qn, sizeof qn), kube_excerpt(launcher, qp, sizeof qp));
    free(pod);
    free(launcher);
    return rc;
}

static int check_str_array(const json_t *a, const char *path, char **errmsg)
{
    if (!a || json_is_null(a))
        return 0;
    if (!json_is_array(a))
        return kube_json_type_err(errmsg, path, "an array of strings", a);
    size_t i;
    json_t *v;
    json_array_foreach(a, i, v) {
        if (!json_is_string(v))
            return kube_set_err(errmsg, "%s[%zu]: expected a string", path, i);
    }
    return 0;
}

static int check_container(const json_t *c, const char *path, char **errmsg)
{
    if (!json_is_object(c))
        return kube_json_type_err(errmsg, path, "an object", c);
    const char *name = kube_json_at_str(c, "name");
    if (!name || !*name)
        return kube_set_err(errmsg, "%s.name: required (a non-empty string)", path);
    const char *image = kube_json_at_str(c, "image");
    if (!image || !*image)
        return kube_set_err(errmsg, "%s.image: required (a non-empty string)", path);
    char sub[300];
    snprintf(sub, sizeof sub, "%s.command", path);
    if (check_str_array(kube_json_at(c, "command"), sub, errmsg) < 0)
        return -1;
    snprintf(sub, sizeof sub, "%s.args", path);
    if (check_str_array(kube_json_at(c, "args"), sub, errmsg) < 0)
        return -1;
    json_t *env = kube_json_at(c, "env");
    if (env && !json_is_null(env) && !json_is_array(env))
        return kube_json_type_errk(errmsg, path, "env", "an array", env);
    return 0;
}

static int check_template(const struct replica_spec *r, const char *path, char **errmsg)
{
    if (!r->template)
        return kube_set_err(errmsg, "%s.template: required (a pod template with at least one container)", path);
    json_t *spec = kube_json_at(r->template, "spec");
    if (!json_is_object(spec))
        return kube_set_err(errmsg, "%s.template.spec: required (an object)", path);
    json_t *cs = kube_json_at(spec, "containers");
    if (!json_is_array(cs) || json_array_size(cs) == 0)
        return kube_set_err(errmsg, "%s.template.spec.containers: at least one container is required", path);
    size_t i;
    json_t *c;
    json_array_foreach(cs, i, c) {
        char p[256];
        snprintf(p, sizeof p, "%s.template.spec.containers[%zu]", path, i);
        if (check_container(c, p, errmsg) < 0)
            return -1;
    }
    return 0;
}

static int check_replicas(const struct mpijob *j, char **errmsg)
{
    const char *lp = "spec.mpiReplicaSpecs.Launcher";
    const char *wp = "spec.mpiReplicaSpecs.Worker";
    if (!j->launcher.present)
        return kube_set_err(errmsg, "%s: required (exactly one launcher)", lp);
    if (j->launcher.replicas != 1)
        return kube_set_err(errmsg, "%s.replicas: must be 1, got %lld", lp, j->launcher.replicas);
    const char *rp = j->launcher.restart_policy;
    char q[96];
    if (strcmp(rp, "Never") != 0 && strcmp(rp, "OnFailure") != 0)
        return kube_set_err(errmsg, "%s.restartPolicy: expected Never or OnFailure, got \"%s\"", lp,
                            kube_excerpt(rp, q, sizeof q));
    if (check_template(&j->launcher, lp, errmsg) < 0)
        return -1;
    if (!j->worker.present)
        return 0;
    if (j->worker.replicas < 1 || j->worker.replicas > MAX_WORKERS)
        return kube_set_err(errmsg, "%s.replicas: must be from 1 to %d, got %lld", wp, MAX_WORKERS, j->worker.replicas);
    rp = j->worker.restart_policy;
    if (strcmp(rp, "Never") != 0 && strcmp(rp, "OnFailure") != 0 && strcmp(rp, "Always") != 0)
        return kube_set_err(errmsg, "%s.restartPolicy: expected Never, OnFailure or Always, got \"%s\"", wp,
                            kube_excerpt(rp, q, sizeof q));
    if (check_template(&j->worker, wp, errmsg) < 0)
        return -1;
    if (j->main_container) {
        json_t *cs = kube_json_at(j->worker.template, "spec", "containers");
        size_t i;
        json_t *c;
        json_array_foreach(cs, i, c) {
            if (strcmp(kube_json_at_str(c, "name"), j->main_container) == 0)
                return 0;
        }
        return kube_set_err(errmsg, "spec.mainContainer: no container named \"%s\" in the Worker template",
                            kube_excerpt(j->main_container, q, sizeof q));
    }
    return 0;
}

/* Characters a mount path may hold: letters, digits and / . _ - + @ ~ (no
 * spaces, quotes or shell syntax: the path reaches the worker's sh -c). */
static int mount_path_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || strchr("/._-+@~", c) != NULL;
}

static int check_ssh_path(const char *p, char **errmsg)
{
    char q[96];
    if (p[0] != '/')
        return kube_set_err(errmsg, "spec.sshAuthMountPath: expected an absolute path, got \"%s\"",
                            kube_excerpt(p, q, sizeof q));
    for (const char *s = p; *s; s++) {
        if (!mount_path_char(*s)) {
            char ch[8];
            unsigned char u = (unsigned char)*s;
            snprintf(ch, sizeof ch, u > 0x20 && u < 0x7f ? "'%c'" : "0x%02x", u);
            return kube_set_err(errmsg,
                                "spec.sshAuthMountPath: \"%s\" contains %s; a mount path may only contain "
                                "letters, digits and / . _ - + @ ~",
                                kube_excerpt(p, q, sizeof q), ch);
        }
        if (s[0] == '/' && s[1] == '.' && s[2] == '.' && (s[3] == '/' || s[3] == 0))
            return kube_set_err(errmsg, "spec.sshAuthMountPath: \"%s\" must not contain '..'", kube_excerpt(p, q, sizeof q));
    }
    return 0;
}

static int check_policies(const struct mpijob *j, char **errmsg)
{
    const char *rp = j->version == MPIJOB_V1ALPHA2 ? "spec" : "spec.runPolicy";
    char q[96];
    if (j->slots_per_worker < 1 || j->slots_per_worker > 1024)
        return kube_set_err(errmsg, "spec.slotsPerWorker: must be from 1 to 1024, got %lld", j->slots_per_worker);
    if (j->backoff_limit != MPIJOB_UNSET && j->backoff_limit < 0)
        return kube_set_err(errmsg, "%s.backoffLimit: must be >= 0, got %lld", rp, j->backoff_limit);
    if (j->active_deadline_s != MPIJOB_UNSET && j->active_deadline_s < 1)
        return kube_set_err(errmsg, "%s.activeDeadlineSeconds: must be >= 1, got %lld", rp, j->active_deadline_s);
    if (j->ttl_after_finished_s != MPIJOB_UNSET && j->ttl_after_finished_s < 0)
        return kube_set_err(errmsg, "spec.runPolicy.ttlSecondsAfterFinished: must be >= 0, got %lld",
                            j->ttl_after_finished_s);
    if (j->managed_by && strcmp(j->managed_by, MPIJOB_MANAGED_BY_US) != 0 &&
        strcmp(j->managed_by, MPIJOB_MANAGED_BY_KUEUE) != 0)
        return kube_set_err(errmsg, "spec.runPolicy.managedBy: expected %s or %s, got \"%s\"", MPIJOB_MANAGED_BY_US,
                            MPIJOB_MANAGED_BY_KUEUE, kube_excerpt(j->managed_by, q, sizeof q));
    if (j->pod_failure_policy) {
        json_t *p = pod_failure_policy_parse(j->pod_failure_policy, j->launcher.restart_policy, errmsg);
        if (!p)
            return -1;
        json_decref(p);
    }
    return check_ssh_path(j->ssh_auth_mount_path, errmsg);
}

int mpijob_validate(const struct mpijob *j, char **errmsg)
{
    if (check_policies(j, errmsg) < 0 || check_replicas(j, errmsg) < 0 || check_name(j, errmsg) < 0)
        return -1;
    return 0;
}
