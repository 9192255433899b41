/* holder.h - mpi-rsh-holder internals: the process (main.c: socket, the wrapped command,
 * signals, shutdown) and one stream per thread (stream.c). See docs/rsh.md "Stream holder". */
#ifndef RSH_HOLDER_H
#define RSH_HOLDER_H

#include "kube/config.h"

/* Everything the stream threads share. */
struct holder {
    const struct kube_config *cfg; /* loaded once, read-only */
    char *tls_dir;                 /* TLS session directory (NULL = memory only) */
    int reattach_s;                /* $MPI_RSH_REATTACH_S: bound on reattaching a cut stream (0 = never) */
};

/* Starts a detached thread serving the client connected on sock (takes sock). 0 ok, -1 (sock
 * closed). */
int holder_stream_start(struct holder *h, int sock);
/* Streams that have ended so far, and how many of them with a non-zero exit code. */
void holder_streams_counts(int *nserved, int *nfailed);
/* Streams being served. */
int holder_streams_active(void);
/* Makes every stream being served end as cancelled by its client (the command is over):
 * each closes its exec stream after a remote kill. */
void holder_streams_cancel_all(void);
/* Waits until no stream is served or ms pass; 0 when none is left. */
int holder_streams_wait(int ms);

#endif
