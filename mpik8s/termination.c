/* termination.c - reading the launcher's termination message (include/mpik8s/contract.h): its
 * summary line, the phases line and the failure line, each a compact JSON object after its prefix. */
#include "mpik8s/contract.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

/* The JSON object on msg's line that starts with prefix (its trailing space excluded: JSON's),
 * a new reference; NULL when there is no such line. *bad = 1 when there is one but it holds no
 * JSON object. */
static json_t *line_object(const char *msg, const char *prefix, int *bad)
{
    const size_t plen = strlen(prefix) - 1;
    *bad = 0;
    for (const char *line = msg; line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        if (strncmp(line, prefix, plen) != 0)
            continue;
        json_error_t je;
        json_t *v = json_loadb(line + plen, strcspn(line + plen, "\n"), 0, &je);
        if (json_is_object(v))
            return v;
        json_decref(v);
        *bad = 1;
        return NULL;
    }
    return NULL;
}

int mpik8s_termination_parse(const char *msg, char **summary, json_t **phases)
{
    int bad = 0;
    *summary = NULL;
    *phases = NULL;
    if (!msg)
        return 0;
    *summary = strndup(msg, strcspn(msg, "\n"));
    *phases = line_object(msg, MPIK8S_TERM_PHASES, &bad);
    return bad ? -1 : 0;
}

json_t *mpik8s_termination_failure(const char *msg)
{
    int bad;
    return line_object(msg, MPIK8S_TERM_FAILURE, &bad);
}
