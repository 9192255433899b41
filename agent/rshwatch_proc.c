/* rshwatch_proc.c - the launch watch's system half (agent/rshwatch.h): finding an MPI launcher
 * among the supervised command's processes in /proc, and the private mark file mpi-rsh creates. */
#include "rshwatch.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kube/log.h"
#include "kube/util.h"

/* The process group and comm of pid from /proc/PID/stat ("pid (comm) state ppid pgrp ..."; the comm
 * may hold spaces and parentheses, so it ends at the last ')'). 0 ok, -1 gone or unreadable. */
static int stat_of(const char *pid, long *pgrp, char *comm, size_t comm_sz)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%s/stat", pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *open = strchr(buf, '('), *close = strrchr(buf, ')');
    if (!open || !close || close < open)
        return -1;
    size_t cl = (size_t)(close - open - 1);
    snprintf(comm, comm_sz, "%.*s", (int)(cl < comm_sz ? cl : comm_sz - 1), open + 1);
    char state;
    long ppid;
    return sscanf(close + 1, " %c %ld %ld", &state, &ppid, pgrp) == 3 ? 0 : -1;
}

/* The stack pid shows by its comm, else by its executable's name. */
static enum agent_stack stack_of_pid(const char *pid, const char *comm)
{
    enum agent_stack st = agent_stack_of_program(comm);
    char path[64], exe[PATH_MAX];
    snprintf(path, sizeof path, "/proc/%s/exe", pid);
    ssize_t n = readlink(path, exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = '\0';
        st = agent_stack_better(st, agent_stack_of_program(exe));
    }
    return st;
}

enum agent_stack agent_rshwatch_scan(pid_t pgid)
{
    DIR *d = opendir("/proc");
    if (!d)
        return AGENT_STACK_NONE;
    enum agent_stack best = AGENT_STACK_NONE;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] < '1' || e->d_name[0] > '9')
            continue;
        long pgrp;
        char comm[32];
        if (stat_of(e->d_name, &pgrp, comm, sizeof comm) == 0 && pgrp == (long)pgid)
            best = agent_stack_better(best, stack_of_pid(e->d_name, comm));
    }
    closedir(d);
    return best;
}

int agent_rshwatch_mark_new(char **dir, char **mark)
{
    const char *tmp = getenv("TMPDIR");
    *mark = NULL;
    *dir = kube_strdup_printf("%s/mpi-agent-rsh-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!*dir)
        return -1;
    if (!mkdtemp(*dir) || !(*mark = kube_strdup_printf("%s/called", *dir))) {
        int saved = errno;
        free(*dir);
        *dir = NULL;
        errno = saved;
        return -1;
    }
    return 0;
}

int agent_rshwatch_marked(const char *mark) { return mark && access(mark, F_OK) == 0; }

void agent_rshwatch_mark_free(char *dir, char *mark)
{
    if (mark && unlink(mark) != 0 && errno != ENOENT)
        KLOG_WARN("%s: %s", mark, strerror(errno));
    if (dir && rmdir(dir) != 0)
        KLOG_WARN("%s: %s", dir, strerror(errno));
    free(mark);
    free(dir);
}
