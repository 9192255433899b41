/* exec.h - the Kubernetes pod exec client: one WebSocket upgrade of
 * GET /api/v1/namespaces/NS/pods/POD/exec (v5.channel.k8s.io, falling back to
 * v4.channel.k8s.io where a server refuses v5 — then stdin EOF cannot be sent)
 * over a connection of lib/tls_conn.c (socket + OpenSSL libssl, http:// proxies), then one poll loop bridging stdin to
 * channel 0, channels 1/2 to fds (or memory) and the channel-3 Status to an exit
 * code. Used by mpi-rsh and by mpi-agent's reachability check. See docs/exec-protocol.md. */
#ifndef KUBE_EXEC_H
#define KUBE_EXEC_H

#include <stddef.h>
#include <stdint.h>
#include "kube/config.h"

/* Which subprotocols to offer. */
enum kube_exec_proto {
    KUBE_EXEC_PROTO_AUTO = 0, /* offer "v5, v4"; retry with v4 alone if the offer is refused */
    KUBE_EXEC_PROTO_V5 = 5,   /* offer v5 only */
    KUBE_EXEC_PROTO_V4 = 4,   /* offer v4 only (no stdin EOF) */
};

struct kube_exec_opts {
    const char *namespace; /* required */
    const char *pod;       /* required */
    const char *container; /* NULL/"" = let the server pick (single-container pods only) */
    const char *command;   /* shell line, run remotely as /bin/sh -c COMMAND (required) */
    int fd_in;             /* stdin source; -1 = no stdin (stdin=false, remote sees EOF) */
    int fd_out, fd_err;    /* where channels 1/2 go (ignored when capture is set) */
    int capture;           /* 1 = collect stdout/stderr into the result instead */
    size_t capture_max;    /* bytes kept per stream when capturing (0 = 64 KiB) */
    enum kube_exec_proto proto;
    int attempts;                /* upgrade tries on refused/DNS/5xx/429 (0 = 8) */
    int64_t retry_budget_ms;     /* bound on the time spent retrying (0 = 15000) */
    int connect_timeout_ms;      /* TCP+TLS connect bound (0 = 10000) */
    int handshake_timeout_ms;    /* bound on the upgrade reply (0 = 30000) */
    int ping_interval_ms;        /* client pings (0 = 30000, -1 = never) */
    int linger_ms;               /* wait for the server's close after the status (0 = 2000) */
    int64_t timeout_ms;          /* bound on the whole session after the upgrade (0 = none) */
    int cancel_fd;               /* > 0: once readable, close the stream and return (cancelled) */
    const char *user_agent;      /* NULL = "mpi-k8s-exec/0.1" */
    const char *tls_session_dir; /* TLS sessions kept in files here (created 0700, used only when
                                  * this user's and closed to others) so the next process resumes
                                  * instead of a full handshake; NULL/"" = in this process only */
};

/* How the session ended: kube_exec_run's return value, the library's convention (docs/library.md,
 * "Errors"): 0 when the remote status arrived, else a negative code with r->message. */
enum kube_exec_outcome {
    KUBE_EXEC_EXITED = 0,        /* the server reported an exit status (exit_code is it) */
    KUBE_EXEC_REFUSED = -1,      /* connect/TLS/upgrade failed: the command never started */
    KUBE_EXEC_STREAM_ERROR = -2, /* the stream ended without a status (exit_code 255) */
    KUBE_EXEC_CANCELLED = -3,    /* cancel_fd fired */
    KUBE_EXEC_TIMEOUT = -4,      /* timeout_ms passed before the status (exit_code 255) */
};

struct kube_exec_result {
    enum kube_exec_outcome outcome;
    int exit_code;   /* 0..255; 255 unless the remote reported a status */
    char *message;   /* one line when exit_code comes from an error (or a Status message) */
    int http_code;   /* reply to the upgrade (101 on success, 0 = no reply) */
    int proto;       /* 5 or 4: subprotocol in use (0 = none) */
    char *out, *err; /* captured output (NUL-terminated), capture mode only */
    size_t out_len, err_len;
    int out_truncated, err_truncated;
    int cut; /* KUBE_EXEC_STREAM_ERROR because the connection was lost, not by our own choice: EOF or
              * an error on the socket, a close frame from the server, or no data and no pong for 4
              * ping intervals. The command may still be running (Kubernetes does not stop an exec'd
              * process when its stream ends: a kubelet restart cuts every stream through it). */
};

/* Fills o with the defaults (fds 0/1/2, proto AUTO, everything else 0 = default). */
void kube_exec_opts_default(struct kube_exec_opts *o);
/* Runs o->command in the pod. Returns 0 when the remote exit status arrived (r->exit_code is it,
 * 0..255; never 0 unless the status said Success), else a negative kube_exec_outcome with
 * r->message saying why (r->exit_code 255, what mpi-rsh exits with). r->outcome repeats the return
 * value. r must be released with kube_exec_result_free. */
int kube_exec_run(const struct kube_config *cfg, const struct kube_exec_opts *o, struct kube_exec_result *r);
/* Frees what r owns and zeroes it. */
void kube_exec_result_free(struct kube_exec_result *r);

/* Builds the request target "PATH?QUERY" (without the server prefix) for o: command=/bin/sh,
 * command=-c, command=COMMAND, container, stdin/stdout/stderr=true. New string or NULL. */
char *kube_exec_target(const struct kube_exec_opts *o);
/* Decodes a channel-3 Status document: Success -> 0; Failure/NonZeroExitCode with an ExitCode
 * cause -> that code (0..255); anything else -> 255 and *message (new string) saying why. */
int kube_exec_status_decode(const char *json, size_t len, char **message);

/* The parsed head of the server's reply to the upgrade request. */
struct kube_exec_reply {
    int code;            /* HTTP status */
    size_t head_len;     /* bytes up to and including the blank line */
    long content_length; /* -1 if absent */
    int chunked;         /* Transfer-Encoding: chunked */
    char *protocol;      /* Sec-WebSocket-Protocol (new string) or NULL */
    long retry_after_s;  /* -1 if absent */
};

/* Parses an HTTP/1.1 reply head in buf[0..len). Returns 1 when complete (r filled),
 * 0 when more bytes are needed, -1 when malformed (*errmsg). For a 101 it also checks
 * Upgrade/Connection, the accept key and that the protocol is one of `offered`
 * (comma-separated), failing with -1 and a clear *errmsg otherwise. */
int kube_exec_parse_reply(const char *buf, size_t len, const char *accept, const char *offered, struct kube_exec_reply *r,
                          char **errmsg);
/* Frees what r owns. */
void kube_exec_reply_free(struct kube_exec_reply *r);

/* The conventional tls_session_dir: $TMPDIR/mpi-k8s-tls-<euid> ($TMPDIR unset: /tmp; a
 * launcher pod's /tmp is its own). mpi-agent's reach check and every mpi-rsh use it unless
 * told otherwise, so only the first connection of a launch makes a full handshake. New
 * string, NULL when out of memory. */
char *kube_tls_session_dir_default(void);

#endif
