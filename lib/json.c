/* json.c - dotted-path access and metadata helpers over jansson. */
#include "kube/json.h"
#include "kube/util.h"

#include <stdlib.h>
#include <string.h>

/* Looks up one path component of length n in v (object key or array index). */
static json_t *step(const json_t *v, const char *part, size_t n)
{
    if (json_is_object(v))
        return json_object_getn(v, part, n);
    if (json_is_array(v) && n > 0 && n < 10) {
        size_t idx = 0;
        for (size_t i = 0; i < n; i++) {
            if (part[i] < '0' || part[i] > '9')
                return NULL;
            idx = idx * 10 + (size_t)(part[i] - '0');
        }
        return json_array_get(v, idx);
    }
    return NULL;
}

json_t *kube_json_path(const json_t *obj, const char *path)
{
    if (!obj || !path)
        return NULL;
    const json_t *v = obj;
    const char *p = path;
    for (;;) {
        const char *dot = strchr(p, '.');
        size_t n = dot ? (size_t)(dot - p) : strlen(p);
        v = step(v, p, n);
        if (!v || !dot)
            return (json_t *)v;
        p = dot + 1;
    }
}

const char *kube_json_str(const json_t *obj, const char *path)
{
    return json_string_value(kube_json_path(obj, path));
}

long long kube_json_int(const json_t *obj, const char *path, long long dflt)
{
    json_t *v = kube_json_path(obj, path);
    return json_is_integer(v) ? (long long)json_integer_value(v) : dflt;
}

int kube_json_bool(const json_t *obj, const char *path, int dflt)
{
    json_t *v = kube_json_path(obj, path);
    return json_is_boolean(v) ? json_is_true(v) : dflt;
}

int kube_json_set_path(json_t *obj, const char *path, json_t *value)
{
    if (!json_is_object(obj) || !path || !value) {
        json_decref(value);
        return -1;
    }
    json_t *cur = obj;
    const char *p = path;
    for (;;) {
        const char *dot = strchr(p, '.');
        if (!dot)
            return json_object_set_new(cur, p, value) ? -1 : 0;
        size_t n = (size_t)(dot - p);
        json_t *next = json_object_getn(cur, p, n);
        if (!json_is_object(next)) {
            next = json_object();
            if (!next || json_object_setn_new(cur, p, n, next)) {
                json_decref(value);
                return -1;
            }
        }
        cur = next;
        p = dot + 1;
    }
}

const char *kube_obj_name(const json_t *obj) { return kube_json_str(obj, "metadata.name"); }
const char *kube_obj_namespace(const json_t *obj) { return kube_json_str(obj, "metadata.namespace"); }
const char *kube_obj_resource_version(const json_t *obj)
{
    return kube_json_str(obj, "metadata.resourceVersion");
}
const char *kube_obj_uid(const json_t *obj) { return kube_json_str(obj, "metadata.uid"); }

const char *kube_obj_label(const json_t *obj, const char *key)
{
    json_t *labels = kube_json_path(obj, "metadata.labels");
    return key ? json_string_value(json_object_get(labels, key)) : NULL;
}

json_t *kube_json_parse(const char *data, size_t len, char **errmsg)
{
    json_error_t jerr;
    json_t *v = json_loadb(data, len, JSON_ALLOW_NUL, &jerr);
    if (!v)
        kube_set_err(errmsg, "invalid JSON at line %d column %d: %s", jerr.line, jerr.column, jerr.text);
    return v;
}

char *kube_json_dump(const json_t *v)
{
    return v ? json_dumps(v, JSON_COMPACT) : NULL;
}
