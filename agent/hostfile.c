/* hostfile.c - parsing and printing MPI hostfiles (Open MPI `host slots=N`,
 * MPICH/Intel `host:N`, bare `host`); host names map to pod names by their
 * first DNS label, as upstream's kubectl-delivery did (the contract's rule, mpik8s_host_to_pod). */
#include "hostfile.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/util.h"
#include "safefile.h"

#define HOSTFILE_MAX_BYTES (4 * 1024 * 1024)
#define SLOTS_MAX 1000000

long agent_hostlist_find_pod(const struct agent_hostlist *l, const char *pod)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->v[i].pod, pod) == 0)
            return (long)i;
    return -1;
}

int agent_hostlist_add(struct agent_hostlist *l, const char *host, int slots, char **errmsg)
{
    char *pod = mpik8s_host_to_pod(host, errmsg);
    if (!pod)
        return -1;
    /* capacity is the next power of two: grow when n is 0 or a power of two */
    struct agent_host *nv = l->v;
    if ((l->n & (l->n - 1)) == 0)
        nv = realloc(l->v, (l->n ? 2 * l->n : 1) * sizeof(*nv));
    char *h = strdup(host);
    if (!nv || !h) {
        free(pod);
        free(h);
        if (nv)
            l->v = nv;
        return kube_set_err(errmsg, "out of memory");
    }
    l->v = nv;
    l->v[l->n++] = (struct agent_host){ .host = h, .pod = pod, .slots = slots };
    return 0;
}

/* Parses a positive slot count; 0 ok, -1 bad. */
static int parse_slots(const char *s, size_t len, int *out)
{
    long long v;
    if (len > 9 || kube_parse_int_n(s, len, 1, SLOTS_MAX, &v) < 0)
        return -1;
    *out = (int)v;
    return 0;
}

/* Parses the words after the host on an Open MPI line: slots=N, max_slots=N. */
static int parse_options(char *rest, const char *origin, int lineno, int *slots, char **errmsg)
{
    char *save = NULL, q[128];
    for (char *w = strtok_r(rest, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
        int dummy;
        if (strncmp(w, "slots=", 6) == 0) {
            if (parse_slots(w + 6, strlen(w + 6), slots) == 0)
                continue;
        } else if (strncmp(w, "max_slots=", 10) == 0 || strncmp(w, "max-slots=", 10) == 0) {
            if (parse_slots(w + 10, strlen(w + 10), &dummy) == 0)
                continue;
        }
        return kube_set_err(errmsg, "%s line %d: unexpected \"%s\" (expected slots=N with N from 1 to %d)", origin, lineno,
                            kube_excerpt(w, q, sizeof q), SLOTS_MAX);
    }
    return 0;
}

/* The pods seen so far: an open-addressing set of indexes into the list, so that a
 * large hostfile is checked for duplicates in linear time. */
struct pod_set {
    size_t *slot; /* index + 1, 0 = empty */
    size_t cap;   /* a power of two, kept at least twice the entries */
};

static size_t pod_hash(const char *s)
{
    size_t h = 1469598103934665603ULL;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

/* Returns the index of pod in l via the set, or -1. */
static long pod_set_find(const struct pod_set *ps, const struct agent_hostlist *l, const char *pod)
{
    for (size_t i = pod_hash(pod) & (ps->cap - 1); ps->slot[i]; i = (i + 1) & (ps->cap - 1))
        if (strcmp(l->v[ps->slot[i] - 1].pod, pod) == 0)
            return (long)(ps->slot[i] - 1);
    return -1;
}

/* Makes room for entries 0..l->n (rehashing them); 0 ok, -1 out of memory. */
static int pod_set_fit(struct pod_set *ps, const struct agent_hostlist *l)
{
    if (ps->cap >= 2 * (l->n + 1))
        return 0;
    size_t cap = ps->cap ? ps->cap : 64;
    while (cap < 2 * (l->n + 1))
        cap *= 2;
    size_t *slot = calloc(cap, sizeof(*slot));
    if (!slot)
        return -1;
    free(ps->slot);
    ps->slot = slot;
    ps->cap = cap;
    for (size_t k = 0; k < l->n; k++) {
        size_t i = pod_hash(l->v[k].pod) & (cap - 1);
        while (slot[i])
            i = (i + 1) & (cap - 1);
        slot[i] = k + 1;
    }
    return 0;
}

/* Records the last entry of l in the set (room was made by pod_set_fit). */
static void pod_set_add_last(struct pod_set *ps, const struct agent_hostlist *l)
{
    size_t i = pod_hash(l->v[l->n - 1].pod) & (ps->cap - 1);
    while (ps->slot[i])
        i = (i + 1) & (ps->cap - 1);
    ps->slot[i] = l->n;
}

/* Rejects control characters (a '\r' or form feed inside a line); 0 ok, -1 with *errmsg. */
static int check_chars(const char *line, const char *origin, int lineno, char **errmsg)
{
    for (const char *c = line; *c; c++) {
        if (((unsigned char)*c < 0x20 && *c != '\t') || *c == 0x7f)
            return kube_set_err(errmsg,
                                "%s line %d column %d: unexpected control character 0x%02x "
                                "(expected `host`, `host:N` or `host slots=N`)",
                                origin, lineno, (int)(c - line) + 1, (unsigned char)*c);
    }
    return 0;
}

/* Parses one line (comment and whitespace already stripped, non-empty). */
static int parse_line(char *line, const char *origin, int lineno, struct agent_hostlist *out, struct pod_set *seen,
                      char **errmsg)
{
    char q[128];
    if (check_chars(line, origin, lineno, errmsg) < 0)
        return -1;
    size_t hl = strcspn(line, " \t");
    char *rest = line[hl] ? line + hl + 1 : line + hl;
    line[hl] = '\0';
    int slots = 0;
    char *colon = strchr(line, ':');
    if (colon) {
        if (parse_slots(colon + 1, strlen(colon + 1), &slots) < 0)
            return kube_set_err(errmsg, "%s line %d: \"%s\": expected host:N with N from 1 to %d", origin, lineno,
                                kube_excerpt(line, q, sizeof q), SLOTS_MAX);
        *colon = '\0';
    }
    if (parse_options(rest, origin, lineno, &slots, errmsg) < 0)
        return -1;
    char *perr = NULL;
    char *pod = mpik8s_host_to_pod(line, &perr);
    if (!pod) {
        kube_set_err(errmsg, "%s line %d: %s", origin, lineno, perr ? perr : "invalid host");
        free(perr);
        return -1;
    }
    long dup = pod_set_find(seen, out, pod);
    free(pod);
    if (dup >= 0)
        return kube_set_err(errmsg, "%s line %d: pod \"%s\" is listed twice", origin, lineno, out->v[dup].pod);
    if (pod_set_fit(seen, out) < 0)
        return kube_set_err(errmsg, "out of memory");
    if (agent_hostlist_add(out, line, slots, errmsg) < 0)
        return -1;
    pod_set_add_last(seen, out);
    return 0;
}

int agent_hostfile_parse(const char *text, const char *origin, struct agent_hostlist *out, char **errmsg)
{
    struct pod_set seen = { 0 };
    char *copy = strdup(text);
    if (!copy || pod_set_fit(&seen, out) < 0) {
        free(copy);
        return kube_set_err(errmsg, "out of memory");
    }
    int lineno = 0, rc = 0;
    for (char *p = copy, *line; rc == 0 && (line = strsep(&p, "\n")) != NULL;) {
        lineno++;
        line[strcspn(line, "#")] = '\0';
        while (*line == ' ' || *line == '\t')
            line++;
        size_t len = strlen(line);
        while (len > 0 && isspace((unsigned char)line[len - 1]))
            line[--len] = '\0';
        if (len == 0)
            continue;
        rc = parse_line(line, origin, lineno, out, &seen, errmsg);
    }
    free(seen.slot);
    free(copy);
    if (rc < 0)
        agent_hostlist_free(out);
    return rc;
}

int agent_hostfile_load(const char *path, struct agent_hostlist *out, char **errmsg)
{
    char *text = NULL, *rerr = NULL;
    size_t len = 0;
    if (kube_read_file(path, HOSTFILE_MAX_BYTES, &text, &len, &rerr) < 0) {
        kube_set_err(errmsg, "hostfile: %s", rerr ? rerr : path);
        free(rerr);
        return -1;
    }
    if (memchr(text, '\0', len)) {
        free(text);
        return kube_set_err(errmsg, "%s: expected a text hostfile (found a NUL byte)", path);
    }
    int rc = agent_hostfile_parse(text, path, out, errmsg);
    free(text);
    return rc;
}

size_t agent_hostlist_drop_launcher(struct agent_hostlist *l)
{
    size_t kept = 0, dropped = 0;
    for (size_t i = 0; i < l->n; i++) {
        size_t pl = strlen(l->v[i].pod);
        if (pl >= 9 && strcmp(l->v[i].pod + pl - 9, "-launcher") == 0) {
            free(l->v[i].host);
            free(l->v[i].pod);
            dropped++;
            continue;
        }
        l->v[kept++] = l->v[i];
    }
    l->n = kept;
    return dropped;
}

int agent_host_slots(const struct agent_host *h, int job_slots)
{
    return h->slots > 0 ? h->slots : (int)mpik8s_slots(job_slots);
}

char *agent_hostfile_format(const struct agent_hostlist *l, enum mpik8s_mpi m, int job_slots)
{
    char *buf = NULL;
    size_t sz = 0;
    FILE *f = open_memstream(&buf, &sz);
    if (!f)
        return NULL;
    for (size_t i = 0; i < l->n; i++)
        mpik8s_hostfile_line(f, mpik8s_hostfile_syntax_for(m), l->v[i].host, agent_host_slots(&l->v[i], job_slots));
    if (fclose(f) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

void agent_hostlist_free(struct agent_hostlist *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->v[i].host);
        free(l->v[i].pod);
    }
    free(l->v);
    l->v = NULL;
    l->n = 0;
}

int agent_hostfile_write(const char *text, char **path, char **errmsg)
{
    const char *tmpdir = getenv("TMPDIR");
    char *prefix = kube_strdup_printf("%s/mpi-agent-hostfile-", tmpdir && *tmpdir ? tmpdir : "/tmp");
    if (!prefix)
        return kube_set_err(errmsg, "out of memory");
    int rc = agent_write_unique(prefix, text, 0644, path, errmsg);
    free(prefix);
    return rc;
}
