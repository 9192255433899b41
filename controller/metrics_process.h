/* metrics_process.h - the operator's own process metrics as Prometheus' client libraries
 * export them (process_cpu_seconds_total, process_resident_memory_bytes, ...), read from
 * /proc/self (controller/metrics_process.c). */
#ifndef CONTROLLER_METRICS_PROCESS_H
#define CONTROLLER_METRICS_PROCESS_H

#include <stdio.h>

struct process_stats {
    double cpu_seconds;    /* user + system CPU time */
    double start_time;     /* epoch seconds the process started */
    double resident_bytes; /* resident set size */
    double virtual_bytes;  /* virtual memory size */
    double open_fds;       /* entries of /proc/self/fd */
    double max_fds;        /* RLIMIT_NOFILE's soft limit */
};

/* Parses the text of /proc/<pid>/stat (fields after the command name, which may hold spaces
 * and parentheses) with the clock's ticks per second, the page size and the boot time (epoch
 * s, /proc/stat's btime) into the CPU, start time and memory fields of out. 0 ok, -1 when a
 * field is missing or not a number. */
int metrics_process_parse(const char *stat, long ticks, long page_size, double boot_time, struct process_stats *out);
/* Reads this process' stats from /proc/self and getrlimit. 0 ok, -1 with *errmsg. */
int metrics_process_read(struct process_stats *out, char **errmsg);
/* Writes the six process_* families (HELP, TYPE, one sample each). */
void metrics_process_put(FILE *f, const struct process_stats *s);

#endif
