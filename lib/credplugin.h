/* credplugin.h - (library-internal) kubeconfig exec credential plugins: parsing
 * users[].user.exec, running the plugin and caching its ExecCredential. */
#ifndef KUBE_CREDPLUGIN_H
#define KUBE_CREDPLUGIN_H

#include <jansson.h>
#include <stdint.h>

#include "kube/config.h"

/* Parses the exec mapping in (tag names it in messages). 0 with *out, or -1 with *errmsg
 * naming the field (apiVersion, command, args, env, interactiveMode, provideClusterInfo). */
int Kube_exec_plugin_parse(const json_t *in, const char *tag, struct kube_exec_plugin **out, char **errmsg);
/* A copy of the plugin's current credential in *out, running the plugin when none is cached
 * or the cached one expires within 10 s. Thread-safe (one run at a time). 0, or -1 with a
 * one-line *errmsg: plugin name, exit status, last stderr line, installHint. */
int Kube_exec_plugin_credential(struct kube_exec_plugin *p, const struct kube_config *cfg, struct kube_credential *out,
                                char **errmsg);
/* The server refused used (401): forgets it, so the next call runs the plugin again. */
int Kube_exec_plugin_rejected(struct kube_exec_plugin *p, const struct kube_credential *used);
/* Parses a plugin's stdout: an ExecCredential of api_version with a token and/or a client
 * certificate and key, and an optional RFC 3339 expirationTimestamp (*expires_ms, realtime
 * ms; 0 none). who names the plugin in messages. 0 with *cred filled, or -1 with a one-line
 * *errmsg. Fuzzed (tests/fuzz/fuzz_exec_credential.c). */
int Kube_exec_credential_parse(const char *out, size_t len, const char *api_version, const char *who,
                               struct kube_credential *cred, int64_t *expires_ms, char **errmsg);
/* Frees p (NULL is fine). */
void Kube_exec_plugin_free(struct kube_exec_plugin *p);

#endif
