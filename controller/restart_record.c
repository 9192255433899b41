/* restart_record.c - the pure parts of the record of an MPIJob's restarts:
 * dedupe key, bounded newest-first list, cause and condition wording. */
#include "restart_record.h"
#include "kube/json.h"
#include "kube/util.h"
#include "mpik8s/contract.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

char *restart_record_key(const char *pod, const char *created, long long n)
{
    if (!pod)
        return NULL;
    if (n > 0)
        return kube_strdup_printf("%s@%s#%lld", pod, created ? created : "", n);
    return kube_strdup_printf("%s@%s", pod, created ? created : "");
}

int restart_record_seen(const json_t *status, const char *key)
{
    size_t i;
    json_t *e;
    json_array_foreach(kube_json_at(status, "restarts"), i, e) {
        const char *k = kube_json_at_str(e, RESTART_KEY);
        if (k && key && strcmp(k, key) == 0)
            return 1;
    }
    return 0;
}

long long restart_record_last(const json_t *status, const char *pod, const char *created)
{
    char *prefix = restart_record_key(pod, created, 0);
    long long last = 0;
    size_t i, n = prefix ? strlen(prefix) : 0;
    json_t *e;
    json_array_foreach(kube_json_at(status, "restarts"), i, e) {
        const char *k = kube_json_at_str(e, RESTART_KEY);
        long long v;
        if (prefix && k && strncmp(k, prefix, n) == 0 && k[n] == '#' && kube_parse_int(k + n + 1, 1, INT64_MAX, &v) == 0 &&
            v > last)
            last = v;
    }
    free(prefix);
    return last;
}

int restart_record_add(json_t *status, json_t *entry)
{
    if (!entry)
        return -1;
    json_t *list = kube_json_at(status, "restarts");
    if (!json_is_array(list)) {
        list = json_array();
        if (!list || json_object_set_new(status, "restarts", list) < 0) {
            json_decref(entry);
            return -1;
        }
    }
    if (json_array_insert_new(list, 0, entry) < 0)
        return -1;
    while (json_array_size(list) > RESTARTS_KEPT)
        json_array_remove(list, json_array_size(list) - 1);
    return 0;
}

char *restart_record_cause(const char *pod, const json_t *t)
{
    if (!t)
        return NULL;
    char *summary = NULL, *out;
    json_t *ph = NULL;
    /* -1: a phases line that is no object; the summary line still holds */
    (void)mpik8s_termination_parse(kube_json_at_str(t, "message"), &summary, &ph);
    json_decref(ph);
    if (summary && *summary)
        out = kube_strdup_printf("launcher pod %s: %s", pod ? pod : "?", summary);
    else
        out =
            kube_strdup_printf("launcher pod %s: exit code %lld (%s)", pod ? pod : "?",
                               (long long)kube_json_at_int(t, 0, "exitCode"), kube_json_at_str(t, "reason") ?: "no reason");
    free(summary);
    return out;
}

char *restart_record_message(long long run, long long runs, const char *cause)
{
    if (runs > 0)
        return kube_strdup_printf("is restarting (run %lld of %lld): %s", run, runs, cause ? cause : "the launcher ended");
    return kube_strdup_printf("is restarting (run %lld): %s", run, cause ? cause : "the launcher ended");
}
