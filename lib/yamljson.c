/* yamljson.c - YAML (libyaml document API) to jansson conversion, bounded. */
#include "yamljson.h"

#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "kube/util.h"

#define MAX_DEPTH 64
#define MAX_NODES 200000 /* after alias expansion: defuses "billion laughs" */

struct conv {
    yaml_document_t *doc;
    size_t nodes;
    char *err;
};

static json_t *conv_node(struct conv *c, yaml_node_t *n, int depth);

static json_t *conv_mapping(struct conv *c, yaml_node_t *n, int depth)
{
    json_t *obj = json_object();
    if (!obj)
        return NULL;
    for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node(c->doc, p->key);
        yaml_node_t *v = yaml_document_get_node(c->doc, p->value);
        if (!k || k->type != YAML_SCALAR_NODE) {
            kube_set_err(&c->err, "line %zu column %zu: mapping key is not a scalar",
                         (k ? k->start_mark.line : n->start_mark.line) + 1,
                         (k ? k->start_mark.column : n->start_mark.column) + 1);
            goto fail;
        }
        json_t *jv = v ? conv_node(c, v, depth + 1) : json_null();
        if (!jv)
            goto fail;
        /* first occurrence of a duplicate key wins (keeps results deterministic) */
        const char *key = (const char *)k->data.scalar.value;
        size_t klen = k->data.scalar.length;
        if (json_object_getn(obj, key, klen)) {
            json_decref(jv);
            continue;
        }
        if (json_object_setn_new(obj, key, klen, jv))
            goto fail;
    }
    return obj;
fail:
    json_decref(obj);
    return NULL;
}

static json_t *conv_sequence(struct conv *c, yaml_node_t *n, int depth)
{
    json_t *arr = json_array();
    if (!arr)
        return NULL;
    for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
        yaml_node_t *v = yaml_document_get_node(c->doc, *it);
        json_t *jv = v ? conv_node(c, v, depth + 1) : json_null();
        if (!jv || json_array_append_new(arr, jv)) {
            json_decref(arr);
            return NULL;
        }
    }
    return arr;
}

static json_t *conv_node(struct conv *c, yaml_node_t *n, int depth)
{
    if (depth > MAX_DEPTH) {
        kube_set_err(&c->err, "line %zu: nested deeper than %d levels", n->start_mark.line + 1, MAX_DEPTH);
        return NULL;
    }
    if (++c->nodes > MAX_NODES) {
        kube_set_err(&c->err, "more than %d nodes (alias expansion?)", MAX_NODES);
        return NULL;
    }
    switch (n->type) {
    case YAML_SCALAR_NODE: {
        const char *tag = (const char *)n->tag;
        int plain = n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
        if (plain && n->data.scalar.length == 0)
            return json_null();
        if (plain && n->data.scalar.length == 1 && n->data.scalar.value[0] == '~')
            return json_null();
        if (plain && tag && !strcmp(tag, YAML_NULL_TAG))
            return json_null();
        json_t *s = json_stringn_nocheck((const char *)n->data.scalar.value, n->data.scalar.length);
        if (!s)
            kube_set_err(&c->err, "line %zu: out of memory", n->start_mark.line + 1);
        return s;
    }
    case YAML_MAPPING_NODE: return conv_mapping(c, n, depth);
    case YAML_SEQUENCE_NODE: return conv_sequence(c, n, depth);
    default: kube_set_err(&c->err, "line %zu: empty node", n->start_mark.line + 1); return NULL;
    }
}

json_t *Kube_yaml_to_json(const char *data, size_t len, char **errmsg)
{
    yaml_parser_t parser;
    yaml_document_t doc;
    if (!yaml_parser_initialize(&parser)) {
        kube_set_err(errmsg, "out of memory");
        return NULL;
    }
    yaml_parser_set_input_string(&parser, (const unsigned char *)data, len);
    if (!yaml_parser_load(&parser, &doc)) {
        kube_set_err(errmsg, "line %zu column %zu: %s%s%s", parser.problem_mark.line + 1, parser.problem_mark.column + 1,
                     parser.problem ? parser.problem : "invalid YAML", parser.context ? " " : "",
                     parser.context ? parser.context : "");
        yaml_parser_delete(&parser);
        return NULL;
    }
    struct conv c = { &doc, 0, NULL };
    yaml_node_t *root = yaml_document_get_root_node(&doc);
    json_t *out = root ? conv_node(&c, root, 0) : json_object();
    if (!out)
        kube_set_err(errmsg, "%s", c.err ? c.err : "out of memory");
    free(c.err);
    yaml_document_delete(&doc);
    yaml_parser_delete(&parser);
    return out;
}
