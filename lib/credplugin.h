/* credplugin.h - (library-internal) kubeconfig exec credential plugins: parsing
 * users[].user.exec, running the plugin and caching its ExecCredential. */
#ifndef KUBE_CREDPLUGIN_H
#define KUBE_CREDPLUGIN_H

#include <jansson.h>

#include "kube/config.h"

/* Parses the exec mapping in (tag names it in messages). 0 with *out, or -1 with *errmsg
 * naming the field (apiVersion, command, args, env, interactiveMode, provideClusterInfo). */
int kube_exec_plugin_parse(const json_t *in, const char *tag, struct kube_exec_plugin **out, char **errmsg);
/* A copy of the plugin's current credential in *out, running the plugin when none is cached
 * or the cached one expires within 10 s. Thread-safe (one run at a time). 0, or -1 with a
 * one-line *errmsg: plugin name, exit status, last stderr line, installHint. */
int kube_exec_plugin_credential(struct kube_exec_plugin *p, const struct kube_config *cfg,
                                struct kube_credential *out, char **errmsg);
/* The server refused used (401): forgets it, so the next call runs the plugin again. */
int kube_exec_plugin_rejected(struct kube_exec_plugin *p, const struct kube_credential *used);
/* Frees p (NULL is fine). */
void kube_exec_plugin_free(struct kube_exec_plugin *p);

#endif
