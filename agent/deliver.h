/* deliver.h - copying the self-contained bundle (mpi-rsh, mpi-agent and their
 * libraries) into the shared volume the launcher's main container sees. */
#ifndef MPI_AGENT_DELIVER_H
#define MPI_AGENT_DELIVER_H

/* Returns the installed bundle directory, <dir of /proc/self/exe>/../lib/mpi-k8s/bundle
 * ($MPI_AGENT_BUNDLE_DIR overrides), newly allocated, or NULL with *errmsg. */
char *agent_bundle_dir(char **errmsg);
/* Copies every file, directory and symlink under src into dest (created if missing): each
 * file lands by temp file + rename with the source's mode, top-level entries last, so a
 * visible entry point means a complete bundle. Idempotent. *count gets the files copied.
 * 0 ok, -1 with *errmsg naming the path. */
int agent_deliver(const char *src, const char *dest, int *count, char **errmsg);

#endif
