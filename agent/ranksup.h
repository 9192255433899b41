/* ranksup.h - when a run's ranks are up, and the file that says so to the launcher container's
 * readiness probe (`mpi-agent ready`, which the operator sets on the launcher it wraps). The
 * operator reads the launcher's Ready as "this run's ranks started": after a restart, Running
 * returns only then (docs/controller.md "Restarts"). The ranks are up once mpirun launched
 * through mpi-rsh into every worker of the hostfile (the lines mpi-rsh appends to the launch
 * watch's mark, mpik8s_rsh_mark) or once the command printed its first output, whichever is
 * first; when the launch watch is off (the user's own rsh agent), once the command runs; and when
 * no MPI launcher ran in the command's first AGENT_RANKSUP_NO_LAUNCHER_MS (a launcher that sleeps
 * while its user runs mpirun by hand with kubectl exec: nothing of ours to wait for). */
#ifndef MPI_AGENT_RANKSUP_H
#define MPI_AGENT_RANKSUP_H

#include <stddef.h>
#include <sys/types.h>

#include "hostfile.h"

/* The file in the bundle directory (--dest, /opt/kube): "PID STARTTIME\n" of the agent that
 * wrote it, so a file left by an earlier run of a restarted container reads as not up. */
#define AGENT_RANKSUP_FILE "ranks-up"
/* See above: a command that started no MPI launcher by then counts as up. */
#define AGENT_RANKSUP_NO_LAUNCHER_MS 10000
/* How often the supervisor looks at the launch mark until the ranks are up. */
#define AGENT_RANKSUP_LOOK_MS 200
/* Most bytes of the mark read (a line per launch, at most MPIK8S_RSH_MARK_LINE_MAX each). */
#define AGENT_RANKSUP_MARK_MAX (1024 * 1024)

/* How many of hosts' workers the mark's text (len bytes, a host per line) names, each counted
 * once: a line names worker i when its pod (mpik8s_host_to_pod) is hosts->v[i].pod. Pure. */
size_t agent_ranksup_launched(const char *text, size_t len, const struct agent_hostlist *hosts);
/* The same for the mark file at path (0 when it cannot be read). */
/* The mark file's first AGENT_RANKSUP_MARK_MAX bytes (not a symlink), their count in *len: a new
 * buffer, NULL when the file is missing or memory is short. The launch watch's readers share it. */
char *agent_ranksup_mark_read(const char *path, size_t *len);
size_t agent_ranksup_launched_file(const char *path, const struct agent_hostlist *hosts);

/* Removes dest's file (at the start of a run). 0 ok or absent, -1 with *errmsg. */
int agent_ranksup_clear(const char *dest, char **errmsg);
/* Writes dest's file for this process (a temporary file renamed over it). 0 ok, -1 with *errmsg. */
int agent_ranksup_write(const char *dest, char **errmsg);
/* 1 when dest's file names a live process started when the file says (this container's agent),
 * 0 when not (no file, a stale one, a bad one). */
int agent_ranksup_check(const char *dest);
/* The start time of process pid (field 22 of /proc/PID/stat, clock ticks since boot) in *out;
 * 0 ok, -1 when there is no such process or the file does not parse. */
int agent_proc_starttime(pid_t pid, unsigned long long *out);

#endif
