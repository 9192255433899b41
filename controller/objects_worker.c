/* objects_worker.c - worker pod <job>-worker-<i>: the user's Worker template
 * with our labels, a stable DNS name (hostname + subdomain), and a default
 * command that keeps the pod available for the transport (sleep for exec,
 * sshd with the job's key for SSH) when the template has none. */
#include "objects_pods.h"
#include "kube/json.h"
#include "kube/util.h"
#include "mpik8s/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* sshd on the job's key: the private key doubles as host key, so mpi-rsh can
 * verify the worker against the public key the job distributes. Images that ship
 * mpi-sshd (images/openmpi) get it: it also hands the container's environment to
 * sessions; otherwise plain sshd with a private copy of the key (sshd refuses a
 * host key others can read, and the Secret is 0644 outside /root/.ssh). The mount
 * path is quoted: validation limits its characters, this keeps it one word. */
static json_t *sshd_command(const struct mpijob *j)
{
    char *script = NULL;
    char *d = mpik8s_sh_quote(j->ssh_auth_mount_path);
    if (!d || asprintf(&script,
                       "d=%s; if command -v mpi-sshd >/dev/null 2>&1; then exec mpi-sshd --dir \"$d\" --port %lld; fi; "
                       "k=$(mktemp -d) && cp \"$d/ssh-privatekey\" \"$k/hostkey\" && chmod 600 \"$k/hostkey\" && "
                       "{ [ \"$(id -u)\" != 0 ] || mkdir -p /run/sshd; } && exec /usr/sbin/sshd -De -p %lld "
                       "-h \"$k/hostkey\" -o AuthorizedKeysFile=\"$d/authorized_keys\" -o StrictModes=no -o PidFile=none",
                       d, j->ssh_port, j->ssh_port) < 0) {
        free(d);
        return NULL;
    }
    free(d);
    json_t *cmd = json_pack("[s, s, s]", "/bin/sh", "-c", script);
    free(script);
    return cmd;
}

static void default_command(const struct mpijob *j, json_t *c)
{
    json_t *cmd = kube_json_at(c, "command");
    json_t *args = kube_json_at(c, "args");
    if ((json_is_array(cmd) && json_array_size(cmd) > 0) || (json_is_array(args) && json_array_size(args) > 0))
        return;
    if (j->transport == MPIK8S_TRANSPORT_SSH) {
        json_object_set_new(c, "command", sshd_command(j));
    } else {
        json_object_set_new(c, "command", json_pack("[s]", "sleep"));
        json_object_set_new(c, "args", json_pack("[s]", "365d"));
    }
}

/* Hydra's proxies (MPICH, Intel MPI) connect back to the launcher by its short host name
 * (<job>-launcher, from gethostname()), which the pod's default DNS search list does not
 * resolve: the job's Service domain goes into the worker's search list, as upstream v0.8 does
 * for every worker (docs/controller.md). Open MPI's daemons call back by address. */
static void hydra_dns_search(const struct mpijob *j, const struct build_opts *o, json_t *spec, const char *svc)
{
    if (j->impl == MPIK8S_MPI_OPENMPI)
        return;
    const char *dom = o->cluster_domain && *o->cluster_domain ? o->cluster_domain : "cluster.local";
    json_t *cfg = kube_json_obj(spec, "dnsConfig");
    json_t *searches = cfg ? kube_json_arr(cfg, "searches") : NULL;
    char *s = kube_strdup_printf("%s.%s.svc.%s", svc, j->ns, dom);
    if (searches && s)
        json_array_append_new(searches, json_string(s));
    free(s);
}

json_t *objects_worker_pod(const struct mpijob *j, const struct build_opts *o, long long i)
{
    char *name = objects_name_worker(j, i);
    char *svc = objects_name_service(j);
    json_t *pod = name && svc ? objects_pod_from_template(j, &j->worker, objects_pod_labels(j, "worker", i)) : NULL;
    if (!pod) {
        free(name);
        free(svc);
        return NULL;
    }
    json_t *meta = kube_json_at(pod, "metadata");
    json_t *spec = kube_json_at(pod, "spec");
    json_object_set_new(meta, "name", json_string(name));
    json_object_set_new(meta, "namespace", json_string(j->ns));
    json_object_set_new(meta, "ownerReferences", json_pack("[o]", objects_owner_ref(j)));
    kube_json_set_str(spec, "hostname", name);
    kube_json_set_str(spec, "subdomain", svc);
    kube_json_set_str(spec, "restartPolicy", j->worker.restart_policy);
    if (kube_json_at_bool(spec, 0, "hostNetwork"))
        kube_json_set_str(spec, "dnsPolicy", "ClusterFirstWithHostNet");
    hydra_dns_search(j, o, spec, svc);
    json_t *c = json_array_get(kube_json_at(spec, "containers"), objects_main_container_index(j, spec));
    default_command(j, c);
    objects_env_add(c, "K_MPI_JOB_ROLE", "worker");
    if (j->transport == MPIK8S_TRANSPORT_SSH) {
        objects_mount_add(c, "ssh-auth", j->ssh_auth_mount_path, 1);
        json_array_append_new(kube_json_arr(spec, "volumes"), objects_ssh_volume(j));
    }
    objects_pod_gang(j, o, pod);
    json_t *out = json_pack("{s:s, s:s, s:O, s:O}", "apiVersion", "v1", "kind", "Pod", "metadata", meta, "spec", spec);
    json_decref(pod);
    free(name);
    free(svc);
    return out;
}
