/* termination.c - formatting and writing the termination message: a one-line
 * human summary and a `phases:` JSON line with RFC 3339 millisecond times, in the
 * format mpik8s/contract.h defines (the operator parses it with the same parser). */
#include "termination.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <jansson.h>

#include "mpik8s/contract.h"
#include "kube/util.h"

static const char *const phase_keys[AGENT_PHASE_COUNT] = {
    MPIK8S_PHASE_WORKERS_READY, MPIK8S_PHASE_WORKERS_REACHABLE, MPIK8S_PHASE_MPIRUN_STARTED,
    MPIK8S_PHASE_FIRST_OUTPUT,  MPIK8S_PHASE_FINISHED,
};

const char *agent_phase_key(enum agent_phase p) { return (unsigned)p < AGENT_PHASE_COUNT ? phase_keys[p] : "?"; }

void agent_phase_mark(struct agent_phases *ph, enum agent_phase p)
{
    if ((unsigned)p < AGENT_PHASE_COUNT && ph->at_ms[p] == 0)
        ph->at_ms[p] = kube_realtime_ms();
}

/* Formats the phases object as compact JSON with keys in timeline order. */
static char *phases_json(const struct agent_phases *ph)
{
    char *buf = NULL;
    size_t sz = 0;
    FILE *f = open_memstream(&buf, &sz);
    if (!f)
        return NULL;
    fputc('{', f);
    int first = 1;
    for (int i = 0; i < AGENT_PHASE_COUNT; i++) {
        if (ph->at_ms[i] == 0)
            continue;
        char t[40];
        kube_time_format_ms(ph->at_ms[i], t, sizeof(t));
        fprintf(f, "%s\"%s\":\"%s\"", first ? "" : ",", phase_keys[i], t);
        first = 0;
    }
    fputc('}', f);
    if (fclose(f) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

/* The failure object as one compact line that leaves at least 512 bytes for the rest. */
static char *failure_json(const json_t *failure)
{
    json_t *f = failure ? json_deep_copy(failure) : NULL;
    char *out = NULL;
    for (int pass = 0; f && pass < 3; pass++) {
        out = json_dumps(f, JSON_COMPACT);
        if (!out || strlen(out) < AGENT_TERMINATION_MAX - 512 - 64)
            break;
        free(out);
        out = NULL;
        json_object_del(f, pass == 0 ? MPIK8S_FAIL_LAST_LINES : pass == 1 ? MPIK8S_FAIL_MESSAGE : MPIK8S_FAIL_HOST);
    }
    json_decref(f);
    return out;
}

char *agent_termination_format(const char *summary, const struct agent_phases *ph)
{
    return agent_termination_format_failure(summary, ph, NULL);
}

char *agent_termination_format_failure(const char *summary, const struct agent_phases *ph, const json_t *failure)
{
    char *pj = phases_json(ph);
    if (!pj)
        return NULL;
    char *fj = failure_json(failure);
    size_t room = AGENT_TERMINATION_MAX - strlen(pj) - 16 - (fj ? strlen(fj) + sizeof MPIK8S_TERM_FAILURE + 1 : 0);
    size_t sl = strlen(summary);
    char *s = strndup(summary, sl < room ? sl : room);
    if (!s) {
        free(pj);
        free(fj);
        return NULL;
    }
    for (char *p = s; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    if (sl > room && room > 3)
        memcpy(s + room - 3, "...", 3);
    char *out = kube_strdup_printf("%s\n" MPIK8S_TERM_PHASES "%s\n%s%s%s", s, pj, fj ? MPIK8S_TERM_FAILURE : "",
                                   fj ? fj : "", fj ? "\n" : "");
    free(s);
    free(pj);
    free(fj);
    return out;
}

int agent_phases_parse(const char *line, struct agent_phases *ph)
{
    memset(ph, 0, sizeof(*ph));
    char *summary = NULL;
    json_t *o = NULL;
    int rc = mpik8s_termination_parse(line, &summary, &o);
    free(summary);
    if (rc < 0 || !o)
        return -1;
    for (int i = 0; i < AGENT_PHASE_COUNT && rc == 0; i++) {
        const json_t *v = json_object_get(o, phase_keys[i]);
        if (v && (!json_is_string(v) || kube_time_parse_ms(json_string_value(v), &ph->at_ms[i]) < 0))
            rc = -1;
    }
    json_decref(o);
    return rc;
}

int agent_termination_write(const char *path, const char *summary, const struct agent_phases *ph, const json_t *failure,
                            char **errmsg)
{
    if (!path)
        path = getenv("MPI_AGENT_TERMINATION_LOG");
    if (!path || !*path)
        path = "/dev/termination-log";
    char *msg = agent_termination_format_failure(summary, ph, failure);
    if (!msg)
        return kube_set_err(errmsg, "termination message: out of memory");
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        int e = errno;
        free(msg);
        if (e == ENOENT || e == EACCES || e == EROFS)
            return 0; /* not in a pod, or no termination log mounted */
        return kube_set_err(errmsg, "termination message %s: %s", path, strerror(e));
    }
    int rc = kube_write_all(fd, msg, strlen(msg));
    int e = errno;
    free(msg);
    if (close(fd) != 0 && rc == 0) {
        rc = -1;
        e = errno;
    }
    if (rc < 0)
        kube_set_err(errmsg, "termination message %s: %s", path, strerror(e));
    return rc;
}
