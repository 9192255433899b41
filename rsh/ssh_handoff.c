/* ssh_handoff.c - mpi-rsh hands the SSH transport to its sibling program mpi-rsh-ssh, so
 * that the exec transport's process (started once per worker per launch) never links,
 * relocates or pages in libssh2 and libcrypto: 1.1 MB instead of 5.4 MB, ~100 page faults
 * instead of ~200 (docs/rsh.md). The sibling is looked up where mpi-rsh itself came from:
 * the bundle directory the bundle launcher exports (there /proc/self/exe is the bundled
 * loader), else the directory of /proc/self/exe, else PATH. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpik8s/util.h"
#include "rsh.h"

#define SSH_PROGRAM "mpi-rsh-ssh"

/* rsh_exec_sibling, and whether mpi-rsh's own directory was known (*self_known). */
static int exec_sibling(const char *prog, char **argv, int *self_known)
{
    const char *bundle = getenv("MPI_K8S_BUNDLE_DIR");
    char *self = mpik8s_self_dir();
    char *path = bundle && *bundle ? mpik8s_program_at(bundle, prog) : NULL;
    if (!path)
        path = mpik8s_program_at(self, prog);
    *self_known = self != NULL;
    free(self);
    argv[0] = (char *)prog;
    if (path)
        execv(path, argv);
    else
        execvp(prog, argv);
    int e = errno;
    free(path);
    errno = e;
    return -1;
}

int rsh_exec_sibling(const char *prog, char **argv)
{
    int self_known;
    return exec_sibling(prog, argv, &self_known);
}

int rsh_exec_ssh_program(char **argv)
{
    const char *bundle = getenv("MPI_K8S_BUNDLE_DIR");
    int self_known;
    exec_sibling(SSH_PROGRAM, argv, &self_known);
    fprintf(stderr, "mpi-rsh: cannot start the SSH transport (%s, looked in %s%s%s and PATH): %s\n", SSH_PROGRAM,
            bundle && *bundle ? "$MPI_K8S_BUNDLE_DIR, " : "", self_known ? "mpi-rsh's directory" : "",
            self_known ? "" : "(no /proc/self/exe)", strerror(errno));
    return 255;
}
