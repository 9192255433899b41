/* ranksup.c - a run's "ranks up" mark for the launcher's readiness probe (ranksup.h). */
#include "ranksup.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kube/fileio.h"
#include "kube/util.h"
#include "mpik8s/contract.h"

size_t agent_ranksup_launched(const char *text, size_t len, const struct agent_hostlist *hosts)
{
    if (!text || !hosts || hosts->n == 0)
        return 0;
    char *seen = calloc(hosts->n, 1);
    size_t count = 0;
    for (size_t at = 0; seen && at < len;) {
        const char *nl = memchr(text + at, '\n', len - at);
        size_t n = nl ? (size_t)(nl - (text + at)) : len - at;
        char *host = strndup(text + at, n), *pod = host ? mpik8s_host_to_pod(host, NULL) : NULL;
        for (size_t i = 0; pod && i < hosts->n; i++) {
            if (!seen[i] && hosts->v[i].pod && strcmp(hosts->v[i].pod, pod) == 0) {
                seen[i] = 1;
                count++;
            }
        }
        free(pod);
        free(host);
        at += n + 1;
    }
    free(seen);
    return count;
}

char *agent_ranksup_mark_read(const char *path, size_t *len)
{
    *len = 0;
    int fd = path ? open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW) : -1;
    if (fd < 0)
        return NULL;
    char *buf = malloc(AGENT_RANKSUP_MARK_MAX);
    ssize_t r = 0;
    while (buf && *len < AGENT_RANKSUP_MARK_MAX && (r = read(fd, buf + *len, AGENT_RANKSUP_MARK_MAX - *len)) > 0)
        *len += (size_t)r;
    close(fd);
    return buf;
}

size_t agent_ranksup_launched_file(const char *path, const struct agent_hostlist *hosts)
{
    size_t len;
    char *buf = agent_ranksup_mark_read(path, &len);
    size_t n = buf ? agent_ranksup_launched(buf, len, hosts) : 0;
    free(buf);
    return n;
}

static char *file_in(const char *dest, const char *name) { return kube_strdup_printf("%s/%s", dest, name); }

int agent_ranksup_clear(const char *dest, char **errmsg)
{
    char *path = file_in(dest, AGENT_RANKSUP_FILE);
    if (!path)
        return kube_set_err(errmsg, "out of memory");
    int rc = unlink(path) == 0 || errno == ENOENT ? 0 : kube_set_err(errmsg, "%s: %s", path, strerror(errno));
    free(path);
    return rc;
}

int agent_ranksup_write(const char *dest, char **errmsg)
{
    unsigned long long st;
    if (agent_proc_starttime(getpid(), &st) < 0)
        return kube_set_err(errmsg, "/proc/self/stat: cannot read this process's start time");
    char *path = file_in(dest, AGENT_RANKSUP_FILE), *tmp = file_in(dest, "." AGENT_RANKSUP_FILE ".tmp");
    char *line = kube_strdup_printf("%ld %llu\n", (long)getpid(), st);
    int rc = -1, fd = -1;
    if (!path || !tmp || !line) {
        kube_set_err(errmsg, "out of memory");
        goto out;
    }
    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0 || kube_write_all(fd, line, strlen(line)) < 0 || close(fd) != 0) {
        kube_set_err(errmsg, "%s: %s", tmp, strerror(errno));
        if (fd >= 0)
            (void)unlink(tmp);
        goto out;
    }
    if (rename(tmp, path) != 0) {
        kube_set_err(errmsg, "%s: %s", path, strerror(errno));
        (void)unlink(tmp);
        goto out;
    }
    rc = 0;
out:
    free(line);
    free(tmp);
    free(path);
    return rc;
}

int agent_proc_starttime(pid_t pid, unsigned long long *out)
{
    char path[64], buf[1024];
    snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    /* after "PID (comm) ": field 3 (state) onwards; comm may hold spaces and parentheses */
    char *p = strrchr(buf, ')');
    if (!p)
        return -1;
    p++;
    for (int field = 3; field <= 22; field++) {
        while (*p == ' ')
            p++;
        if (!*p)
            return -1;
        if (field == 22) {
            char *end;
            errno = 0;
            unsigned long long v = strtoull(p, &end, 10);
            if (errno || end == p)
                return -1;
            *out = v;
            return 0;
        }
        p = strchr(p, ' ');
        if (!p)
            return -1;
    }
    return -1;
}

int agent_ranksup_check(const char *dest)
{
    char *path = file_in(dest, AGENT_RANKSUP_FILE);
    FILE *f = path ? fopen(path, "re") : NULL;
    free(path);
    if (!f)
        return 0;
    long pid = 0;
    unsigned long long st = 0, now;
    int got = fscanf(f, "%ld %llu", &pid, &st);
    fclose(f);
    return got == 2 && pid > 0 && agent_proc_starttime((pid_t)pid, &now) == 0 && now == st;
}
