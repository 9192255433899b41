/* fuzz_agent_failure.c - libFuzzer target: the parsers of what a failed job
 * leaves behind (agent/failure_parse.c: mpirun's and Hydra's failure reports,
 * the memory cgroup files; agent/failure.c: the last lines kept for the Event)
 * never crash, leak or hang, and what they return stays in range: a rank and
 * a signal that fit, a host that is one word found in the input, an offset
 * inside it, last lines within their bounds and free of control bytes; and
 * the launcher log's UTF-8 cleaning (agent/joblog.c) always yields a string
 * jansson accepts (the ConfigMap patch); and the daemon-exit stop's reading of a launch mark
 * (agent/daemonexit.c) finds a pod name from the input and a code in 1..255. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "../../agent/daemonexit.h"
#include "../../agent/failure.h"
#include "../../agent/joblog.h"

static void check_failure(const char *t, size_t n, const struct agent_rank_failure *r)
{
    if (r->rank < -1 || r->signal < 0 || r->signal > 64 || r->exit_code < -1 || r->exit_code > 255 || r->at >= n + 1)
        abort();
    if (!r->form || (!r->mpi && strcmp(r->form, "daemon-exit") != 0))
        abort();
    if (!r->stopper != (strcmp(r->form, "daemon-exit") != 0))
        abort();
    /* Open MPI's notice alone names no rank, pod or code (the caller adds the command's) */
    int notice = strcmp(r->form, "ompi-notice") == 0;
    if (notice && (r->host || r->rank >= 0 || r->pid >= 0 || r->signal || r->exit_code >= 0))
        abort();
    if (!notice && !r->host && r->rank < 0 && r->pid < 0)
        abort();
    if (!notice && r->signal == 0 && r->exit_code < 0 && strcmp(r->form, "ompi-improper-exit") != 0 &&
        strcmp(r->form, "ompi-abort") != 0 && strcmp(r->form, "ompi-daemon-lost") != 0)
        abort();
    if (r->host && (!*r->host || strpbrk(r->host, " \t\n") || !memmem(t, n, r->host, strlen(r->host))))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *t = (const char *)data;
    struct agent_rank_failure r;
    int parsed = agent_failure_parse(t, size, &r);
    if (parsed)
        check_failure(t, size, &r);
    else if (r.host || r.rank != -1)
        abort();
    /* a report that stands on its own is one the parser found, of an MPI's form, not the notice */
    const char *rep = agent_failure_reported(t, size);
    if (rep && (!parsed || !r.mpi || strcmp(rep, r.form) != 0 || strcmp(rep, "ompi-notice") == 0))
        abort();
    if (!rep && parsed && r.mpi && strcmp(r.form, "ompi-notice") != 0)
        abort();
    agent_rank_failure_free(&r);
    char *pod = NULL;
    int code = 0, found = agent_daemonexit_first(t, size, &pod, &code);
    if ((found == 1) != (pod != NULL) ||
        (found == 1 && (code < 1 || code > 255 || !*pod || !memmem(t, size, pod, strlen(pod)))))
        abort();
    free(pod);
    struct agent_cgroup_mem m;
    int any = agent_cgroup_mem_parse(t, size, &m);
    if ((any && m.oom_kills < 0 && m.failcnt < 0) || m.limit_bytes < -1 || m.limit_bytes >= (1LL << 60))
        abort();
    char q[32];
    if (m.limit_bytes > 0 && strlen(agent_bytes_quantity(m.limit_bytes, q, sizeof q)) >= sizeof q)
        abort();
    char *l = agent_failure_last_lines(t, size);
    if (!l || strlen(l) > AGENT_FAILURE_LAST_BYTES + 1)
        abort();
    for (const char *p = l; *p; p++)
        if ((unsigned char)*p >= 0x7f || ((unsigned char)*p < 0x20 && *p != '\n' && *p != '\t'))
            abort();
    free(l);
    char *copy = malloc(size + 1);
    if (!copy)
        return 0;
    memcpy(copy, data, size);
    agent_utf8_sanitize(copy, size);
    json_t *js = json_stringn(copy, size);
    if (!js)
        abort();
    json_decref(js);
    free(copy);
    return 0;
}
