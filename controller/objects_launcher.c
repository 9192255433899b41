/* objects_launcher.c - the launcher batch Job <job>-launcher: the user's
 * Launcher template plus the mpi-agent init container (waits for workers,
 * delivers mpi-rsh into /opt/kube), the hostfile ConfigMap at /etc/mpi, the
 * transport's credentials, the MPI flavour's environment, and the user's
 * command wrapped in `mpi-agent run --` so the agent supervises mpirun. */
#include "objects_pods.h"
#include "pod_failure_policy.h"
#include "kube/json.h"
#include "kube/util.h"
#include "mpik8s/launch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VOL_AGENT "mpi-job-agent"
#define VOL_CONFIG "mpi-job-config"

/* The variables mpi-agent and mpi-rsh read (mpik8s/contract.h). */
static void agent_env(const struct mpijob *j, json_t *c)
{
    objects_env_add(c, MPIK8S_ENV_JOB_NAME, j->name);
    objects_env_add(c, MPIK8S_ENV_JOB_NAMESPACE, j->ns);
    objects_env_add(c, MPIK8S_ENV_TRANSPORT, mpik8s_transport_name(j->transport));
    objects_env_add(c, MPIK8S_ENV_MPI_IMPLEMENTATION, mpik8s_mpi_name(j->impl)); /* hostfile format, launch env */
    const char *wc = mpijob_worker_container(j);
    if (wc)
        objects_env_add(c, MPIK8S_ENV_WORKER_CONTAINER, wc);
    objects_env_add_int(c, MPIK8S_ENV_WORKERS, j->worker.replicas);
    objects_env_add_int(c, MPIK8S_ENV_SLOTS, j->slots_per_worker);
    objects_env_add_int(c, MPIK8S_ENV_AGENT_TIMEOUT, j->agent_timeout_s);
    objects_env_add_int(c, MPIK8S_ENV_PROGRESS_TIMEOUT, j->progress_timeout_s);
    objects_env_add_int(c, MPIK8S_ENV_NETWORK_TIMEOUT, j->network_timeout_s);
    if (j->ip_family)
        objects_env_add(c, MPIK8S_ENV_IP_FAMILY, j->ip_family);
    if (j->transport == MPIK8S_TRANSPORT_SSH) {
        objects_env_add(c, MPIK8S_ENV_SSH_DIR, j->ssh_auth_mount_path);
        objects_env_add_int(c, MPIK8S_ENV_SSH_PORT, j->ssh_port);
    }
}

/* The MPI implementation's launch environment (mpik8s/launch.h, the one mpi-agent run sets too):
 * in the pod spec, so a launcher without the agent (agent-run "false", upstream's SSH images) has
 * it. The worker count is the spec's; the user's own variables win (objects_env_add). */
static int flavour_env(const struct mpijob *j, json_t *c)
{
    struct mpik8s_launch_in in = { j->impl, MPIK8S_RSH, MPIK8S_HOSTFILE, j->worker.replicas, j->slots_per_worker };
    struct mpik8s_launch_env e;
    if (mpik8s_launch_env(&in, &e) < 0)
        return -1;
    for (size_t i = 0; i < e.n; i++)
        objects_env_add(c, e.v[i].name, e.v[i].value);
    mpik8s_launch_env_free(&e);
    return 0;
}

/* runAsUser of the launcher's main container (its own, else the pod's), or -1. */
static long long launcher_uid(const struct mpijob *j)
{
    json_t *spec = kube_json_at(j->launcher.template, "spec");
    json_t *c = json_array_get(kube_json_at(spec, "containers"), objects_main_container_index(j, spec));
    json_t *u = kube_json_at(c, "securityContext", "runAsUser");
    if (!json_is_integer(u))
        u = kube_json_at(spec, "securityContext", "runAsUser");
    return json_is_integer(u) && json_integer_value(u) >= 0 ? json_integer_value(u) : -1;
}

/* The init container's securityContext, within Pod Security "restricted" (the mpi-agent image
 * runs as 65532; it needs no privilege): no escalation, no capabilities, RuntimeDefault
 * seccomp, non-root: as the launcher's user when its main container (or pod) names one, else
 * as the pod's or the image's. runAsNonRoot is left out only when the pod runs as root and the
 * launcher names no other user: the pod is not restricted then anyway. One exception: an SSH
 * launcher that names no user and keeps its keys at /root/.ssh (mode 0600, root's: upstream's
 * root convention) logs in as root, so the init container reads the keys as root (the image's
 * 65532 could not: found on a real kubelet, which runs the image's USER). */
static json_t *init_security_context(const struct mpijob *j, long long uid)
{
    json_t *sc = json_pack("{s:b, s:{s:[s]}, s:{s:s}}", "allowPrivilegeEscalation", 0, "capabilities", "drop", "ALL",
                           "seccompProfile", "type", "RuntimeDefault");
    json_t *pu = kube_json_at(j->launcher.template, "spec", "securityContext", "runAsUser");
    int pod_root = json_is_integer(pu) && json_integer_value(pu) == 0;
    int root_keys = j->transport == MPIK8S_TRANSPORT_SSH && uid < 0 && strcmp(j->ssh_auth_mount_path, ROOT_SSH_PATH) == 0;
    if (sc && root_keys)
        json_object_set_new(sc, "runAsUser", json_integer(0));
    if (sc && uid > 0)
        json_object_set_new(sc, "runAsUser", json_integer(uid));
    if (sc && !root_keys && (uid > 0 || !pod_root))
        json_object_set_new(sc, "runAsNonRoot", json_true());
    return sc;
}

static json_t *init_container(const struct mpijob *j, const struct build_opts *o)
{
    json_t *c = json_pack("{s:s, s:s, s:s, s:[s,s], s:{s:{s:s, s:s}}}", "name", "mpi-agent-init", "image",
                          o->agent_image ? o->agent_image : DEFAULT_AGENT_IMAGE, "imagePullPolicy", "IfNotPresent",
                          "command", "mpi-agent", "init", "resources", "requests", "cpu", "50m", "memory", "64Mi");
    if (!c)
        return NULL;
    agent_env(j, c);
    long long uid = launcher_uid(j);
    if (j->transport == MPIK8S_TRANSPORT_SSH && uid >= 0)
        objects_env_add_int(c, MPIK8S_ENV_LAUNCHER_UID, uid); /* SSH login names are the launcher image's */
    json_t *sc = init_security_context(j, uid);
    if (!sc) {
        json_decref(c);
        return NULL;
    }
    json_object_set_new(c, "securityContext", sc);
    objects_mount_add(c, VOL_AGENT, MPIK8S_AGENT_DIR, 0);
    objects_mount_add(c, VOL_CONFIG, MPIK8S_CONFIG_DIR, 1);
    if (j->transport == MPIK8S_TRANSPORT_SSH)
        objects_mount_add(c, "ssh-auth", j->ssh_auth_mount_path, 1);
    return c;
}

/* The readiness probe of a wrapped launcher: Ready once the run's ranks are up (contract.h). */
static json_t *ready_probe(void)
{
    return json_pack("{s:{s:[s, s, s, s]}, s:i, s:i}", "exec", "command", MPIK8S_AGENT_DIR "/mpi-agent", MPIK8S_READY_CMD,
                     "--timeout", MPIK8S_READY_WAIT, "timeoutSeconds", MPIK8S_READY_PROBE_TIMEOUT_S, "periodSeconds",
                     MPIK8S_READY_PROBE_PERIOD_S);
}

/* command: [cmd..] args: [a..]  ->  command: [/opt/kube/mpi-agent, run, --, cmd.., a..], and the
 * readiness probe unless the template has one */
static void wrap_command(json_t *c)
{
    json_t *cmd = kube_json_at(c, "command");
    if (!json_is_array(cmd) || json_array_size(cmd) == 0)
        return;
    json_t *w = json_pack("[s, s, s]", MPIK8S_AGENT_DIR "/mpi-agent", "run", "--");
    json_array_extend(w, cmd);
    json_t *args = kube_json_at(c, "args");
    if (json_is_array(args))
        json_array_extend(w, args);
    json_object_set_new(c, "command", w);
    json_object_del(c, "args");
    if (!kube_json_at(c, "readinessProbe"))
        json_object_set_new(c, "readinessProbe", ready_probe());
}

/* 0 ok, -1 out of memory. */
static int edit_containers(const struct mpijob *j, json_t *spec)
{
    json_t *cs = kube_json_at(spec, "containers");
    size_t main = objects_main_container_index(j, spec), i;
    json_t *c;
    json_array_foreach(cs, i, c) {
        agent_env(j, c);
        objects_env_add(c, "K_MPI_JOB_ROLE", "launcher");
        if (flavour_env(j, c) < 0)
            return -1;
        if (!j->run_launcher_as_worker) {
            objects_env_add(c, "NVIDIA_VISIBLE_DEVICES", "");
            objects_env_add(c, "NVIDIA_DRIVER_CAPABILITIES", "");
        }
        objects_mount_add(c, VOL_AGENT, MPIK8S_AGENT_DIR, 0);
        objects_mount_add(c, VOL_CONFIG, MPIK8S_CONFIG_DIR, 1);
        if (j->transport == MPIK8S_TRANSPORT_SSH)
            objects_mount_add(c, "ssh-auth", j->ssh_auth_mount_path, 1);
        if (i == main && j->agent_run)
            wrap_command(c);
    }
    return 0;
}

static void add_volumes(const struct mpijob *j, json_t *spec)
{
    char *cm = objects_name_config(j);
    json_t *vols = kube_json_arr(spec, "volumes");
    json_array_append_new(vols, json_pack("{s:s, s:{}}", "name", VOL_AGENT, "emptyDir"));
    json_array_append_new(vols,
                          json_pack("{s:s, s:{s:s, s:[{s:s, s:s, s:i}, {s:s, s:s, s:i}]}}", "name", VOL_CONFIG, "configMap",
                                    "name", cm ? cm : "", "items", "key", "hostfile", "path", "hostfile", "mode", 0444,
                                    "key", "discover_hosts.sh", "path", "discover_hosts.sh", "mode", 0555));
    if (j->transport == MPIK8S_TRANSPORT_SSH)
        json_array_append_new(vols, objects_ssh_volume(j));
    free(cm);
}

static json_t *launcher_template(const struct mpijob *j, const struct build_opts *o)
{
    json_t *pod = objects_pod_from_template(j, &j->launcher, objects_pod_labels(j, "launcher", -1));
    char *name = objects_name_launcher(j), *svc = objects_name_service(j);
    if (!pod || !name || !svc) {
        json_decref(pod);
        free(name);
        free(svc);
        return NULL;
    }
    json_t *spec = kube_json_at(pod, "spec");
    kube_json_set_str(spec, "hostname", name);
    kube_json_set_str(spec, "subdomain", svc);
    if (!objects_launcher_user_sa(j) && !o->no_launcher_rbac) /* limited mode: no such account */
        kube_json_set_str(spec, "serviceAccountName", name);  /* the user's own account is kept */
    free(name);
    free(svc);
    kube_json_set_str(spec, "restartPolicy", j->launcher.restart_policy);
    json_t *inits = json_pack("[o]", init_container(j, o));
    json_t *user_inits = kube_json_at(spec, "initContainers");
    if (json_is_array(user_inits))
        json_array_extend(inits, user_inits);
    json_object_set_new(spec, "initContainers", inits);
    if (edit_containers(j, spec) < 0) {
        json_decref(pod);
        return NULL;
    }
    add_volumes(j, spec);
    objects_pod_gang(j, o, pod);
    /* `kubectl logs` on the launcher shows the MPI program without naming a container */
    const char *main_name =
        kube_json_at_str(json_array_get(kube_json_at(spec, "containers"), objects_main_container_index(j, spec)), "name");
    json_t *meta = kube_json_at(pod, "metadata");
    if (main_name && json_is_object(meta))
        kube_json_set_str(kube_json_obj(meta, "annotations"), "kubectl.kubernetes.io/default-container", main_name);
    return pod;
}

json_t *objects_launcher_job(const struct mpijob *j, const struct build_opts *o)
{
    char *name = objects_name_launcher(j);
    json_t *tmpl = launcher_template(j, o);
    json_t *meta = name ? objects_meta(j, name) : NULL;
    free(name);
    if (!tmpl || !meta) {
        json_decref(tmpl);
        json_decref(meta);
        return NULL;
    }
    json_object_update(kube_json_at(meta, "labels"), kube_json_at(tmpl, "metadata", "labels"));
    /* podReplacementPolicy Failed (as upstream): a terminating launcher pod is not
     * replaced until it is gone, so two launchers never run at once (kubernetes#115844) */
    json_t *spec = json_pack("{s:b, s:o, s:s}", "suspend", j->suspend, "template", tmpl, "podReplacementPolicy", "Failed");
    if (j->backoff_limit != MPIJOB_UNSET)
        json_object_set_new(spec, "backoffLimit", json_integer(j->backoff_limit));
    if (j->active_deadline_s != MPIJOB_UNSET)
        json_object_set_new(spec, "activeDeadlineSeconds", json_integer(j->active_deadline_s));
    if (j->ttl_after_finished_s != MPIJOB_UNSET) /* as upstream: the Job controller deletes it */
        json_object_set_new(spec, "ttlSecondsAfterFinished", json_integer(j->ttl_after_finished_s));
    if (j->pod_failure_policy) /* checked by mpijob_validate; NULL here only out of memory */
        json_object_set_new(spec, "podFailurePolicy", pod_failure_policy_parse(j->pod_failure_policy, "Never", NULL));
    return json_pack("{s:s, s:s, s:o, s:o}", "apiVersion", "batch/v1", "kind", "Job", "metadata", meta, "spec", spec);
}
