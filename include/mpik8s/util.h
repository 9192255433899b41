/* util.h - the small helpers the programs share beside the contract, each once, in its own file
 * of libmpik8s.a: shell quoting (mpik8s/sh_quote.c) and finding a sibling program
 * (mpik8s/sibling.c), and telling mpi-agent that mpirun called mpi-rsh (mpik8s/rsh_mark.c).
 * libc only: mpi-rsh-thin links them too. */
#ifndef MPIK8S_UTIL_H
#define MPIK8S_UTIL_H

/* s in single quotes for sh, each ' written '\'' ("it's" -> 'it'\''s'): one word to /bin/sh
 * whatever s holds. New string, NULL when out of memory. */
char *mpik8s_sh_quote(const char *s);

/* The directory of this program's executable, read from /proc/self/exe (the one place that reads
 * it): a new string ("" for the root directory), or NULL with errno set (no /proc, out of memory). */
char *mpik8s_self_dir(void);
/* dir/prog when that is an executable file: a new string; NULL when it is not, or dir is NULL. */
char *mpik8s_program_at(const char *dir, const char *prog);
/* prog beside this program's executable (mpik8s_self_dir), when executable: a new string, or NULL. */
char *mpik8s_sibling(const char *prog);

/* Appends "HOST\n" to the file $MPI_AGENT_RSH_MARK names (MPIK8S_RSH_ENV_MARK), if set, creating
 * it: mpi-rsh calls it first thing, so mpi-agent sees that mpirun launched through it, and into
 * which workers (its launch watch, and the ranks-up mark: agent/ranksup.h). One write(2) of at
 * most MPIK8S_RSH_MARK_LINE_MAX bytes with O_APPEND, so concurrent calls' lines do not mix; a
 * longer or NULL host is written as "?". 0 done or nothing to do, -1 with errno when the file
 * cannot be written (the caller goes on: the mark only informs). */
#define MPIK8S_RSH_MARK_LINE_MAX 512
int mpik8s_rsh_mark(const char *host);
/* Appends "!CODE HOST\n" (MPIK8S_RSH_MARK_EXIT) the same way: the MPI daemon mpirun launched on
 * HOST ended with CODE (1..255; anything else is written 255) on its own, not stopped by mpirun:
 * it exited non-zero, its pod went away, or the launch failed. mpi-agent's daemon-exit stop reads
 * it (agent/daemonexit.h). A host that starts with the mark character is written as "?". */
int mpik8s_rsh_mark_exit(const char *host, int code);

#endif
