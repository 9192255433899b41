/* hostfile.h - the MPI hostfile: parsing the three formats launchers use
 * (`host slots=N`, `host:N`, bare `host`, with FQDNs) into pod names, and printing
 * a worker list in the syntax of one MPI flavour. */
#ifndef MPI_AGENT_HOSTFILE_H
#define MPI_AGENT_HOSTFILE_H

#include <stddef.h>
#include "agent.h"

/* One hostfile entry. */
struct agent_host {
    char *host; /* as written (FQDN or short name) */
    char *pod;  /* pod name: the first DNS label of host (mpik8s_host_to_pod) */
    int slots;  /* slots, 0 when the line gave none */
};

/* An ordered list of hosts. */
struct agent_hostlist {
    struct agent_host *v;
    size_t n;
};

/* Parses hostfile text; origin names the file in errors ("/etc/mpi/hostfile line 3: ...").
 * Blank lines and # comments are skipped; duplicates are an error. 0 ok, -1 with *errmsg. */
int agent_hostfile_parse(const char *text, const char *origin, struct agent_hostlist *out, char **errmsg);
/* Reads and parses a hostfile from path. 0 ok, -1 with *errmsg. */
int agent_hostfile_load(const char *path, struct agent_hostlist *out, char **errmsg);
/* Appends host (copied) with slots; the pod name is derived. 0 ok, -1 bad host (with *errmsg). */
int agent_hostlist_add(struct agent_hostlist *l, const char *host, int slots, char **errmsg);
/* Removes entries whose pod name ends with "-launcher" (upstream's rule); returns how many. */
size_t agent_hostlist_drop_launcher(struct agent_hostlist *l);
/* Returns the index of the entry for pod, or -1. */
long agent_hostlist_find_pod(const struct agent_hostlist *l, const char *pod);
/* The slots host h offers: its own count, else the job's (job_slots, MPI_JOB_SLOTS / --slots),
 * else MPIK8S_DEFAULT_SLOTS (mpik8s_slots). */
int agent_host_slots(const struct agent_host *h, int job_slots);
/* Formats the list for implementation m: Open MPI `host slots=N`, MPICH/Intel `host:N`, N from
 * agent_host_slots. Newly allocated. */
char *agent_hostfile_format(const struct agent_hostlist *l, enum mpik8s_mpi m, int job_slots);
/* Writes text as a new hostfile $TMPDIR/mpi-agent-hostfile-XXXXXX (/tmp without TMPDIR),
 * created exclusively (a planted file or symlink is never used), mode 0644; sets *path.
 * 0 ok, -1 with *errmsg. */
int agent_hostfile_write(const char *text, char **path, char **errmsg);
/* Frees the entries (the list itself may be on the stack). */
void agent_hostlist_free(struct agent_hostlist *l);

#endif
