/* objects_pods.h - helpers shared by the worker-pod and launcher-Job builders
 * (pod template copying, env/volume edits, gang-scheduling marks). */
#ifndef OBJECTS_PODS_H
#define OBJECTS_PODS_H

#include <jansson.h>
#include "objects.h"

/* Adds {name, value} to container c's env unless a variable of that name is already there. */
void objects_env_add(json_t *c, const char *name, const char *value);
/* objects_env_add with a decimal value. */
void objects_env_add_int(json_t *c, const char *name, long long value);
/* Appends a volumeMount {name, mountPath[, readOnly]} to container c. */
void objects_mount_add(json_t *c, const char *name, const char *path, int read_only);
/* The ssh-auth volume (Secret <job>-ssh as id_rsa, id_rsa.pub, authorized_keys and
 * our names; defaultMode 0600 only at ROOT_SSH_PATH). */
json_t *objects_ssh_volume(const struct mpijob *j);
/* Builds {metadata: {labels, annotations}, spec} from a replica's template plus our labels. */
json_t *objects_pod_from_template(const struct mpijob *j, const struct replica_spec *r, json_t *labels);
/* Marks a pod (spec+metadata) for o->gang scheduling; no-op without gang. */
void objects_pod_gang(const struct mpijob *j, const struct build_opts *o, json_t *pod);
/* Index of the main container (mainContainer or 0) in a pod spec's containers. */
size_t objects_main_container_index(const struct mpijob *j, json_t *spec);

#endif
