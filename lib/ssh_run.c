/* ssh_run.c - kube_ssh_run: exec a command over an authenticated connection and
 * bridge it in one poll loop (stdin → channel with EOF, stdout/stderr → fds, exit
 * status → exit code), libssh2 in non-blocking mode.
 * libssh2 rule kept here: once a call returned EAGAIN with part of a packet still
 * unsent (block direction OUTBOUND), the very same call must be repeated before any
 * other that sends, or libssh2 fails with LIBSSH2_ERROR_BAD_USE; `stuck` tracks it. */
#include "ssh_int.h"
#include "kube/util.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#define IOBUF (256 * 1024)
#define MAX_COMMAND 34700

enum op { OP_NONE, OP_WRITE, OP_EOF, OP_READ };

struct bridge {
    struct kube_sshi_conn *c;
    LIBSSH2_CHANNEL *ch;
    int fd_in, fd_out, fd_err;
    char *inbuf, *outbuf;
    size_t in_off, in_len;
    int in_ready, in_eof, eof_sent, closed;
    enum op stuck;
    char **errmsg;
};

/* After an EAGAIN from libssh2: remember `op` if part of a packet is still unsent. */
static void note_eagain(struct bridge *b, enum op op)
{
    b->stuck = (libssh2_session_block_directions(b->c->s) & LIBSSH2_SESSION_BLOCK_OUTBOUND) ? op : OP_NONE;
}

/* Drains one remote stream to fd; >0 progress, 0 nothing now, -1 error. */
static int pump_remote(struct bridge *b, int stream, int fd)
{
    int progress = 0;
    for (;;) {
        ssize_t n = libssh2_channel_read_ex(b->ch, stream, b->outbuf, IOBUF);
        if (n == LIBSSH2_ERROR_EAGAIN) {
            note_eagain(b, OP_READ);
            return progress;
        }
        if (n < 0)
            return kube_set_err(b->errmsg, "session: connection to %s lost: %s", b->c->host, Kube_sshi_lasterr(b->c->s));
        b->stuck = OP_NONE;
        if (n == 0)
            return progress;
        if (fd >= 0 && kube_write_all(fd, b->outbuf, (size_t)n) < 0)
            return kube_set_err(b->errmsg, "session: writing remote %s from %s: %s", stream ? "stderr" : "stdout",
                                b->c->host, strerror(errno));
        progress = 1;
    }
}

/* Stops forwarding stdin (the remote closed it); what is left is discarded, as ssh does. */
static void drop_stdin(struct bridge *b)
{
    b->in_eof = b->eof_sent = 1;
    b->in_off = b->in_len = 0;
}

/* Moves stdin to the channel; >0 progress, 0 nothing now, -1 error. */
static int pump_stdin(struct bridge *b)
{
    if (b->in_off == b->in_len && !b->in_eof && b->in_ready) {
        ssize_t n = read(b->fd_in, b->inbuf, IOBUF);
        b->in_ready = 0;
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
            return 0;
        if (n <= 0)
            b->in_eof = 1; /* EOF, or a read error: ssh treats both as end of input */
        else {
            b->in_off = 0;
            b->in_len = (size_t)n;
        }
    }
    if (b->in_off == b->in_len)
        return 0;
    ssize_t w = libssh2_channel_write(b->ch, b->inbuf + b->in_off, b->in_len - b->in_off);
    if (w == LIBSSH2_ERROR_EAGAIN) {
        note_eagain(b, OP_WRITE);
        return 0;
    }
    b->stuck = OP_NONE;
    if (w == LIBSSH2_ERROR_CHANNEL_CLOSED || w == LIBSSH2_ERROR_CHANNEL_EOF_SENT) {
        drop_stdin(b);
        return 1;
    }
    if (w < 0)
        return kube_set_err(b->errmsg, "session: sending stdin to %s: %s", b->c->host, Kube_sshi_lasterr(b->c->s));
    b->in_off += (size_t)w;
    if (b->in_off == b->in_len)
        b->in_off = b->in_len = 0;
    return w > 0;
}

/* Sends the channel EOF once stdin is exhausted; >0 progress, 0 nothing now, -1 error. */
static int pump_eof(struct bridge *b)
{
    if (!b->in_eof || b->eof_sent || b->in_off != b->in_len)
        return 0;
    int rc = libssh2_channel_send_eof(b->ch);
    if (rc == LIBSSH2_ERROR_EAGAIN) {
        note_eagain(b, OP_EOF);
        return 0;
    }
    b->stuck = OP_NONE;
    if (rc < 0 && rc != LIBSSH2_ERROR_CHANNEL_CLOSED)
        return kube_set_err(b->errmsg, "session: sending EOF to %s: %s", b->c->host, Kube_sshi_lasterr(b->c->s));
    b->eof_sent = 1;
    return 1;
}

/* Once the remote sent EOF, waits (non-blocking) for its CLOSE, which follows the exit status. */
static int pump_close(struct bridge *b)
{
    if (!libssh2_channel_eof(b->ch))
        return 0;
    int rc = libssh2_channel_wait_closed(b->ch);
    if (rc == LIBSSH2_ERROR_EAGAIN)
        return 0;
    if (rc < 0 && rc != LIBSSH2_ERROR_INVAL)
        return kube_set_err(b->errmsg, "session: connection to %s lost before the exit status: %s", b->c->host,
                            Kube_sshi_lasterr(b->c->s));
    b->closed = 1;
    return 1;
}

/* One round of every pump, honouring the repeat-the-stuck-call rule. */
static int pump_all(struct bridge *b)
{
    int p = 0, r;
    if (b->stuck == OP_NONE || b->stuck == OP_READ) {
        if ((r = pump_remote(b, 0, b->fd_out)) < 0)
            return -1;
        p |= r;
    }
    if (b->stuck == OP_NONE || b->stuck == OP_READ) {
        if ((r = pump_remote(b, SSH_EXTENDED_DATA_STDERR, b->fd_err)) < 0)
            return -1;
        p |= r;
    }
    if (b->stuck == OP_NONE || b->stuck == OP_WRITE) {
        if ((r = pump_stdin(b)) < 0)
            return -1;
        p |= r;
    }
    if (b->stuck == OP_NONE || b->stuck == OP_EOF) {
        if ((r = pump_eof(b)) < 0)
            return -1;
        p |= r;
    }
    if (b->stuck == OP_NONE && (r = pump_close(b)) != 0) {
        if (r < 0)
            return -1;
        p = 1;
    }
    return p;
}

/* Waits for the socket, stdin or cancel_fd; sends keepalives. 1 = cancelled, -1 error. */
static int wait_io(struct bridge *b, int progress)
{
    struct pollfd p[3];
    int n = 0, timeout = progress ? 0 : 1000 * b->c->keepalive_s;
    int dirs = libssh2_session_block_directions(b->c->s);
    if (b->stuck == OP_NONE && !progress && !(dirs & LIBSSH2_SESSION_BLOCK_OUTBOUND)) {
        int next = 0; /* only with room to send: a half-sent keepalive would wedge libssh2 */
        if (libssh2_keepalive_send(b->c->s, &next) == 0 && next > 0)
            timeout = next * 1000;
        dirs = libssh2_session_block_directions(b->c->s);
    }
    p[n++] = (struct pollfd){
        .fd = b->c->fd,
        .events = (short)(b->stuck != OP_NONE ? POLLOUT : POLLIN | ((dirs & LIBSSH2_SESSION_BLOCK_OUTBOUND) ? POLLOUT : 0))
    };
    int want_in = b->fd_in >= 0 && !b->in_eof && !b->in_ready && b->in_off == b->in_len;
    if (want_in)
        p[n++] = (struct pollfd){ .fd = b->fd_in, .events = POLLIN };
    if (b->c->cancel_fd >= 0)
        p[n++] = (struct pollfd){ .fd = b->c->cancel_fd, .events = POLLIN };
    int r = poll(p, (nfds_t)n, timeout);
    if (r < 0 && errno != EINTR)
        return kube_set_err(b->errmsg, "session: poll: %s", strerror(errno));
    if (r <= 0)
        return 0;
    if (want_in && p[1].revents)
        b->in_ready = 1;
    if (b->c->cancel_fd >= 0 && p[n - 1].revents)
        return 1;
    return 0;
}

/* On cancel: with libssh2 >= 1.11, asks sshd to SIGTERM the remote process group (the
 * "signal" channel request); libssh2 1.10 cannot send it, so the remote command only sees
 * the channel close (EOF on stdin, EPIPE on its next write), exactly as with a killed ssh(1). */
static void cancel_remote(struct bridge *b)
{
    if (b->stuck != OP_NONE)
        return; /* a half-sent packet: no other packet may be sent, just close */
    libssh2_session_set_blocking(b->c->s, 1);
    libssh2_session_set_timeout(b->c->s, 1000);
#if LIBSSH2_VERSION_NUM >= 0x010b00
    (void)libssh2_channel_signal_ex(b->ch, "TERM", 4);
#endif
    (void)libssh2_channel_close(b->ch);
}

/* 1 when nothing came from the peer for max_ms: no byte read by libssh2 and none waiting
 * in the kernel (unread bytes, e.g. while a half-sent packet blocks reading, count as life). */
static int peer_silent(struct bridge *b, int64_t max_ms)
{
    int pending = 0;
    if (kube_now_ms() - b->c->last_rx_ms <= max_ms)
        return 0;
    if (ioctl(b->c->fd, FIONREAD, &pending) == 0 && pending > 0) {
        b->c->last_rx_ms = kube_now_ms();
        return 0;
    }
    return 1;
}

/* Runs the loop to the remote close; KUBE_SSH_OK, or an error/cancel result. */
static int bridge_loop(struct bridge *b)
{
    int progress = 1;
    libssh2_session_set_blocking(b->c->s, 0);
    if (b->fd_in < 0)
        b->in_eof = 1;
    int64_t silent_max = (int64_t)b->c->keepalive_s * 4000 + 1000;
    b->c->last_rx_ms = kube_now_ms();
    while (!b->closed) {
        int w = wait_io(b, progress);
        if (w < 0)
            return KUBE_SSH_ERR_SESSION;

        if (w > 0) {
            cancel_remote(b);
            kube_set_err(b->errmsg, "cancelled: closed the session on %s", b->c->host);
            return KUBE_SSH_ERR_CANCELLED;
        }
        progress = pump_all(b);
        if (progress < 0)
            return KUBE_SSH_ERR_SESSION;
        if (peer_silent(b, silent_max)) { /* ServerAliveCountMax=4 */
            kube_set_err(b->errmsg,
                         "session: %s sent nothing for %lld s (4 keepalives "
                         "unanswered); giving up",
                         b->c->host, (long long)silent_max / 1000);
            return KUBE_SSH_ERR_SESSION;
        }
    }
    return KUBE_SSH_OK;
}

/* Opens a session channel and starts the command (blocking, bounded by the timeout). */
static int start_command(struct kube_sshi_conn *c, const char *command, LIBSSH2_CHANNEL **ch, char **errmsg)
{
    *ch = libssh2_channel_open_session(c->s);
    if (!*ch) {
        kube_set_err(errmsg, "session: %s refused a session channel: %s", c->host, Kube_sshi_lasterr(c->s));
        return KUBE_SSH_ERR_SESSION;
    }
    if (libssh2_channel_exec(*ch, command) != 0) {
        kube_set_err(errmsg, "session: %s refused to run the command: %s", c->host, Kube_sshi_lasterr(c->s));
        return KUBE_SSH_ERR_SESSION;
    }
    return KUBE_SSH_OK;
}

/* Reads the exit status (or signal) of a closed channel into *exit_code. */
static int collect_status(struct bridge *b, int *exit_code)
{
    char *sig = NULL;
    size_t siglen = 0;
    if (libssh2_channel_get_exit_signal(b->ch, &sig, &siglen, NULL, NULL, NULL, NULL) == 0 && sig) {
        kube_set_err(b->errmsg,
                     "exit status: the command on %s was killed by signal %.*s "
                     "(exit code 255, as ssh reports it)",
                     b->c->host, (int)siglen, sig);
        libssh2_free(b->c->s, sig);
        *exit_code = 255;
        return KUBE_SSH_ERR_NOSTATUS;
    }
    *exit_code = libssh2_channel_get_exit_status(b->ch);
    return KUBE_SSH_OK;
}

int kube_ssh_run(const struct kube_ssh_opts *o, const char *host, const char *command, int fd_in, int fd_out, int fd_err,
                 int *exit_code, char **errmsg)
{
    struct kube_sshi_conn c;
    struct bridge b = { .c = &c, .fd_in = fd_in, .fd_out = fd_out, .fd_err = fd_err, .errmsg = errmsg };
    *exit_code = 255;
    if (!command) {
        kube_set_err(errmsg, "config: no command to run");
        return KUBE_SSH_ERR_CONFIG;
    }
    if (strlen(command) > MAX_COMMAND) { /* libssh2 1.10 sends packets < 35000-256 bytes */
        kube_set_err(errmsg,
                     "config: the command for %s is %zu bytes; libssh2 sends at most %d "
                     "in one exec request",
                     host ? host : "?", strlen(command), MAX_COMMAND);
        return KUBE_SSH_ERR_CONFIG;
    }
    struct kube_ssh_opts ro = *o;
    ro.no_auth = 0; /* a command always runs as an authenticated user */
    int rc = Kube_sshi_open(&ro, host, &c, errmsg);
    if (rc != KUBE_SSH_OK)
        return rc;
    libssh2_keepalive_config(c.s, 1, (unsigned)c.keepalive_s);
    b.inbuf = malloc(IOBUF);
    b.outbuf = malloc(IOBUF);
    if (!b.inbuf || !b.outbuf) {
        kube_set_err(errmsg, "session: out of memory");
        rc = KUBE_SSH_ERR_SESSION;
    } else {
        rc = start_command(&c, command, &b.ch, errmsg);
    }
    if (rc == KUBE_SSH_OK)
        rc = bridge_loop(&b);
    if (rc == KUBE_SSH_OK)
        rc = collect_status(&b, exit_code);
    if (rc != KUBE_SSH_OK && rc != KUBE_SSH_ERR_NOSTATUS) {
        /* a broken, frozen or cancelled peer: make libssh2's goodbyes fail at once instead of
         * timing out, which would leave the channel and session unfreed */
        shutdown(c.fd, SHUT_RDWR);
        c.handshaken = 0;
    }
    libssh2_session_set_blocking(c.s, 1);
    libssh2_session_set_timeout(c.s, 1000);
    if (b.ch)
        libssh2_channel_free(b.ch);
    Kube_sshi_close(&c, "done");
    free(b.inbuf);
    free(b.outbuf);
    return rc;
}
