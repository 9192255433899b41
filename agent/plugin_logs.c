/* plugin_logs.c - `kubectl mpijob logs JOB [-f] [--previous] [--rank R]`: the launcher's output
 * through the agent's logs code (agent_logs_write: live with -f, else the ConfigMap JOB-log kept
 * after cleanup), optionally only the lines mpirun tagged with rank R. */
#include "plugin.h"

#include <stdlib.h>
#include <string.h>

#include "commands.h"

int plugin_line_of_rank(const char *line, size_t len, long rank)
{
    size_t i = 1;
    long a = -1, b = -1;
    if (len < 3 || line[0] != '[')
        return 0;
    for (long *v = &a; i < len; i++) {
        if (line[i] >= '0' && line[i] <= '9') {
            *v = (*v < 0 ? 0 : *v * 10) + (line[i] - '0');
            if (*v > 100000000)
                return 0;
        } else if (line[i] == ',' && v == &a && a >= 0) {
            v = &b;
        } else {
            break;
        }
    }
    if (i >= len || line[i] != ']')
        return 0;
    if (b >= 0) /* Open MPI --tag-output: [job,rank]<stdout>: */
        return b == rank && i + 1 < len && line[i + 1] == '<';
    return a == rank && i + 1 < len && line[i + 1] == ' '; /* MPICH -prepend-rank: [rank] */
}

/* Buffers output into lines and prints rank's (all with rank < 0). */
struct rank_filter {
    long rank;
    char *buf;
    size_t len;
    int oom;
};

static void emit_line(const char *line, size_t len, long rank)
{
    if (rank < 0 || plugin_line_of_rank(line, len, rank))
        fwrite(line, 1, len, stdout);
}

static void filter_sink(const char *buf, size_t len, void *arg)
{
    struct rank_filter *f = arg;
    if (f->rank < 0) {
        fwrite(buf, 1, len, stdout);
        fflush(stdout);
        return;
    }
    char *nb = realloc(f->buf, f->len + len + 1);
    if (!nb) {
        f->oom = 1;
        return;
    }
    f->buf = nb;
    memcpy(f->buf + f->len, buf, len);
    f->len += len;
    size_t start = 0;
    for (size_t i = 0; i < f->len; i++)
        if (f->buf[i] == '\n') {
            emit_line(f->buf + start, i + 1 - start, f->rank);
            start = i + 1;
        }
    memmove(f->buf, f->buf + start, f->len - start);
    f->len -= start;
    fflush(stdout);
}

int plugin_logs(struct agent_session *s, const struct plugin_opts *po)
{
    json_t *job = plugin_one_job(s, po);
    if (!job)
        return 1;
    json_decref(job);
    free(s->o->job);
    s->o->job = strdup(po->args[0]);
    if (!s->o->job)
        return plugin_error("out of memory");
    struct rank_filter f = { .rank = po->rank };
    char *err = NULL;
    int rc = agent_logs_write(s, po->follow, po->previous, filter_sink, &f, &err) < 0 ? plugin_error("%s", err) : 0;
    if (f.len)
        emit_line(f.buf, f.len, f.rank);
    if (f.oom)
        rc = plugin_error("out of memory filtering rank %ld's lines", f.rank);
    free(f.buf);
    free(err);
    return fflush(stdout) == 0 ? rc : 1;
}
