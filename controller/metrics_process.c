/* metrics_process.c - process_* metrics from /proc/self (see metrics_process.h). */
#include "metrics_process.h"
#include "kube/fileio.h"
#include "kube/str.h"

#include <dirent.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

int metrics_process_parse(const char *stat, long ticks, long page_size, double boot_time, struct process_stats *out)
{
    const char *p = stat ? strrchr(stat, ')') : NULL; /* the command name ends at the last ')' */
    if (!p || ticks <= 0 || page_size <= 0)
        return -1;
    p += strspn(p + 1, " ") + 1;
    p += strcspn(p, " "); /* field 3, the state letter */
    /* fields 4 on: utime 14, stime 15, starttime 22, vsize 23, rss 24 */
    double f[25] = { 0 };
    for (int i = 4; i <= 24; i++) {
        char *end;
        f[i] = strtod(p, &end);
        if (end == p || (*end != ' ' && *end != '\n' && *end != '\0'))
            return -1;
        p = end;
    }
    out->cpu_seconds = (f[14] + f[15]) / (double)ticks;
    out->start_time = boot_time + f[22] / (double)ticks;
    out->virtual_bytes = f[23];
    out->resident_bytes = f[24] * (double)page_size;
    return 0;
}

/* /proc/stat's btime (epoch seconds the system booted); -1 when absent. */
static double boot_time(void)
{
    char *s = NULL, *e = NULL;
    size_t n;
    double bt = -1;
    if (kube_read_file("/proc/stat", 1 << 20, &s, &n, &e) == 0) {
        const char *b = strstr(s, "\nbtime ");
        if (b)
            bt = strtod(b + 7, NULL);
    }
    free(s);
    free(e);
    return bt;
}

/* Entries of /proc/self/fd (less the one opendir holds); -1 when unreadable. */
static double open_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return -1;
    double n = 0;
    const struct dirent *de;
    while ((de = readdir(d)) != NULL)
        if (de->d_name[0] != '.')
            n++;
    closedir(d);
    return n > 0 ? n - 1 : 0;
}

int metrics_process_read(struct process_stats *out, char **errmsg)
{
    char *s = NULL, *e = NULL;
    size_t n;
    if (kube_read_file("/proc/self/stat", 1 << 16, &s, &n, &e) < 0) {
        kube_set_err(errmsg, "%s", e ? e : "cannot read /proc/self/stat");
        free(e);
        return -1;
    }
    double bt = boot_time();
    int rc = bt < 0 ? -1 : metrics_process_parse(s, sysconf(_SC_CLK_TCK), sysconf(_SC_PAGESIZE), bt, out);
    free(s);
    if (rc < 0)
        return kube_set_err(errmsg, "cannot parse /proc/self/stat or /proc/stat's btime");
    struct rlimit rl;
    out->open_fds = open_fds();
    out->max_fds = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY ? (double)rl.rlim_cur : -1;
    return 0;
}

void metrics_process_put(FILE *f, const struct process_stats *s)
{
    static const struct {
        const char *name, *type, *help;
        size_t off;
    } fam[] = {
        { "process_cpu_seconds_total", "counter", "Total user and system CPU time spent in seconds.",
          offsetof(struct process_stats, cpu_seconds) },
        { "process_start_time_seconds", "gauge", "Start time of the process since unix epoch in seconds.",
          offsetof(struct process_stats, start_time) },
        { "process_resident_memory_bytes", "gauge", "Resident memory size in bytes.",
          offsetof(struct process_stats, resident_bytes) },
        { "process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.",
          offsetof(struct process_stats, virtual_bytes) },
        { "process_open_fds", "gauge", "Number of open file descriptors.", offsetof(struct process_stats, open_fds) },
        { "process_max_fds", "gauge", "Maximum number of open file descriptors.", offsetof(struct process_stats, max_fds) },
    };
    for (size_t i = 0; i < sizeof fam / sizeof fam[0]; i++) {
        double v = *(const double *)((const char *)s + fam[i].off);
        if (v < 0) /* unknown (no /proc/self/fd, no limit): left out, as the client libraries do */
            continue;
        fprintf(f, "# HELP %s %s\n# TYPE %s %s\n%s %.17g\n", fam[i].name, fam[i].help, fam[i].name, fam[i].type, fam[i].name,
                v);
    }
}
