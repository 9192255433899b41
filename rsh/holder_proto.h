/* holder_proto.h - what mpi-rsh, its thin client mpi-rsh-thin and the stream holder
 * mpi-rsh-holder agree on (docs/rsh.md "Stream holder"). The holder listens on a unix
 * SOCK_SEQPACKET socket whose path is in $MPI_RSH_HOLDER; a thin client sends ONE request
 * message carrying the stream's settings and, as SCM_RIGHTS, its stdin, stdout and stderr;
 * the holder runs the exec stream on those fds and answers ONE reply message. A client that
 * is stopped sends a cancel message; a client that goes away (its socket closes) cancels too.
 * Plain C and libc only: the thin client links nothing else. */
#ifndef RSH_HOLDER_PROTO_H
#define RSH_HOLDER_PROTO_H

#define RSH_HOLDER_ENV "MPI_RSH_HOLDER"     /* socket path; unset = no holder */
#define RSH_HOLDER_MAGIC "mpi-rsh-holder/1" /* first field of a request */
#define RSH_HOLDER_REQ_MAX (256 * 1024)     /* a larger request is not sent (mpi-rsh runs alone) */

/* Request: NUL-terminated fields, in this order (RSH_HOLDER_NFIELDS of them after the magic),
 * plus 3 fds (stdin, stdout, stderr). Empty namespace/container = the holder's defaults. */
enum rsh_holder_field {
    RSH_HF_NAMESPACE = 0,
    RSH_HF_POD,
    RSH_HF_CONTAINER,
    RSH_HF_COMMAND,
    RSH_HF_STDIN,     /* "1" forward stdin, "0" none */
    RSH_HF_PROTO,     /* "0" auto, "4", "5" */
    RSH_HF_PING_MS,   /* "0" = default */
    RSH_HF_ATTEMPTS,  /* "0" = default */
    RSH_HF_CONNECT_S, /* "0" = default */
    RSH_HF_TAG,       /* "1" tag the session (remote kill on cancel), "0" not */
    RSH_HOLDER_NFIELDS
};

/* Cancel (client -> holder): 'K' then the signal number as one byte; the reply then carries
 * 128 + that signal. Reply (holder -> client): 'X' then the exit code as one byte (0..255). */
#define RSH_HOLDER_CANCEL 'K'
#define RSH_HOLDER_EXIT 'X'

#endif
