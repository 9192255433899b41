/* json.h - small helpers over jansson for Kubernetes objects: dotted-path
 * lookups, metadata accessors, label access. All getters borrow (no incref). */
#ifndef KUBE_JSON_H
#define KUBE_JSON_H

#include <stddef.h>
#include <jansson.h>

/* Returns the value at a dotted path ("metadata.labels.app", "spec.containers.0.name": numeric
 * parts index arrays; a key containing '.' can't be reached this way) or NULL; borrowed. */
json_t *kube_json_path(const json_t *obj, const char *path);
/* Returns the string at path or NULL (not a string / missing); borrowed. */
const char *kube_json_str(const json_t *obj, const char *path);
/* Returns the integer at path, or dflt when missing or not an integer. */
long long kube_json_int(const json_t *obj, const char *path, long long dflt);
/* Returns 1/0 for a JSON true/false at path, dflt otherwise. */
int kube_json_bool(const json_t *obj, const char *path, int dflt);
/* Sets value at a dotted path, creating intermediate objects; steals value. 0 ok, -1 error. */
int kube_json_set_path(json_t *obj, const char *path, json_t *value);
/* metadata.name, or NULL. */
const char *kube_obj_name(const json_t *obj);
/* metadata.namespace, or NULL. */
const char *kube_obj_namespace(const json_t *obj);
/* metadata.resourceVersion, or NULL. */
const char *kube_obj_resource_version(const json_t *obj);
/* metadata.uid, or NULL. */
const char *kube_obj_uid(const json_t *obj);
/* metadata.labels[key], or NULL. */
const char *kube_obj_label(const json_t *obj, const char *key);
/* Parses len bytes of JSON (need not be NUL-terminated); NULL with *errmsg on failure. */
json_t *kube_json_parse(const char *data, size_t len, char **errmsg);
/* Serializes compactly (new string) or NULL. */
char *kube_json_dump(const json_t *v);

#endif
