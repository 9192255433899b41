/* exec_loop.c - the exec session over an upgraded WebSocket: one poll() loop
 * bridging stdin -> channel 0 (EOF -> [255,0] on v5), channels 1/2 -> fds or
 * memory, channel 3 Status -> exit code; answers pings, pings every interval,
 * completes the close handshake, and treats a received status as final even
 * when the TCP connection then ends abruptly. */
#include "exec_int.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kube/log.h"
#include "kube/util.h"
#include "kube/ws.h"

#define RBUF (256 * 1024)
#define STDIN_CHUNK (32 * 1024)
/* The outgoing queue never moves while a send is pending: OpenSSL requires a retried
 * SSL_write to pass the same buffer (SSL_R_BAD_WRITE_RETRY otherwise), so the queue is
 * allocated once and only compacted when no write is half done. */
#define OUTQ_CAP (1024 * 1024)
#define OUTQ_RESERVE 1024 /* room kept for pong/ping/close frames */
#define STATUS_MAX (64 * 1024)
#define MAX_MESSAGE (32u * 1024 * 1024) /* x/net/websocket's default receive limit */
#define DRAIN_ROUNDS 64

struct sink {
    int fd;
    char **buf;
    size_t *len;
    int *trunc;
    size_t cap, max;
    int dead;
    int cancel_fd;
};

struct sess {
    struct exec_conn *c;
    const struct kube_exec_opts *o;
    struct kube_exec_result *r;
    struct kube_ws_decoder dec;
    uint8_t *q;
    size_t q_len, q_off; /* outgoing frames, already masked (OUTQ_CAP bytes) */
    int send_pending;    /* the last send would have blocked */
    struct sink out, err;
    int stdin_open, ch, status_seen, sent_close, got_close, done, broken;
    char *status;
    size_t status_len;
    int64_t next_ping, linger_until, last_rx, idle_limit, deadline;
};

/* Queues one masked frame: optional channel byte, then data. */
static int queue_frame(struct sess *s, int opcode, int chan, const void *data, size_t len)
{
    size_t plen = len + (chan >= 0 ? 1 : 0);
    size_t need = KUBE_WS_MAX_HEADER + plen;
    if (s->q_len + need > OUTQ_CAP && !s->send_pending && s->q_off > 0) {
        memmove(s->q, s->q + s->q_off, s->q_len - s->q_off);
        s->q_len -= s->q_off;
        s->q_off = 0;
    }
    if (s->q_len + need > OUTQ_CAP)
        return kube_set_err(&s->r->message, "exec: send queue full (%zu bytes pending)", s->q_len - s->q_off);
    uint8_t key[4];
    if (kube_ws_random(key, 4) < 0)
        return kube_set_err(&s->r->message, "exec: no random bytes for a frame mask: %s", strerror(errno));
    s->q_len += kube_ws_frame_header(s->q + s->q_len, 1, opcode, plen, key);
    uint8_t *p = s->q + s->q_len;
    if (chan >= 0)
        p[0] = (uint8_t)chan;
    if (len)
        memcpy(p + (chan >= 0), data, len);
    kube_ws_mask(p, plen, key, 0);
    s->q_len += plen;
    return 0;
}

static void queue_close(struct sess *s, int code, const char *reason)
{
    if (s->sent_close)
        return;
    uint8_t pl[KUBE_WS_MAX_CONTROL];
    size_t n = code ? kube_ws_close_payload(pl, code, reason) : 0;
    if (queue_frame(s, KUBE_WS_OP_CLOSE, -1, pl, n) == 0)
        s->sent_close = 1;
}

/* Sends queued bytes until the socket would block. -1 when the connection broke. */
static int flush(struct sess *s)
{
    while (s->q_off < s->q_len) {
        ssize_t n = Kube_conn_send(s->c->k, s->q + s->q_off, s->q_len - s->q_off);
        s->send_pending = n == 0;
        if (n == 0)
            return 0;
        if (n < 0) {
            s->r->cut = !s->status_seen;
            if (!s->status_seen && !s->r->message)
                kube_set_err(&s->r->message, "exec: sending to the API server failed: %s", Kube_conn_error(s->c->k));
            return -1;
        }
        s->q_off += (size_t)n;
    }
    s->q_len = s->q_off = 0;
    return 0;
}

/* Delivers output to its fd or capture buffer. -1 when the fd's reader has gone (EPIPE). */
static int sink_put(struct sink *k, const uint8_t *data, size_t len)
{
    if (k->buf) { /* capture */
        size_t room = k->max - *k->len;
        if (len > room) {
            len = room;
            *k->trunc = 1;
        }
        if (*k->len + len + 1 > k->cap) {
            size_t ncap = k->cap ? k->cap : 1024;
            while (ncap < *k->len + len + 1)
                ncap *= 2;
            char *nb = realloc(*k->buf, ncap);
            if (!nb) {
                *k->trunc = 1;
                return 0;
            }
            *k->buf = nb;
            k->cap = ncap;
        }
        memcpy(*k->buf + *k->len, data, len);
        *k->len += len;
        (*k->buf)[*k->len] = 0;
        return 0;
    }
    if (k->dead || k->fd < 0 || len == 0)
        return 0;
    int wr = kube_write_all_cancel(k->fd, k->cancel_fd, data, len);
    if (wr == -2)
        return -2;
    if (wr < 0) {
        int e = errno;
        KLOG_DEBUG("exec: output fd %d failed (%s); discarding further output", k->fd, strerror(e));
        k->dead = 1;
        return e == EPIPE ? -1 : 0;
    }
    return 0;
}

static void fail_session(struct sess *s, int close_code, const char *fmt, const char *detail)
{
    if (s->status_seen)
        KLOG_DEBUG("exec: after the status: %s", detail); /* status stays final */
    else if (!s->r->message)
        kube_set_err(&s->r->message, fmt, detail);
    queue_close(s, close_code, "client error");
    s->broken = 1;
    s->done = 1;
}

/* Delivers a piece of the current message. */
static void on_data(struct sess *s, const struct kube_ws_event *ev)
{
    const uint8_t *p = ev->data;
    size_t n = ev->len;
    if (ev->opcode != KUBE_WS_OP_BINARY) {
        fail_session(s, KUBE_WS_CLOSE_PROTOCOL, "exec: server sent a %s message (expected binary channel frames)", "text");
        return;
    }
    if (ev->first) {
        s->ch = n ? p[0] : -1;
        if (n) {
            p++;
            n--;
        }
    }
    switch (s->ch) {
    case 1:
    case 2:
        /* the reader of our stdout/stderr is gone (`mpi-rsh POD yes | head`): end the stream,
         * as kubectl (killed by SIGPIPE) and ssh (channel closed) do, instead of draining an
         * endless command forever; the server stops the command */
        switch (sink_put(s->ch == 1 ? &s->out : &s->err, p, n)) {
        case -1:
            fail_session(s, KUBE_WS_CLOSE_NORMAL, "exec: %s closed by its reader (broken pipe); stream closed",
                         s->ch == 1 ? "stdout" : "stderr");
            break;
        case -2: /* a signal while the reader of our output stalled: stop now, as documented */
            s->r->outcome = KUBE_EXEC_CANCELLED;
            kube_set_err(&s->r->message, "exec: cancelled while writing %s", s->ch == 1 ? "stdout" : "stderr");
            queue_close(s, KUBE_WS_CLOSE_NORMAL, "cancelled");
            s->done = 1;
            break;
        }
        break;
    case 3:
        if (s->status_len + n > STATUS_MAX) {
            fail_session(s, KUBE_WS_CLOSE_TOO_BIG, "exec: status message over %s", "64 KiB");
            return;
        }
        if (n) {
            char *ns = realloc(s->status, s->status_len + n + 1);
            if (!ns) {
                fail_session(s, KUBE_WS_CLOSE_TOO_BIG, "exec: %s", "out of memory");
                return;
            }
            s->status = ns;
            memcpy(s->status + s->status_len, p, n);
            s->status_len += n;
        }
        break;
    default: break; /* readiness signal [1], resize echoes, unknown channels: ignored */
    }
}

static void on_message_end(struct sess *s)
{
    if (s->ch != 3 || s->status_seen)
        return;
    s->status_seen = 1;
    free(s->r->message);
    s->r->message = NULL;
    s->r->exit_code = kube_exec_status_decode(s->status ? s->status : "", s->status_len, &s->r->message);
    s->r->outcome = KUBE_EXEC_EXITED;
    KLOG_DEBUG("exec: status received, exit code %d", s->r->exit_code);
    /* the status is final: start the close handshake, wait a little for the server's close */
    queue_close(s, KUBE_WS_CLOSE_NORMAL, NULL);
    s->linger_until = kube_now_ms() + (s->o->linger_ms > 0 ? s->o->linger_ms : 2000);
}

static void on_close(struct sess *s, const struct kube_ws_event *ev)
{
    s->got_close = 1;
    queue_close(s, ev->close_code == KUBE_WS_CLOSE_NO_STATUS ? 0 : ev->close_code, NULL);
    s->done = 1;
    if (!s->status_seen) {
        s->r->cut = 1;
        char *d = kube_strdup_printf("%d %s%s%.*s", ev->close_code, kube_ws_close_code_name(ev->close_code),
                                     ev->len ? ": " : "", (int)ev->len, (const char *)ev->data);
        kube_set_err(&s->r->message, "exec: the server closed the stream (%s) without an exit status", d ? d : "");
        free(d);
    }
}

/* Feeds received bytes through the decoder. */
static void feed(struct sess *s, const uint8_t *buf, size_t len)
{
    for (;;) {
        struct kube_ws_event ev;
        size_t used = 0;
        enum kube_ws_event_type t = kube_ws_decode(&s->dec, buf, len, &used, &ev);
        buf += used;
        len -= used;
        switch (t) {
        case KUBE_WS_EV_NONE: return;
        case KUBE_WS_EV_DATA: on_data(s, &ev); break;
        case KUBE_WS_EV_MESSAGE_END: on_message_end(s); break;
        case KUBE_WS_EV_PING:
            if (!s->sent_close && queue_frame(s, KUBE_WS_OP_PONG, -1, ev.data, ev.len) < 0)
                s->done = s->broken = 1;
            break;
        case KUBE_WS_EV_PONG: break;
        case KUBE_WS_EV_CLOSE: on_close(s, &ev); return;
        case KUBE_WS_EV_ERROR:
            fail_session(s, ev.close_code, "exec: protocol error from the server: %s", s->dec.error);
            return;
        }
        if (s->done)
            return;
    }
}

/* Reads from the socket until it would block (or DRAIN_ROUNDS reads; returns 1 then: more may be buffered). */
static int drain(struct sess *s, uint8_t *rbuf)
{
    for (int i = 0; i < DRAIN_ROUNDS && !s->done; i++) {
        ssize_t n = Kube_conn_recv(s->c->k, rbuf, RBUF);
        if (n == -2)
            return 0;
        if (n <= 0) {
            s->done = 1;
            s->r->cut = !s->status_seen;
            if (!s->status_seen)
                kube_set_err(&s->r->message, "exec: connection to the API server %s without an exit status",
                             n == 0 ? "closed" : "failed");
            else
                KLOG_DEBUG("exec: connection ended after the status (%s)", n == 0 ? "EOF" : Kube_conn_error(s->c->k));
            return 0;
        }
        s->last_rx = kube_now_ms();
        feed(s, rbuf, (size_t)n);
    }
    return !s->done;
}

/* Reads one chunk of stdin and queues it (EOF -> [255,0] on v5). */
static void pump_stdin(struct sess *s, uint8_t *buf)
{
    ssize_t n = read(s->o->fd_in, buf, STDIN_CHUNK);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (n > 0) {
        if (queue_frame(s, KUBE_WS_OP_BINARY, 0, buf, (size_t)n) < 0)
            s->done = s->broken = 1;
        return;
    }
    if (n < 0)
        KLOG_DEBUG("exec: reading stdin: %s; treating as EOF", strerror(errno));
    s->stdin_open = 0;
    if (s->c->proto >= 5) {
        const uint8_t eof[1] = { 0 };
        if (queue_frame(s, KUBE_WS_OP_BINARY, 255, eof, 1) < 0)
            s->done = s->broken = 1;
    } else {
        KLOG_DEBUG("exec: stdin EOF cannot be sent on v4.channel.k8s.io");
    }
}

/* Milliseconds poll may sleep: until the next ping, the linger deadline or the idle limit. */
static int poll_timeout(struct sess *s, int64_t now)
{
    int64_t t = -1;
    if (s->next_ping)
        t = s->next_ping - now;
    if (s->linger_until && (t < 0 || s->linger_until - now < t))
        t = s->linger_until - now;
    if (s->deadline && (t < 0 || s->deadline - now < t))
        t = s->deadline - now;
    if (t < 0 && (s->next_ping || s->linger_until || s->deadline))
        t = 0;
    return t > 60000 ? 60000 : (int)t;
}

/* Timers: pings, idle connection detection, linger after the status. */
static void timers(struct sess *s, int64_t now)
{
    if (s->linger_until && now >= s->linger_until) {
        s->done = 1;
        return;
    }
    if (s->deadline && now >= s->deadline && !s->status_seen) {
        s->r->outcome = KUBE_EXEC_TIMEOUT;
        kube_set_err(&s->r->message, "exec: no exit status within %lld ms", (long long)s->o->timeout_ms);
        queue_close(s, KUBE_WS_CLOSE_NORMAL, "timeout");
        s->done = 1;
        return;
    }
    if (s->next_ping && now >= s->next_ping) {
        if (!s->sent_close && queue_frame(s, KUBE_WS_OP_PING, -1, NULL, 0) < 0)
            s->done = s->broken = 1;
        s->next_ping = now + s->o->ping_interval_ms;
        if (s->idle_limit && now - s->last_rx > s->idle_limit && !s->status_seen) {
            kube_set_err(&s->r->message, "exec: no data or pong from the API server for %lld ms; connection presumed dead",
                         (long long)(now - s->last_rx));
            s->r->cut = 1;
            s->done = s->broken = 1;
        }
    }
}

static void session_init(struct sess *s, struct exec_conn *c, const struct kube_exec_opts *o, struct kube_exec_result *r)
{
    memset(s, 0, sizeof(*s));
    s->c = c;
    s->o = o;
    s->r = r;
    s->ch = -1;
    kube_ws_decoder_init(&s->dec, MAX_MESSAGE);
    size_t max = o->capture_max ? o->capture_max : 64 * 1024;
    s->out = (struct sink){ .fd = o->fd_out, .max = max, .cancel_fd = o->cancel_fd };
    s->err = (struct sink){ .fd = o->fd_err, .max = max, .cancel_fd = o->cancel_fd };
    if (o->capture) {
        s->out.buf = &r->out;
        s->out.len = &r->out_len;
        s->out.trunc = &r->out_truncated;
        s->err.buf = &r->err;
        s->err.len = &r->err_len;
        s->err.trunc = &r->err_truncated;
    }
    s->stdin_open = o->fd_in >= 0;
    s->last_rx = kube_now_ms();
    if (o->timeout_ms > 0)
        s->deadline = s->last_rx + o->timeout_ms;
    int pi = o->ping_interval_ms;
    if (pi == 0)
        pi = 30000;
    if (pi > 0) {
        s->next_ping = s->last_rx + pi;
        s->idle_limit = 4LL * pi;
    }
    r->exit_code = 255;
    r->outcome = KUBE_EXEC_STREAM_ERROR;
    r->proto = c->proto;
}

/* One poll round; returns -1 on a poll failure. */
static int poll_round(struct sess *s, int more, uint8_t *ibuf)
{
    struct pollfd p[3];
    int n = 0, isock, iin = -1, icancel = -1;
    p[n] = (struct pollfd){ .fd = s->c->fd, .events = POLLIN | (s->q_len > s->q_off ? POLLOUT : 0) };
    isock = n++;
    size_t room = OUTQ_CAP - s->q_len + (s->send_pending ? 0 : s->q_off);
    if (s->stdin_open && !s->sent_close && room >= STDIN_CHUNK + KUBE_WS_MAX_HEADER + 1 + OUTQ_RESERVE) {
        p[n] = (struct pollfd){ .fd = s->o->fd_in, .events = POLLIN };
        iin = n++;
    }
    if (s->o->cancel_fd > 0) {
        p[n] = (struct pollfd){ .fd = s->o->cancel_fd, .events = POLLIN };
        icancel = n++;
    }
    int r = poll(p, (nfds_t)n, more ? 0 : poll_timeout(s, kube_now_ms()));
    if (r < 0)
        return errno == EINTR ? 0 : -1;
    (void)isock;
    if (icancel >= 0 && p[icancel].revents) {
        s->r->outcome = KUBE_EXEC_CANCELLED;
        kube_set_err(&s->r->message, "exec: cancelled");
        queue_close(s, KUBE_WS_CLOSE_NORMAL, "cancelled");
        s->done = 1;
        return 0;
    }
    if (iin >= 0 && p[iin].revents) {
        if (p[iin].revents & POLLNVAL)
            s->stdin_open = 0;
        else
            pump_stdin(s, ibuf);
    }
    return 0;
}

void Kube_exec_session(struct exec_conn *c, const struct kube_exec_opts *o, struct kube_exec_result *r)
{
    struct sess s;
    session_init(&s, c, o, r);
    uint8_t *rbuf = malloc(RBUF), *ibuf = malloc(STDIN_CHUNK);
    s.q = malloc(OUTQ_CAP);
    if (!rbuf || !ibuf || !s.q) {
        kube_set_err(&r->message, "exec: out of memory");
        goto out;
    }
    feed(&s, c->pre, c->pre_len);
    while (!s.done) {
        if (flush(&s) < 0) {
            s.done = s.broken = 1;
            break;
        }
        int more = drain(&s, rbuf);
        if (s.done)
            break;
        if (flush(&s) < 0) {
            s.done = s.broken = 1;
            break;
        }
        if (poll_round(&s, more, ibuf) < 0) {
            kube_set_err(&r->message, "exec: poll failed: %s", strerror(errno));
            break;
        }
        timers(&s, kube_now_ms());
    }
    if (!s.broken) { /* best effort: send our close frame (bounded) */
        Kube_exec_send_all(c, s.q + s.q_off, s.q_len - s.q_off, kube_now_ms() + 1000);
    }
    if (!s.status_seen && r->outcome != KUBE_EXEC_CANCELLED && r->outcome != KUBE_EXEC_TIMEOUT) {
        r->outcome = KUBE_EXEC_STREAM_ERROR;
        r->exit_code = 255;
        if (!r->message)
            kube_set_err(&r->message, "exec: the stream ended without an exit status");
    }
    if (r->outcome == KUBE_EXEC_CANCELLED || r->outcome == KUBE_EXEC_TIMEOUT)
        r->exit_code = 255;
    if (r->outcome != KUBE_EXEC_STREAM_ERROR)
        r->cut = 0;
out:
    free(rbuf);
    free(ibuf);
    free(s.q);
    free(s.status);
}
