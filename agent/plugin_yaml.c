/* plugin_yaml.c - JSON to YAML for `kubectl mpijob get -o yaml`, through libyaml's emitter:
 * block style, keys sorted (as kubectl prints them), a string quoted when it would read back as
 * something else (a number, a boolean, null, empty). */
#include "plugin.h"

#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "kube/util.h"

#define YAML_MAX_DEPTH 64

/* 1 when s, written plain, would not read back as the same string. */
static int needs_quotes(const char *s)
{
    static const char *words[] = { "",    "~",   "null", "Null", "NULL", "true", "True", "TRUE",  "false", "False", "FALSE",
                                   "yes", "Yes", "YES",  "no",   "No",   "NO",   "on",   "On",    "ON",    "off",   "Off",
                                   "OFF", "y",   "Y",    "n",    "N",    ".inf", ".Inf", "-.inf", ".nan",  ".NaN" };
    for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
        if (!strcmp(s, words[i]))
            return 1;
    char *end = NULL;
    (void)strtod(s, &end);
    return end && *end == '\0';
}

/* One scalar: plain where it reads back as itself, double-quoted when quoted. */
static int scalar(yaml_emitter_t *em, const char *text, int quoted)
{
    yaml_event_t ev;
    yaml_scalar_style_t style = quoted ? YAML_DOUBLE_QUOTED_SCALAR_STYLE : YAML_ANY_SCALAR_STYLE;
    if (!yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)text, (int)strlen(text), !quoted, 1, style))
        return -1;
    return yaml_emitter_emit(em, &ev) ? 0 : -1;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

static int emit(yaml_emitter_t *em, const json_t *v, int depth);

static int emit_object(yaml_emitter_t *em, const json_t *v, int depth)
{
    yaml_event_t ev;
    size_t n = json_object_size(v), k = 0;
    const char **keys = calloc(n + 1, sizeof(*keys)), *key;
    json_t *val;
    if (!keys || !yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_MAPPING_STYLE) ||
        !yaml_emitter_emit(em, &ev)) {
        free(keys);
        return -1;
    }
    json_object_foreach((json_t *)v, key, val)
        keys[k++] = key;
    qsort(keys, n, sizeof(*keys), cmp_str);
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < n; i++)
        if (scalar(em, keys[i], needs_quotes(keys[i])) < 0 || emit(em, json_object_get(v, keys[i]), depth + 1) < 0)
            rc = -1;
    free(keys);
    if (rc < 0 || !yaml_mapping_end_event_initialize(&ev) || !yaml_emitter_emit(em, &ev))
        return -1;
    return 0;
}

static int emit(yaml_emitter_t *em, const json_t *v, int depth)
{
    yaml_event_t ev;
    char num[64];
    if (depth > YAML_MAX_DEPTH)
        return -1;
    switch (json_typeof(v)) {
    case JSON_OBJECT: return emit_object(em, v, depth);
    case JSON_ARRAY: {
        size_t i;
        json_t *x;
        if (!yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_SEQUENCE_STYLE) ||
            !yaml_emitter_emit(em, &ev))
            return -1;
        json_array_foreach(v, i, x)
            if (emit(em, x, depth + 1) < 0)
                return -1;
        return yaml_sequence_end_event_initialize(&ev) && yaml_emitter_emit(em, &ev) ? 0 : -1;
    }
    case JSON_STRING: return scalar(em, json_string_value(v), needs_quotes(json_string_value(v)));
    case JSON_INTEGER: snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT, json_integer_value(v)); return scalar(em, num, 0);
    case JSON_REAL: snprintf(num, sizeof(num), "%.17g", json_real_value(v)); return scalar(em, num, 0);
    case JSON_TRUE: return scalar(em, "true", 0);
    case JSON_FALSE: return scalar(em, "false", 0);
    case JSON_NULL: return scalar(em, "null", 0);
    }
    return -1;
}

static int write_handler(void *data, unsigned char *buf, size_t size) { return fwrite(buf, 1, size, (FILE *)data) == size; }

int plugin_yaml_write(FILE *f, const json_t *v, char **errmsg)
{
    yaml_emitter_t em;
    yaml_event_t ev;
    if (!yaml_emitter_initialize(&em))
        return kube_set_err(errmsg, "yaml: cannot initialise the emitter");
    yaml_emitter_set_output(&em, write_handler, f);
    yaml_emitter_set_unicode(&em, 1);
    yaml_emitter_set_width(&em, -1);
    int ok = yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING) && yaml_emitter_emit(&em, &ev) &&
             yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1) && yaml_emitter_emit(&em, &ev) &&
             emit(&em, v, 0) == 0 && yaml_document_end_event_initialize(&ev, 1) && yaml_emitter_emit(&em, &ev) &&
             yaml_stream_end_event_initialize(&ev) && yaml_emitter_emit(&em, &ev) && yaml_emitter_flush(&em);
    const char *problem = em.problem;
    yaml_emitter_delete(&em);
    if (!ok)
        return kube_set_err(errmsg, "yaml: %s", problem ? problem : "writing the document failed");
    return 0;
}
