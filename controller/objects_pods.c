/* objects_pods.c - pod-template plumbing shared by the worker and launcher
 * builders: env and mount edits that never override the user's values,
 * the SSH volume, gang-scheduling marks. */
#include "objects_pods.h"
#include "kube/json.h"
#include "kube/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void objects_env_add(json_t *c, const char *name, const char *value)
{
    json_t *env = kube_json_arr(c, "env");
    if (kube_json_find(env, "name", name))
        return;
    json_array_append_new(env, json_pack("{s:s, s:s}", "name", name, "value", value));
}

void objects_env_add_int(json_t *c, const char *name, long long value)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%lld", value);
    objects_env_add(c, name, buf);
}

void objects_mount_add(json_t *c, const char *name, const char *path, int read_only)
{
    json_t *m = json_pack("{s:s, s:s}", "name", name, "mountPath", path);
    if (m && read_only)
        json_object_set_new(m, "readOnly", json_true());
    json_array_append_new(kube_json_arr(c, "volumeMounts"), m);
}

/* Upstream's file names (id_rsa, id_rsa.pub, authorized_keys) and ours; mode 0600
 * only at /root/.ssh (as upstream: elsewhere a non-root user must read the files). */
json_t *objects_ssh_volume(const struct mpijob *j)
{
    char *secret = objects_name_secret(j);
    json_t *v =
        secret
            ? json_pack("{s:s, s:{s:s, s:[{s:s,s:s},{s:s,s:s},{s:s,s:s},{s:s,s:s},{s:s,s:s},{s:s,s:s},{s:s,s:s}]}}", "name",
                        "ssh-auth", "secret", "secretName", secret, "items", "key", "ssh-privatekey", "path", "id_rsa",
                        "key", "ssh-publickey", "path", "id_rsa.pub", "key", "ssh-publickey", "path", "authorized_keys",
                        "key", "ssh-privatekey", "path", "ssh-privatekey", "key", "ssh-publickey", "path", "ssh-publickey",
                        "key", "ssh-privatekey", "path", "id_ed25519", "key", "ssh-publickey", "path", "id_ed25519.pub")
            : NULL;
    free(secret);
    if (v && strcmp(j->ssh_auth_mount_path, ROOT_SSH_PATH) == 0)
        json_object_set_new(kube_json_at(v, "secret"), "defaultMode", json_integer(0600));
    return v;
}

json_t *objects_pod_from_template(const struct mpijob *j, const struct replica_spec *r, json_t *labels)
{
    json_t *t = r->template;
    json_t *spec = json_deep_copy(kube_json_at(t, "spec"));
    json_t *meta = json_object();
    if (!spec || !meta) {
        json_decref(spec);
        json_decref(meta);
        json_decref(labels);
        return NULL;
    }
    json_t *tl = kube_json_at(t, "metadata", "labels");
    json_t *all = json_is_object(tl) ? json_deep_copy(tl) : json_object();
    json_object_update(all, labels);
    json_decref(labels);
    json_object_set_new(meta, "labels", all);
    json_t *ta = kube_json_at(t, "metadata", "annotations");
    if (json_is_object(ta) && json_object_size(ta) > 0)
        json_object_set_new(meta, "annotations", json_deep_copy(ta));
    (void)j;
    return json_pack("{s:o, s:o}", "metadata", meta, "spec", spec);
}

void objects_pod_gang(const struct mpijob *j, const struct build_opts *o, json_t *pod)
{
    if (!o->gang || !*o->gang)
        return;
    json_t *meta = kube_json_obj(pod, "metadata");
    json_t *spec = kube_json_obj(pod, "spec");
    if (strcmp(o->gang, "volcano") == 0) {
        kube_json_set_str(spec, "schedulerName", "volcano");
        kube_json_set_str(kube_json_obj(meta, "annotations"), "scheduling.k8s.io/group-name", j->name);
    } else {
        kube_json_set_str(spec, "schedulerName", o->gang);
        kube_json_set_str(kube_json_obj(meta, "labels"), "scheduling.x-k8s.io/pod-group", j->name);
    }
}

size_t objects_main_container_index(const struct mpijob *j, json_t *spec)
{
    json_t *cs = kube_json_at(spec, "containers");
    size_t i;
    json_t *c;
    if (j->main_container)
        json_array_foreach(cs, i, c) {
            const char *n = kube_json_at_str(c, "name");
            if (n && strcmp(n, j->main_container) == 0)
                return i;
        }
    return 0;
}
