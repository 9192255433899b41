/* ws_frame.c - the incremental RFC 6455 frame decoder for frames a server sends
 * to a client. Pure: bytes in, at most one event out per call; data payloads are
 * handed back zero-copy. Rejects reserved bits, unknown opcodes, masked frames,
 * non-minimal lengths, oversized/fragmented control frames, broken fragmentation,
 * bad close codes, invalid UTF-8 and messages over the configured limit. */
#include "kube/ws.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

enum { ST_HEADER = 0, ST_PAYLOAD, ST_FRAME_DONE, ST_ERROR };

void kube_ws_decoder_init(struct kube_ws_decoder *d, uint64_t max_message)
{
    memset(d, 0, sizeof(*d));
    d->state = ST_HEADER;
    d->hdr_need = 2;
    d->max_message = max_message;
}

static enum kube_ws_event_type fail(struct kube_ws_decoder *d, struct kube_ws_event *ev, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static enum kube_ws_event_type fail(struct kube_ws_decoder *d, struct kube_ws_event *ev, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->error, sizeof(d->error), fmt, ap);
    va_end(ap);
    d->state = ST_ERROR;
    d->error_code = code;
    ev->type = KUBE_WS_EV_ERROR;
    ev->close_code = code;
    return ev->type;
}

/* One step of UTF-8 validation. State: low byte = continuation bytes still needed,
 * next bytes = allowed range for the next continuation byte. 0 = between characters. */
static int utf8_step(uint32_t *st, uint8_t c)
{
    uint32_t need = *st & 0xff, lo = (*st >> 8) & 0xff, hi = (*st >> 16) & 0xff;
    if (need == 0) {
        if (c < 0x80)
            return 0;
        lo = 0x80;
        hi = 0xBF;
        if (c >= 0xC2 && c <= 0xDF)
            need = 1;
        else if (c == 0xE0) {
            need = 2;
            lo = 0xA0;
        } else if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF)
            need = 2;
        else if (c == 0xED) {
            need = 2;
            hi = 0x9F;
        } else if (c == 0xF0) {
            need = 3;
            lo = 0x90;
        } else if (c >= 0xF1 && c <= 0xF3)
            need = 3;
        else if (c == 0xF4) {
            need = 3;
            hi = 0x8F;
        } else
            return -1;
    } else {
        if (c < lo || c > hi)
            return -1;
        need--;
        lo = 0x80;
        hi = 0xBF;
    }
    *st = need ? (need | lo << 8 | hi << 16) : 0;
    return 0;
}

static int utf8_feed(uint32_t *st, const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (utf8_step(st, p[i]) < 0)
            return -1;
    return 0;
}

static int is_control(int op) { return op >= 0x8; }

/* Validates the first two header bytes and computes the full header size. */
static enum kube_ws_event_type check_start(struct kube_ws_decoder *d, struct kube_ws_event *ev)
{
    uint8_t b0 = d->hdr[0], b1 = d->hdr[1];
    int op = b0 & 0x0f, len7 = b1 & 0x7f;
    if (b0 & 0x70)
        return fail(d, ev, KUBE_WS_CLOSE_PROTOCOL, "frame has reserved bits 0x%02x set (no extension negotiated)",
                    b0 & 0x70);
    if (op != KUBE_WS_OP_CONT && op != KUBE_WS_OP_TEXT && op != KUBE_WS_OP_BINARY && op != KUBE_WS_OP_CLOSE &&
        op != KUBE_WS_OP_PING && op != KUBE_WS_OP_PONG)
        return fail(d, ev, KUBE_WS_CLOSE_PROTOCOL, "frame has unknown opcode 0x%x", op);
    if (b1 & 0x80)
        return fail(d, ev, KUBE_WS_CLOSE_PROTOCOL, "server frame is masked (servers must not mask)");
    if (is_control(op) && !(b0 & 0x80))
        return fail(d, ev, KUBE_WS_CLOSE_PROTOCOL, "control frame (opcode 0x%x) is fragmented", op);
    if (is_control(op) && len7 > KUBE_WS_MAX_CONTROL)
        return fail(d, ev, KUBE_WS_CLOSE_PROTOCOL, "control frame (opcode 0x%x) payload over 125 bytes", op);
    d->hdr_need = 2 + (len7 == 126 ? 2 : len7 == 127 ? 8 : 0);
    return KUBE_WS_EV_NONE;
}

/* The header is complete: decode the length and apply message-level rules. */
static enum kube_ws_event_type start_frame(struct kube_ws_decoder *d, struct kube_ws_event *ev)
{
    uint64_t len = d->hdr[1] & 0x7f;
    if (len == 126) {
        len = (uint64_t)d->hdr[2] << 8 | d->hdr[3];
        if (len < 126)
            return fail(d, ev, KUBE_WS_CLOSE_PROTOCOL, "frame length %llu not minimally encoded (16-bit form)",
                        (unsigned long long)len);
    } else if (len == 127) {
        len = 0;
        for (int i = 0; i < 8; i++)
            len = len << 8 | d->hdr[2 + i];
        if (len >> 63)
            return fail(d, ev, KUBE_WS_CLOSE_PROTOCOL, "frame length has its most significant bit set");
        if (len <= 0xffff)
            return fail(d, ev, KUBE_WS_CLOSE_PROTOCOL, "frame length %llu not minimally encoded (64-bit form)",
                        (unsigned long long)len);
    }
    d->fin = (d->hdr[0] & 0x80) != 0;
    d->opcode = d->hdr[0] & 0x0f;
    d->remaining = len;
    d->hdr_have = 0;
    d->hdr_need = 2;
    d->ctl_len = 0;
    if (d->opcode == KUBE_WS_OP_TEXT || d->opcode == KUBE_WS_OP_BINARY) {
        if (d->in_message)
            return fail(d, ev, KUBE_WS_CLOSE_PROTOCOL, "new data frame while a fragmented message is unfinished");
        d->in_message = 1;
        d->msg_opcode = d->opcode;
        d->msg_started = 0;
        d->msg_len = 0;
        d->utf8_state = 0;
    } else if (d->opcode == KUBE_WS_OP_CONT && !d->in_message) {
        return fail(d, ev, KUBE_WS_CLOSE_PROTOCOL, "continuation frame without a message to continue");
    }
    if (!is_control(d->opcode) && d->max_message && len > d->max_message - d->msg_len)
        return fail(d, ev, KUBE_WS_CLOSE_TOO_BIG, "message exceeds the %llu-byte limit", (unsigned long long)d->max_message);
    d->state = is_control(d->opcode) ? ST_PAYLOAD : (len ? ST_PAYLOAD : ST_FRAME_DONE);
    return KUBE_WS_EV_NONE;
}

/* A complete control frame is in d->ctl. */
static enum kube_ws_event_type control_done(struct kube_ws_decoder *d, struct kube_ws_event *ev)
{
    d->state = ST_HEADER;
    ev->data = d->ctl;
    ev->len = d->ctl_len;
    if (d->opcode == KUBE_WS_OP_PING)
        return ev->type = KUBE_WS_EV_PING;
    if (d->opcode == KUBE_WS_OP_PONG)
        return ev->type = KUBE_WS_EV_PONG;
    /* close */
    if (d->ctl_len == 1)
        return fail(d, ev, KUBE_WS_CLOSE_PROTOCOL, "close frame with a 1-byte payload");
    ev->close_code = KUBE_WS_CLOSE_NO_STATUS;
    if (d->ctl_len >= 2) {
        int code = d->ctl[0] << 8 | d->ctl[1];
        if (!kube_ws_close_code_valid(code))
            return fail(d, ev, KUBE_WS_CLOSE_PROTOCOL, "close frame with invalid code %d", code);
        uint32_t st = 0;
        if (utf8_feed(&st, d->ctl + 2, d->ctl_len - 2) < 0 || st != 0)
            return fail(d, ev, KUBE_WS_CLOSE_INVALID_DATA, "close frame reason is not valid UTF-8");
        ev->close_code = code;
        ev->data = d->ctl + 2;
        ev->len = d->ctl_len - 2;
    }
    d->closed = 1;
    return ev->type = KUBE_WS_EV_CLOSE;
}

/* The payload of a data frame has been delivered. */
static enum kube_ws_event_type frame_done(struct kube_ws_decoder *d, struct kube_ws_event *ev)
{
    if (!d->fin) {
        d->state = ST_HEADER;
        return KUBE_WS_EV_NONE;
    }
    ev->opcode = d->msg_opcode;
    if (!d->msg_started) { /* guarantee one DATA(first) per message, even when empty */
        d->msg_started = 1;
        ev->first = 1;
        ev->data = (const uint8_t *)"";
        return ev->type = KUBE_WS_EV_DATA;
    }
    if (d->msg_opcode == KUBE_WS_OP_TEXT && d->utf8_state != 0)
        return fail(d, ev, KUBE_WS_CLOSE_INVALID_DATA, "text message ends inside a UTF-8 sequence");
    d->in_message = 0;
    d->state = ST_HEADER;
    return ev->type = KUBE_WS_EV_MESSAGE_END;
}

enum kube_ws_event_type kube_ws_decode(struct kube_ws_decoder *d, const uint8_t *in, size_t len, size_t *consumed,
                                       struct kube_ws_event *ev)
{
    size_t pos = 0;
    enum kube_ws_event_type t;
    memset(ev, 0, sizeof(*ev));
    *consumed = 0;
    for (;;) {
        if (d->state == ST_ERROR) {
            ev->type = KUBE_WS_EV_ERROR;
            ev->close_code = d->error_code;
            return ev->type;
        }
        if (d->state == ST_FRAME_DONE) {
            t = frame_done(d, ev);
            if (t != KUBE_WS_EV_NONE) {
                *consumed = pos;
                return t;
            }
            continue;
        }
        if (pos == len) {
            *consumed = pos;
            return ev->type = KUBE_WS_EV_NONE;
        }
        if (d->state == ST_HEADER) {
            if (d->closed) {
                *consumed = pos;
                return fail(d, ev, KUBE_WS_CLOSE_PROTOCOL, "data after the close frame");
            }
            size_t take = d->hdr_need - d->hdr_have;
            if (take > len - pos)
                take = len - pos;
            memcpy(d->hdr + d->hdr_have, in + pos, take);
            d->hdr_have += take;
            pos += take;
            if (d->hdr_have < d->hdr_need)
                continue;
            if (d->hdr_need == 2 && (t = check_start(d, ev)) != KUBE_WS_EV_NONE) {
                *consumed = pos;
                return t;
            }
            if (d->hdr_have < d->hdr_need)
                continue;
            if ((t = start_frame(d, ev)) != KUBE_WS_EV_NONE) {
                *consumed = pos;
                return t;
            }
            if (is_control(d->opcode) && d->remaining == 0) {
                *consumed = pos;
                return control_done(d, ev);
            }
            continue;
        }
        /* ST_PAYLOAD */
        size_t n = len - pos;
        if ((uint64_t)n > d->remaining)
            n = (size_t)d->remaining;
        if (is_control(d->opcode)) {
            memcpy(d->ctl + d->ctl_len, in + pos, n);
            d->ctl_len += n;
            d->remaining -= n;
            pos += n;
            if (d->remaining == 0) {
                *consumed = pos;
                return control_done(d, ev);
            }
            continue;
        }
        if (d->msg_opcode == KUBE_WS_OP_TEXT && utf8_feed(&d->utf8_state, in + pos, n) < 0) {
            *consumed = pos;
            return fail(d, ev, KUBE_WS_CLOSE_INVALID_DATA, "text message is not valid UTF-8");
        }
        ev->type = KUBE_WS_EV_DATA;
        ev->opcode = d->msg_opcode;
        ev->first = !d->msg_started;
        ev->data = in + pos;
        ev->len = n;
        d->msg_started = 1;
        d->msg_len += n;
        d->remaining -= n;
        pos += n;
        if (d->remaining == 0)
            d->state = ST_FRAME_DONE;
        *consumed = pos;
        return ev->type;
    }
}
