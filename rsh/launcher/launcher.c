/* launcher.c - the entry points of the self-contained bundle (mpi-rsh, mpi-agent).
 * Built static, it runs in any Linux image (no libc needed there): it finds its
 * own directory D and execs D/lib/ld-linux-x86-64.so.2 --library-path D/lib
 * --argv0 ARGV0 D/libexec/NAME ARGS..., so the program runs on the glibc,
 * libcurl, OpenSSL, libssh2 and jansson shipped in D/lib whatever the image has.
 * NAME is the launcher's own file name. It exports MPI_K8S_BUNDLE_DIR=D. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

static void die(const char *what, const char *path)
{
    fprintf(stderr, "mpi-k8s bundle launcher: %s%s%s: %s\n", what, path ? " " : "", path ? path : "", strerror(errno));
    exit(255);
}

/* The path this launcher was started from: /proc/self/exe, else the execve path (no /proc in a chroot). */
static int self_path(char *buf, size_t len, const char *argv0)
{
    ssize_t n = readlink("/proc/self/exe", buf, len - 1);
    if (n > 0) {
        buf[n] = 0;
        return 0;
    }
    const char *p = (const char *)getauxval(AT_EXECFN);
    if (!p || !*p)
        p = argv0;
    if (!p || !strchr(p, '/')) {
        errno = ENOENT;
        return -1;
    }
    if (strlen(p) >= len) {
        errno = ENAMETOOLONG;
        return -1;
    }
    strcpy(buf, p);
    return 0;
}

int main(int argc, char **argv)
{
    char self[PATH_MAX], dir[PATH_MAX], ld[PATH_MAX], libdir[PATH_MAX], prog[PATH_MAX];
    /* the entry point's name: how we were invoked (symlinks keep theirs), else our file name */
    const char *how = (const char *)getauxval(AT_EXECFN);
    if (!how || !*how)
        how = argc > 0 ? argv[0] : "mpi-rsh";
    const char *slash = strrchr(how, '/');
    const char *name = slash ? slash + 1 : how;
    if (self_path(self, sizeof(self), argc > 0 ? argv[0] : NULL) < 0)
        die("cannot find my own path", NULL);
    char *cut = strrchr(self, '/');
    if (!cut) {
        errno = ENOENT;
        die("no directory in", self);
    }
    *cut = 0;
    snprintf(dir, sizeof(dir), "%s", self[0] ? self : "/");
    if (snprintf(ld, sizeof(ld), "%s/lib/ld-linux-x86-64.so.2", dir) >= (int)sizeof(ld) ||
        snprintf(libdir, sizeof(libdir), "%s/lib", dir) >= (int)sizeof(libdir) ||
        snprintf(prog, sizeof(prog), "%s/libexec/%s", dir, name) >= (int)sizeof(prog)) {
        errno = ENAMETOOLONG;
        die("path too long under", dir);
    }
    if (access(prog, X_OK) < 0)
        die("no bundled program", prog);
    if (setenv("MPI_K8S_BUNDLE_DIR", dir, 1) < 0)
        die("setenv", NULL);
    char **args = calloc((size_t)argc + 7, sizeof(char *));
    if (!args)
        die("out of memory", NULL);
    int k = 0;
    args[k++] = ld;
    args[k++] = "--library-path";
    args[k++] = libdir;
    args[k++] = "--argv0";
    args[k++] = argc > 0 ? argv[0] : (char *)name;
    args[k++] = prog;
    for (int i = 1; i < argc; i++)
        args[k++] = argv[i];
    args[k] = NULL;
    execv(ld, args);
    die("cannot exec the bundled loader", ld);
    return 255;
}
