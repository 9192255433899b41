/* config_check.h - (library-internal) the checks config.c and credplugin.c share (config_check.c). */
#ifndef KUBE_CONFIG_CHECK_H
#define KUBE_CONFIG_CHECK_H

#include <jansson.h>

/* Refuses (-1, *errmsg "TAG.KEY: unknown field") a key of the mapping in not in keys (NULL-ended). */
int Kube_config_known_keys(const json_t *in, const char *tag, const char *const *keys, char **errmsg);
/* Replaces control characters in *errmsg by spaces when rc is nonzero (messages quote file and
 * plugin contents); returns rc. */
int Kube_config_one_line(int rc, char **errmsg);

#endif
