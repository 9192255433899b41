/* holder.h - mpi-rsh-holder internals: the process (main.c: socket, the wrapped command,
 * signals, shutdown) and one stream per thread (stream.c). See docs/rsh.md "Stream holder". */
#ifndef RSH_HOLDER_H
#define RSH_HOLDER_H

#include <stdint.h>

#include "kube/config.h"

/* Everything the stream threads share. */
struct holder {
    const struct kube_config *cfg; /* loaded once, read-only */
    char *tls_dir;                 /* TLS session directory (NULL = memory only) */
    int reattach_s;                /* $MPI_RSH_REATTACH_S: bound on reattaching a cut stream (0 = never) */
    int daemon_exit_s;             /* $MPI_RSH_DAEMON_EXIT_S: COMMAND's time after a daemon failed (0 = never,
                                    * and under mpi-agent, whose stop it is then) */
    int wake_fd;                   /* eventfd the main thread polls: written when a daemon failed */
};

/* The first stream that ended with a non-zero code other than by its client's cancel (its MPI
 * daemon failed, or its pod went away): pod (a new string) and code, and when (kube_now_ms). */
struct holder_daemon_exit {
    char *pod;
    int code;
    int64_t at_ms;
};

/* Starts a detached thread serving the client connected on sock (takes sock). 0 ok, -1 (sock
 * closed). */
int holder_stream_start(struct holder *h, int sock);
/* Streams that have ended so far, and how many of them with a non-zero exit code. */
void holder_streams_counts(int *nserved, int *nfailed);
/* 1 and *e (free e->pod) once a stream has ended as struct holder_daemon_exit says, else 0. */
int holder_streams_daemon_exit(struct holder_daemon_exit *e);
/* Streams being served. */
int holder_streams_active(void);
/* Makes every stream being served end as cancelled by its client (the command is over):
 * each closes its exec stream after a remote kill. */
void holder_streams_cancel_all(void);
/* Waits until no stream is served or ms pass; 0 when none is left. */
int holder_streams_wait(int ms);

#endif
