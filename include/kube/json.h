/* json.h - small helpers over jansson for Kubernetes objects: key-list lookups
 * (kube_json_at and its typed forms: the one way the library, the operator and the agent
 * read a field), metadata accessors, typed field reads whose errors name the field, and
 * object building. All getters borrow (no incref). */
#ifndef KUBE_JSON_H
#define KUBE_JSON_H

#include <stddef.h>
#include <jansson.h>

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
/* Follows object keys (a NULL-terminated list; keys may contain '.'); borrowed result or NULL. */
json_t *kube_json_at_(const json_t *obj, ...);
#define kube_json_at(o, ...) kube_json_at_((o), __VA_ARGS__, (const char *)NULL)
/* The string at a key list, or NULL. */
#define kube_json_at_str(o, ...) json_string_value(kube_json_at((o), __VA_ARGS__))
/* The integer at a key list, or dflt when it is missing or not an integer. */
#define kube_json_at_int(o, dflt, ...) kube_json_int_or(kube_json_at((o), __VA_ARGS__), (dflt))
/* 1/0 for a JSON true/false at a key list, dflt otherwise. */
#define kube_json_at_bool(o, dflt, ...) kube_json_bool_or(kube_json_at((o), __VA_ARGS__), (dflt))
/* v's integer, or dflt when v is NULL or not an integer. */
long long kube_json_int_or(const json_t *v, long long dflt);
/* 1/0 when v is true/false, dflt otherwise. */
int kube_json_bool_or(const json_t *v, int dflt);
/* The first object in array arr whose string member key equals value, or NULL; borrowed. */
json_t *kube_json_find(const json_t *arr, const char *key, const char *value);
/* Returns 1 if a and b are equal JSON (NULL equals only NULL). */
int kube_json_equal(const json_t *a, const json_t *b);

/* "<path>: expected <what>, got <JSON type of v, or nothing>" into *errmsg; returns -1. */
int kube_json_type_err(char **errmsg, const char *path, const char *what, const json_t *v);
/* "<path>.<key>: expected <what>, got ..." into *errmsg; returns -1. */
int kube_json_type_errk(char **errmsg, const char *path, const char *key, const char *what, const json_t *v);
/* Typed reads of obj[key] into *out when present (absent or null leaves *out alone): 0 ok,
 * -1 with *errmsg "<path>.<key>: expected ..." on a wrong type. An integer accepts a whole
 * number written with a fraction (2.0); a string is borrowed. */
int kube_json_get_int(const json_t *obj, const char *key, const char *path, long long *out, char **errmsg);
int kube_json_get_bool(const json_t *obj, const char *key, const char *path, int *out, char **errmsg);
int kube_json_get_str(const json_t *obj, const char *key, const char *path, const char **out, char **errmsg);

/* obj[key], replaced by a new empty object (array) when missing or of another type; borrowed,
 * NULL on allocation failure. */
json_t *kube_json_obj(json_t *obj, const char *key);
json_t *kube_json_arr(json_t *obj, const char *key);
/* Sets obj[key] to a copy of s ("" for NULL). */
void kube_json_set_str(json_t *obj, const char *key, const char *s);

/* Parses len bytes of JSON (need not be NUL-terminated); NULL with *errmsg on failure. */
json_t *kube_json_parse(const char *data, size_t len, char **errmsg);

#endif
