/* safefile.c - the agent's file creation: unique exclusive names (mkostemp opens with
 * O_CREAT|O_EXCL, which never follows a symlink), modes set on the fd, fsync, rename. */
#include "safefile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kube/util.h"

int agent_create_unique(const char *prefix, mode_t mode, char **path, char **errmsg)
{
    *path = kube_strdup_printf("%sXXXXXX", prefix);
    if (!*path)
        return kube_set_err(errmsg, "out of memory");
    int fd = mkostemp(*path, O_CLOEXEC);
    if (fd < 0) {
        kube_set_err(errmsg, "cannot create %sXXXXXX: %s", prefix, strerror(errno));
        free(*path);
        *path = NULL;
        return -1;
    }
    if (fchmod(fd, mode & 07777) != 0) {
        kube_set_err(errmsg, "cannot chmod %s: %s", *path, strerror(errno));
        close(fd);
        unlink(*path);
        free(*path);
        *path = NULL;
        return -1;
    }
    return fd;
}

int agent_write_unique(const char *prefix, const char *text, mode_t mode, char **path, char **errmsg)
{
    int fd = agent_create_unique(prefix, mode, path, errmsg);
    if (fd < 0)
        return -1;
    const char *what = "write";
    int rc = kube_write_all(fd, text, strlen(text));
    if (rc == 0 && fsync(fd) != 0)
        rc = (what = "fsync", -1);
    int saved = errno;
    if (close(fd) != 0 && rc == 0) {
        rc = (what = "close", -1);
        saved = errno;
    }
    if (rc < 0) {
        kube_set_err(errmsg, "cannot %s %s: %s", what, *path, strerror(saved));
        unlink(*path);
        free(*path);
        *path = NULL;
    }
    return rc;
}

int agent_replace_file(const char *path, const char *text, mode_t mode, char **errmsg)
{
    char *prefix = kube_strdup_printf("%s.tmp.", path), *tmp = NULL;
    if (!prefix)
        return kube_set_err(errmsg, "out of memory");
    int rc = agent_write_unique(prefix, text, mode, &tmp, errmsg);
    free(prefix);
    if (rc == 0 && rename(tmp, path) != 0) {
        kube_set_err(errmsg, "cannot rename %s to %s: %s", tmp, path, strerror(errno));
        unlink(tmp);
        rc = -1;
    }
    free(tmp);
    return rc;
}
