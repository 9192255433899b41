/* json.c - key-list access, metadata helpers, typed field reads with
 * field-naming errors and object building over jansson. */
#include "kube/json.h"
#include "kube/util.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

long long kube_json_int_or(const json_t *v, long long dflt)
{
    return json_is_integer(v) ? (long long)json_integer_value(v) : dflt;
}

int kube_json_bool_or(const json_t *v, int dflt) { return json_is_boolean(v) ? json_is_true(v) : dflt; }

const char *kube_obj_name(const json_t *obj) { return kube_json_at_str(obj, "metadata", "name"); }
const char *kube_obj_namespace(const json_t *obj) { return kube_json_at_str(obj, "metadata", "namespace"); }
const char *kube_obj_resource_version(const json_t *obj) { return kube_json_at_str(obj, "metadata", "resourceVersion"); }
const char *kube_obj_uid(const json_t *obj) { return kube_json_at_str(obj, "metadata", "uid"); }

const char *kube_obj_label(const json_t *obj, const char *key)
{
    json_t *labels = kube_json_at(obj, "metadata", "labels");
    return key ? json_string_value(json_object_get(labels, key)) : NULL;
}

json_t *kube_json_at_(const json_t *obj, ...)
{
    va_list ap;
    va_start(ap, obj);
    const char *k;
    json_t *cur = (json_t *)obj;
    while (cur && (k = va_arg(ap, const char *)) != NULL)
        cur = json_object_get(cur, k);
    va_end(ap);
    return cur;
}

json_t *kube_json_find(const json_t *arr, const char *key, const char *value)
{
    size_t i;
    json_t *e;
    json_array_foreach(arr, i, e) {
        const char *s = json_string_value(json_object_get(e, key));
        if (s && value && strcmp(s, value) == 0)
            return e;
    }
    return NULL;
}

int kube_json_equal(const json_t *a, const json_t *b)
{
    if (!a || !b)
        return a == b;
    return json_equal((json_t *)a, (json_t *)b);
}

static const char *type_name(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER: return "an integer";
    case JSON_REAL: return "a number with a fraction";
    case JSON_TRUE:
    case JSON_FALSE: return "a boolean";
    default: return "null";
    }
}

int kube_json_type_err(char **errmsg, const char *path, const char *what, const json_t *v)
{
    return kube_set_err(errmsg, "%s: expected %s, got %s", path, what, v ? type_name(v) : "nothing");
}

int kube_json_type_errk(char **errmsg, const char *path, const char *key, const char *what, const json_t *v)
{
    return kube_set_err(errmsg, "%s.%s: expected %s, got %s", path, key, what, v ? type_name(v) : "nothing");
}

/* obj[key], or NULL when absent or JSON null. */
static json_t *present(const json_t *obj, const char *key)
{
    json_t *v = json_object_get(obj, key);
    return json_is_null(v) ? NULL : v;
}

int kube_json_get_int(const json_t *obj, const char *key, const char *path, long long *out, char **errmsg)
{
    json_t *v = present(obj, key);
    if (!v)
        return 0;
    if (json_is_real(v)) {
        /* only whole numbers inside long long's range convert (a cast outside it is UB) */
        double d = json_real_value(v);
        if (d >= -9223372036854775808.0 && d < 9223372036854775808.0 && d == (double)(long long)d) {
            *out = (long long)d;
            return 0;
        }
    }
    if (!json_is_integer(v))
        return kube_json_type_errk(errmsg, path, key, "an integer", v);
    *out = json_integer_value(v);
    return 0;
}

/* obj[key] when present and of type t (1), absent or null (0), or -1 with *errmsg naming the field. */
static int typed(const json_t *obj, const char *key, const char *path, json_type t, const char *what, json_t **v,
                 char **errmsg)
{
    *v = present(obj, key);
    if (!*v)
        return 0;
    int ok = t == JSON_TRUE ? json_is_boolean(*v) : json_typeof(*v) == t;
    return ok ? 1 : kube_json_type_errk(errmsg, path, key, what, *v);
}

int kube_json_get_bool(const json_t *obj, const char *key, const char *path, int *out, char **errmsg)
{
    json_t *v;
    int rc = typed(obj, key, path, JSON_TRUE, "a boolean", &v, errmsg);
    if (rc > 0)
        *out = json_is_true(v);
    return rc < 0 ? -1 : 0;
}

int kube_json_get_str(const json_t *obj, const char *key, const char *path, const char **out, char **errmsg)
{
    json_t *v;
    int rc = typed(obj, key, path, JSON_STRING, "a string", &v, errmsg);
    if (rc > 0)
        *out = json_string_value(v);
    return rc < 0 ? -1 : 0;
}

/* obj[key] when is(obj[key]), else a new value from make() set there. */
static json_t *ensure(json_t *obj, const char *key, int (*is)(const json_t *), json_t *(*make)(void))
{
    json_t *v = json_object_get(obj, key);
    if (is(v))
        return v;
    v = make();
    if (json_object_set_new(obj, key, v) < 0)
        return NULL;
    return v;
}

static int is_object(const json_t *v) { return json_is_object(v); }
static int is_array(const json_t *v) { return json_is_array(v); }

json_t *kube_json_obj(json_t *obj, const char *key) { return ensure(obj, key, is_object, json_object); }
json_t *kube_json_arr(json_t *obj, const char *key) { return ensure(obj, key, is_array, json_array); }

void kube_json_set_str(json_t *obj, const char *key, const char *s)
{
    json_object_set_new(obj, key, json_string(s ? s : ""));
}

json_t *kube_json_parse(const char *data, size_t len, char **errmsg)
{
    json_error_t jerr;
    json_t *v = json_loadb(data, len, JSON_ALLOW_NUL, &jerr);
    if (!v)
        kube_set_err(errmsg, "invalid JSON at line %d column %d: %s", jerr.line, jerr.column, jerr.text);
    return v;
}
