/* fileio.h - whole-file reads and whole writes (lib/fileio.c). */
#ifndef KUBE_FILEIO_H
#define KUBE_FILEIO_H

#include <stddef.h>

/* Reads a whole file (at most max_len bytes, NUL-terminated) into *out; 0 ok, -1 with *errmsg naming path. */
int kube_read_file(const char *path, size_t max_len, char **out, size_t *len, char **errmsg);
/* Writes all len bytes of buf to fd, waiting in poll() when fd is non-blocking; 0 ok, -1 errno set. */
int kube_write_all(int fd, const void *buf, size_t len);
/* Like kube_write_all, but never blocks in write(): it waits in poll() for fd to take more (at most
 * PIPE_BUF bytes a write) or for cancel_fd (> 0) to become readable, so a signal pipe ends a write
 * to a stalled reader at once. 0 ok, -1 hard error (errno set; EPIPE when fd's reader is gone),
 * -2 cancelled. */
int kube_write_all_cancel(int fd, int cancel_fd, const void *buf, size_t len);

#endif
