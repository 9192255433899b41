/* ws.h - RFC 6455 WebSocket client framing: a pure, incremental frame decoder
 * (server -> client frames; every malformed case is an error with a one-line
 * reason), masked client frame encoding, close codes and the opening-handshake
 * key/accept computation. No I/O here: the exec client (exec.h) owns the socket. */
#ifndef KUBE_WS_H
#define KUBE_WS_H

#include <stddef.h>
#include <stdint.h>

enum kube_ws_opcode {
    KUBE_WS_OP_CONT = 0x0,
    KUBE_WS_OP_TEXT = 0x1,
    KUBE_WS_OP_BINARY = 0x2,
    KUBE_WS_OP_CLOSE = 0x8,
    KUBE_WS_OP_PING = 0x9,
    KUBE_WS_OP_PONG = 0xA,
};

/* Close status codes used here (RFC 6455 section 7.4.1). */
#define KUBE_WS_CLOSE_NORMAL 1000
#define KUBE_WS_CLOSE_GOING_AWAY 1001
#define KUBE_WS_CLOSE_PROTOCOL 1002
#define KUBE_WS_CLOSE_NO_STATUS 1005 /* never sent: "close frame had no code" */
#define KUBE_WS_CLOSE_ABNORMAL 1006  /* never sent: "no close frame at all" */
#define KUBE_WS_CLOSE_INVALID_DATA 1007
#define KUBE_WS_CLOSE_TOO_BIG 1009

#define KUBE_WS_MAX_CONTROL 125 /* largest control-frame payload */
#define KUBE_WS_MAX_HEADER 14   /* largest frame header a client sends */

/* What one kube_ws_decode() call produced. */
enum kube_ws_event_type {
    KUBE_WS_EV_NONE = 0,    /* all input consumed, need more bytes */
    KUBE_WS_EV_DATA,        /* a chunk of a data message (zero-copy, points into the input) */
    KUBE_WS_EV_MESSAGE_END, /* the current data message is complete */
    KUBE_WS_EV_PING,        /* a complete ping; payload in ev->data/len (decoder-owned) */
    KUBE_WS_EV_PONG,        /* a complete pong; payload as for ping */
    KUBE_WS_EV_CLOSE,       /* a close frame; ev->close_code (1005 if none), reason in data/len */
    KUBE_WS_EV_ERROR,       /* malformed input; ev->close_code says which code to send, d->error why */
};

struct kube_ws_event {
    enum kube_ws_event_type type;
    int opcode;          /* message opcode (TEXT/BINARY) for DATA and MESSAGE_END */
    int first;           /* DATA: 1 on the first chunk of a message (possibly empty) */
    const uint8_t *data; /* DATA: into the input buffer; control: decoder-owned */
    size_t len;
    int close_code; /* CLOSE / ERROR */
};

/* Incremental decoder state; initialize with kube_ws_decoder_init. */
struct kube_ws_decoder {
    int state;       /* private */
    uint8_t hdr[14]; /* private: header bytes gathered so far */
    size_t hdr_have, hdr_need;
    int fin, opcode;      /* current frame */
    uint64_t remaining;   /* payload bytes left in the current frame */
    int in_message;       /* a fragmented data message is open */
    int msg_opcode;       /* TEXT or BINARY of the open message */
    int msg_started;      /* DATA with first=1 already emitted for the open message */
    uint64_t msg_len;     /* bytes of the open message so far */
    uint64_t max_message; /* limit on one data message (0 = unlimited) */
    uint32_t utf8_state;  /* private: incremental UTF-8 validation of TEXT messages */
    uint8_t ctl[KUBE_WS_MAX_CONTROL];
    size_t ctl_len;
    int closed;      /* a close frame was decoded: further input is an error */
    int error_code;  /* close code to send after an ERROR */
    char error[160]; /* why the last ERROR happened */
};

/* Resets d; max_message bounds one data message in bytes (0 = no limit). */
void kube_ws_decoder_init(struct kube_ws_decoder *d, uint64_t max_message);
/* Decodes from in[0..len): consumes *consumed bytes and fills ev with at most one event.
 * Call again with the remaining bytes until it returns KUBE_WS_EV_NONE. After an ERROR the
 * decoder stays in error (every later call returns ERROR). Returns ev->type. */
enum kube_ws_event_type kube_ws_decode(struct kube_ws_decoder *d, const uint8_t *in, size_t len, size_t *consumed,
                                       struct kube_ws_event *ev);

/* Writes a client frame header (FIN set when fin, MASK bit set, 4-byte key) for a payload of
 * len bytes into out (>= KUBE_WS_MAX_HEADER bytes); returns the header length. */
size_t kube_ws_frame_header(uint8_t *out, int fin, int opcode, uint64_t len, const uint8_t key[4]);
/* XORs buf[0..len) with key, starting at key offset (offset % 4); for streaming payloads. */
void kube_ws_mask(uint8_t *buf, size_t len, const uint8_t key[4], size_t offset);
/* Fills key with 4 unpredictable bytes (getrandom); 0 ok, -1 on failure. */
int kube_ws_random(uint8_t *buf, size_t len);
/* Builds a close payload (2-byte code + reason truncated to fit 125 bytes) into out
 * (>= KUBE_WS_MAX_CONTROL bytes); returns its length. */
size_t kube_ws_close_payload(uint8_t *out, int code, const char *reason);
/* Returns 1 when code may appear in a close frame on the wire (RFC 6455 7.4). */
int kube_ws_close_code_valid(int code);
/* Returns a short name for a close code ("normal closure", "protocol error", ...). */
const char *kube_ws_close_code_name(int code);

/* Generates a new Sec-WebSocket-Key (base64 of 16 random bytes) into key (>= 25 bytes). 0/-1. */
int kube_ws_make_key(char key[25]);
/* Computes the expected Sec-WebSocket-Accept for key into accept (>= 29 bytes). 0/-1. */
int kube_ws_accept_for(const char *key, char accept[29]);

#endif
