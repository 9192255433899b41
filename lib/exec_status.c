/* exec_status.c - decoding the metav1.Status an exec stream sends on channel 3
 * into an exit code, with client-go's rules (v4 errorDecoder): Success -> 0,
 * NonZeroExitCode with an ExitCode cause -> N (0..255), anything else -> 255. */
#include "kube/exec.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "kube/util.h"

/* Copies at most 200 bytes of s, replacing control characters, for one-line messages. */
static char *one_line(const char *s, size_t n)
{
    if (n > 200)
        n = 200;
    char *o = malloc(n + 1);
    if (!o)
        return NULL;
    for (size_t i = 0; i < n; i++)
        o[i] = (s[i] == '\n' || s[i] == '\r' || s[i] == '\t') ? ' ' : s[i];
    o[n] = 0;
    return o;
}

/* Parses a decimal 0..255 with nothing else; -1 otherwise. */
static int parse_code(const char *s)
{
    if (!s || !*s || strlen(s) > 3)
        return -1;
    int v = 0;
    for (const char *p = s; *p; p++) {
        if (!isdigit((unsigned char)*p))
            return -1;
        v = v * 10 + (*p - '0');
    }
    return v <= 255 ? v : -1;
}

static int exit_code_from_causes(json_t *st, char **message)
{
    json_t *causes = json_object_get(json_object_get(st, "details"), "causes");
    size_t i;
    json_t *c;
    if (json_is_array(causes)) {
        json_array_foreach(causes, i, c) {
            const char *reason = json_string_value(json_object_get(c, "reason"));
            if (!reason || strcmp(reason, "ExitCode") != 0)
                continue;
            const char *msg = json_string_value(json_object_get(c, "message"));
            int code = parse_code(msg);
            if (code < 0) {
                char *m = msg ? one_line(msg, strlen(msg)) : NULL;
                kube_set_err(message, "exec status: exit code cause is not a number 0-255: \"%.40s\"", m ? m : "(missing)");
                free(m);
                return 255;
            }
            if (code == 0) { /* contradictory: never turn a failure into success */
                kube_set_err(message, "exec status: NonZeroExitCode with exit code 0");
                return 255;
            }
            return code;
        }
    }
    kube_set_err(message, "exec status: NonZeroExitCode without an ExitCode cause");
    return 255;
}

int kube_exec_status_decode(const char *json, size_t len, char **message)
{
    json_error_t je;
    json_t *st = json_loadb(json, len, 0, &je);
    if (!st || !json_is_object(st)) {
        char *snip = one_line(json, len);
        kube_set_err(message, "exec status: not a JSON object: \"%s\"", snip ? snip : "");
        free(snip);
        json_decref(st);
        return 255;
    }
    const char *status = json_string_value(json_object_get(st, "status"));
    const char *reason = json_string_value(json_object_get(st, "reason"));
    const char *msg = json_string_value(json_object_get(st, "message"));
    int code;
    if (status && strcmp(status, "Success") == 0) {
        code = 0;
    } else if (status && strcmp(status, "Failure") == 0) {
        if (reason && strcmp(reason, "NonZeroExitCode") == 0) {
            code = exit_code_from_causes(st, message);
        } else {
            char *m = one_line(msg ? msg : "", msg ? strlen(msg) : 0);
            const char *text = m && *m ? m : "exec failed without a message";
            char *r = reason && *reason ? one_line(reason, strlen(reason)) : NULL;
            if (r)
                kube_set_err(message, "%s (%.40s)", text, r);
            else
                kube_set_err(message, "%s", text);
            free(r);
            free(m);
            code = 255;
        }
    } else {
        char *st_text = status ? one_line(status, strlen(status)) : NULL;
        kube_set_err(message, "exec status: unknown status \"%.40s\"", st_text ? st_text : "(missing)");
        free(st_text);
        code = 255;
    }
    json_decref(st);
    return code;
}
