/* yamljson.h - (library-internal) converting a YAML document into jansson
 * values: mappings -> objects, sequences -> arrays, scalars -> strings. */
#ifndef KUBE_YAMLJSON_H
#define KUBE_YAMLJSON_H

#include <stddef.h>
#include <jansson.h>

/* Parses the first YAML document in data. Returns a new value (an empty object for an empty
 * document) or NULL with *errmsg ("line L column C: problem"). Depth and size are bounded and
 * anchors/aliases are expanded at most a bounded number of times. */
json_t *Kube_yaml_to_json(const char *data, size_t len, char **errmsg);

#endif
