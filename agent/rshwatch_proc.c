/* rshwatch_proc.c - the launch watch's system half (agent/rshwatch.h): finding an MPI launcher
 * among the supervised command's processes in /proc, a child of one that is no launch agent (a rank
 * on the launcher), and the private mark file mpi-rsh creates. */
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

/* What /proc/PID/stat says of a process ("pid (comm) state ppid pgrp ..."). */
struct proc_stat {
    char state;
    long ppid, pgrp;
    char comm[32];
};

/* Reads pid's stat; the comm may hold spaces and parentheses, so it ends at the last ')'. 0 ok, -1
 * gone or unreadable. */
static int stat_of(const char *pid, struct proc_stat *ps)
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
    snprintf(ps->comm, sizeof ps->comm, "%.*s", (int)(cl < sizeof ps->comm ? cl : sizeof ps->comm - 1), open + 1);
    return sscanf(close + 1, " %c %ld %ld", &ps->state, &ps->ppid, &ps->pgrp) == 3 ? 0 : -1;
}

/* The stack pid's executable shows (NONE for a script: its interpreter). */
static enum agent_stack stack_of_exe(const char *pid)
{
    char path[64], exe[PATH_MAX];
    snprintf(path, sizeof path, "/proc/%s/exe", pid);
    ssize_t n = readlink(path, exe, sizeof exe - 1);
    if (n <= 0)
        return AGENT_STACK_NONE;
    exe[n] = '\0';
    return agent_stack_of_program(exe);
}

/* The stack pid shows by its comm, else by its executable's name. */
static enum agent_stack stack_of_pid(const char *pid, const char *comm)
{
    return agent_stack_better(agent_stack_of_program(comm), stack_of_exe(pid));
}

/* One process of the snapshot. */
struct proc_ent {
    long pid;
    struct proc_stat st;
    int mine; /* root or one of its descendants */
};

/* A snapshot of /proc with root's family marked (a wrapper such as timeout or the stream holder may
 * put the launcher in a process group of its own, and Hydra its children). Its count; *out a new
 * array (NULL when none). */
static size_t snapshot(pid_t root, struct proc_ent **out)
{
    struct proc_ent *v = NULL;
    size_t n = 0, cap = 0;
    DIR *d = opendir("/proc");
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        if (e->d_name[0] < '1' || e->d_name[0] > '9')
            continue;
        if (n == cap) {
            struct proc_ent *nv = realloc(v, (cap = cap ? 2 * cap : 256) * sizeof *v);
            if (!nv)
                break;
            v = nv;
        }
        if (stat_of(e->d_name, &v[n].st) == 0) {
            v[n].pid = strtol(e->d_name, NULL, 10);
            v[n].mine = v[n].pid == (long)root;
            n++;
        }
    }
    if (d)
        closedir(d);
    for (int changed = 1; changed;) { /* children after their parents, whatever the order read */
        changed = 0;
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; !v[i].mine && j < n; j++)
                if (v[j].mine && v[j].pid == v[i].st.ppid)
                    v[i].mine = changed = 1;
    }
    *out = v;
    return n;
}

/* The stack of snapshot entry e (NONE for a zombie). */
static enum agent_stack stack_of_ent(const struct proc_ent *e)
{
    char pid[24];
    snprintf(pid, sizeof pid, "%ld", e->pid);
    return e->st.state == 'Z' ? AGENT_STACK_NONE : stack_of_pid(pid, e->st.comm);
}

enum agent_stack agent_rshwatch_scan(pid_t root)
{
    struct proc_ent *v;
    size_t n = snapshot(root, &v);
    enum agent_stack best = AGENT_STACK_NONE;
    for (size_t i = 0; i < n; i++)
        if (v[i].mine)
            best = agent_stack_better(best, stack_of_ent(&v[i]));
    free(v);
    return best;
}

/* 1 when name is a launch agent (foreign: ssh and rsh are not). */
static int agent_name(const char *name, int foreign)
{
    return agent_rshwatch_agent_program(name) && !(foreign && agent_rshwatch_foreign_agent(name));
}

/* 1 when pid (comm) is a launch agent, by its comm or its executable (a script shows its name in
 * comm, its interpreter in exe; our bundle shows its loader beside rsh). */
static int is_agent(const char *pid, const char *comm, const char *rsh, int foreign)
{
    if (agent_name(comm, foreign))
        return 1;
    char path[64], exe[PATH_MAX];
    snprintf(path, sizeof path, "/proc/%s/exe", pid);
    ssize_t n = readlink(path, exe, sizeof exe - 1);
    if (n <= 0)
        return 0;
    exe[n] = '\0';
    return agent_name(exe, foreign) || agent_rshwatch_bundle_exe(rsh, exe);
}

pid_t agent_rshwatch_local_child(pid_t root, const char *rsh, int foreign, char *name, size_t sz, enum agent_stack *st)
{
    struct proc_ent *v;
    size_t n = snapshot(root, &v);
    pid_t found = 0;
    for (size_t i = 0; i < n && !found; i++) {
        char lp[24];
        snprintf(lp, sizeof lp, "%ld", v[i].pid);
        if (!v[i].mine || v[i].st.state == 'Z' || stack_of_exe(lp) == AGENT_STACK_NONE)
            continue; /* v[i]: a live MPI launcher's binary in root's family (a wrapper script's helpers
                         are no ranks: Intel MPI's mpirun is one) */
        for (size_t j = 0; j < n && !found; j++) {
            char pid[24];
            snprintf(pid, sizeof pid, "%ld", v[j].pid);
            if (v[j].st.ppid != v[i].pid || v[j].st.state == 'Z' || stack_of_ent(&v[j]) != AGENT_STACK_NONE ||
                is_agent(pid, v[j].st.comm, rsh, foreign))
                continue;
            found = (pid_t)v[j].pid;
            snprintf(name, sz, "%s", v[j].st.comm);
            *st = stack_of_ent(&v[i]);
        }
    }
    free(v);
    return found;
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
