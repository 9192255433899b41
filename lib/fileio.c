/* fileio.c - whole-file reads and whole writes to a descriptor (cancellable by a second one). */
#include "kube/fileio.h"
#include "kube/str.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int kube_read_file(const char *path, size_t max_len, char **out, size_t *len, char **errmsg)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return kube_set_err(errmsg, "%s: %s", path, strerror(errno));
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap + 1);
    if (!buf) {
        close(fd);
        return kube_set_err(errmsg, "%s: out of memory", path);
    }
    for (;;) {
        if (n == cap) {
            if (cap >= max_len) {
                kube_set_err(errmsg, "%s: larger than %zu bytes", path, max_len);
                goto fail;
            }
            size_t ncap = cap * 2 > max_len ? max_len : cap * 2;
            char *nb = realloc(buf, ncap + 1);
            if (!nb) {
                kube_set_err(errmsg, "%s: out of memory", path);
                goto fail;
            }
            buf = nb;
            cap = ncap;
        }
        ssize_t r = read(fd, buf + n, cap - n);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            kube_set_err(errmsg, "%s: %s", path, strerror(errno));
            goto fail;
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    close(fd);
    buf[n] = '\0';
    *out = buf;
    if (len)
        *len = n;
    return 0;
fail:
    close(fd);
    free(buf);
    return -1;
}

#define WRITE_CHUNK 4096 /* PIPE_BUF: a pipe that polls writable takes this much without blocking */

int kube_write_all_cancel(int fd, int cancel_fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len > 0) {
        struct pollfd pf[2] = { { .fd = fd, .events = POLLOUT }, { .fd = cancel_fd, .events = POLLIN } };
        int r = poll(pf, cancel_fd > 0 ? 2 : 1, 1000);
        if (r < 0 && errno != EINTR)
            return -1;
        if (cancel_fd > 0 && (pf[1].revents & POLLIN))
            return -2;
        if (r <= 0)
            continue;
        if (pf[0].revents & (POLLERR | POLLNVAL)) {
            errno = (pf[0].revents & POLLNVAL) ? EBADF : EPIPE;
            return -1;
        }
        ssize_t w = write(fd, p, len < WRITE_CHUNK ? len : WRITE_CHUNK);
        if (w < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (w <= 0) {
            if (w == 0)
                errno = EIO;
            return -1;
        }
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

int kube_write_all(int fd, const void *buf, size_t len) { return kube_write_all_cancel(fd, 0, buf, len); }
