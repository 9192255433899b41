/* safefile.h - creating the agent's own files without following a planted symlink or
 * reusing a file someone else made: unique names (mkostemp, O_EXCL), explicit modes, and
 * atomic replacement by temp file + rename. */
#ifndef MPI_AGENT_SAFEFILE_H
#define MPI_AGENT_SAFEFILE_H

#include <stddef.h>
#include <sys/types.h>

/* Creates a new file named <prefix>XXXXXX exclusively (never an existing file, never through
 * a symlink) with the given mode; returns its fd (O_CLOEXEC) and sets *path (newly
 * allocated), or -1 with *errmsg naming the prefix. */
int agent_create_unique(const char *prefix, mode_t mode, char **path, char **errmsg);
/* Writes text to a fresh file <prefix>XXXXXX (mode), fsync'ed; sets *path. 0 ok, -1 with *errmsg. */
int agent_write_unique(const char *prefix, const char *text, mode_t mode, char **path, char **errmsg);
/* Replaces path atomically with text (mode): a unique temp file beside it, renamed over it,
 * so a symlink at path is replaced, not followed. 0 ok, -1 with *errmsg naming path. */
int agent_replace_file(const char *path, const char *text, mode_t mode, char **errmsg);

#endif
