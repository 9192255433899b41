/* deliver.c - atomic, idempotent delivery of the bundle into /opt/kube: files
 * are written to a unique temp name (created exclusively, so a planted symlink is
 * never followed) in the destination directory, given the source's
 * mode, fsync'ed and renamed over the target; subdirectories are filled before
 * the top-level entry points appear. */
#include "deliver.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "safefile.h"
#include "kube/log.h"
#include "kube/util.h"
#include "mpik8s/util.h"

char *agent_bundle_dir(char **errmsg)
{
    const char *env = getenv("MPI_AGENT_BUNDLE_DIR");
    char *dir = NULL;
    if (env && *env) {
        dir = strdup(env);
    } else {
        char *exe_dir = mpik8s_self_dir();
        if (!exe_dir) {
            kube_set_err(errmsg, "cannot locate myself (/proc/self/exe): %s", strerror(errno));
            return NULL;
        }
        dir = kube_strdup_printf("%s/../lib/mpi-k8s/bundle", exe_dir);
        free(exe_dir);
    }
    if (!dir)
        kube_set_err(errmsg, "out of memory");
    return dir;
}

/* Copies src to a temp file in dest's directory and renames it over dest. */
static int copy_file(const char *src, const char *dest, mode_t mode, char **errmsg)
{
    int in = open(src, O_RDONLY | O_CLOEXEC);
    if (in < 0)
        return kube_set_err(errmsg, "deliver: open %s: %s", src, strerror(errno));
    char *prefix = kube_strdup_printf("%s.tmp.", dest), *tmp = NULL;
    int out = -1;
    if (!prefix)
        kube_set_err(errmsg, "deliver: out of memory");
    else
        out = agent_create_unique(prefix, 0600, &tmp, errmsg);
    free(prefix);
    if (out < 0) {
        close(in);
        return -1;
    }
    int rc = 0;
    const char *what = "write";
    char buf[65536];
    while (rc == 0) {
        ssize_t r = read(in, buf, sizeof(buf));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            rc = r < 0 ? (what = "read", -1) : 0;
            break;
        }
        if (kube_write_all(out, buf, (size_t)r) != 0)
            rc = (what = "write", -1);
    }
    if (rc == 0 && fchmod(out, mode & 07777) != 0)
        rc = (what = "chmod", -1);
    if (rc == 0 && fsync(out) != 0)
        rc = (what = "fsync", -1);
    if (close(out) != 0 && rc == 0)
        rc = (what = "close", -1);
    if (rc == 0 && rename(tmp, dest) != 0)
        rc = (what = "rename", -1);
    if (rc < 0) {
        kube_set_err(errmsg, "deliver: %s %s: %s", what, tmp, strerror(errno));
        unlink(tmp);
    }
    close(in);
    free(tmp);
    return rc;
}

/* Replaces dest by a symlink with src's target (temp link + rename). */
static int copy_link(const char *src, const char *dest, char **errmsg)
{
    char target[PATH_MAX];
    ssize_t n = readlink(src, target, sizeof(target) - 1);
    if (n < 0)
        return kube_set_err(errmsg, "deliver: readlink %s: %s", src, strerror(errno));
    target[n] = '\0';
    char *tmp = kube_strdup_printf("%s.tmp.%ld", dest, (long)getpid());
    if (!tmp)
        return -1;
    unlink(tmp);
    int rc = symlink(target, tmp) == 0 && rename(tmp, dest) == 0 ? 0 : -1;
    if (rc < 0) {
        kube_set_err(errmsg, "deliver: symlink %s: %s", dest, strerror(errno));
        unlink(tmp);
    }
    free(tmp);
    return rc;
}

static int copy_tree(const char *src, const char *dest, int *count, char **errmsg);

/* Copies one entry; pass 0 handles directories, pass 1 files and links. */
static int copy_entry(const char *src, const char *dest, int pass, int *count, char **errmsg)
{
    struct stat st;
    if (lstat(src, &st) != 0)
        return kube_set_err(errmsg, "deliver: %s: %s", src, strerror(errno));
    if (S_ISDIR(st.st_mode))
        return pass == 0 ? copy_tree(src, dest, count, errmsg) : 0;
    if (pass == 0)
        return 0;
    if (S_ISLNK(st.st_mode))
        return copy_link(src, dest, errmsg);
    if (!S_ISREG(st.st_mode))
        return 0;
    (*count)++;
    return copy_file(src, dest, st.st_mode, errmsg);
}

static int copy_tree(const char *src, const char *dest, int *count, char **errmsg)
{
    if (mkdir(dest, 0755) != 0 && errno != EEXIST)
        return kube_set_err(errmsg, "deliver: mkdir %s: %s", dest, strerror(errno));
    int rc = 0;
    for (int pass = 0; pass < 2 && rc == 0; pass++) {
        DIR *d = opendir(src);
        if (!d)
            return kube_set_err(errmsg, "deliver: bundle %s: %s", src, strerror(errno));
        struct dirent *e;
        while (rc == 0 && (e = readdir(d)) != NULL) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                continue;
            char *s = kube_strdup_printf("%s/%s", src, e->d_name);
            char *t = kube_strdup_printf("%s/%s", dest, e->d_name);
            rc = s && t ? copy_entry(s, t, pass, count, errmsg) : -1;
            free(s);
            free(t);
        }
        closedir(d);
    }
    return rc;
}

int agent_deliver(const char *src, const char *dest, int *count, char **errmsg)
{
    *count = 0;
    struct stat st;
    if (stat(src, &st) != 0 || !S_ISDIR(st.st_mode))
        return kube_set_err(errmsg,
                            "deliver: bundle directory %s not found (install with make install, or "
                            "set MPI_AGENT_BUNDLE_DIR)",
                            src);
    int64_t t0 = kube_now_ms();
    if (copy_tree(src, dest, count, errmsg) < 0)
        return -1;
    KLOG_INFO("delivered %d file(s) from %s to %s in %lld ms", *count, src, dest, (long long)(kube_now_ms() - t0));
    return 0;
}
