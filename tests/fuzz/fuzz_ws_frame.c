/* fuzz_ws_frame.c - libFuzzer target for the WebSocket frame decoder (lib/ws_frame.c)
 * and the upgrade reply parser (lib/exec_reply.c). The first input byte picks the
 * message limit and the chunking; the decoder must never read out of bounds, must
 * consume exactly what it reports, keep its invariants (one DATA(first) per message,
 * MESSAGE_END only inside a message), and give the same events however the input is split. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/exec.h"
#include "kube/ws.h"

/* Decodes in pieces of `chunk` bytes; returns a digest of the event sequence (*err set when
 * the input was rejected: data delivered before the error may then depend on the split). */
static uint64_t run(const uint8_t *p, size_t n, size_t chunk, uint64_t max, int *err)
{
    struct kube_ws_decoder d;
    kube_ws_decoder_init(&d, max);
    uint64_t h = 1469598103934665603ULL;
    int in_msg = 0;
    size_t off = 0;
    while (off < n) {
        size_t len = n - off < chunk ? n - off : chunk;
        const uint8_t *q = p + off;
        for (;;) {
            struct kube_ws_event ev;
            size_t used = 0;
            enum kube_ws_event_type t = kube_ws_decode(&d, q, len, &used, &ev);
            if (used > len)
                abort();
            q += used;
            len -= used;
            if (t == KUBE_WS_EV_NONE) {
                if (len)
                    abort();
                break;
            }
            if (t != KUBE_WS_EV_DATA || ev.first)
                h = (h ^ (uint64_t)t) * 1099511628211ULL; /* split-independent */
            if (t == KUBE_WS_EV_ERROR) {
                if (!d.error[0] || ev.close_code < 1000)
                    abort();
                *err = 1;
                return h;
            }
            if (t == KUBE_WS_EV_DATA) {
                if (ev.first == in_msg)
                    abort();
                in_msg = 1;
                for (size_t i = 0; i < ev.len; i++)
                    h = (h ^ ev.data[i]) * 1099511628211ULL;
            } else if (t == KUBE_WS_EV_MESSAGE_END) {
                if (!in_msg)
                    abort();
                in_msg = 0;
            } else {
                if (ev.len > KUBE_WS_MAX_CONTROL)
                    abort();
                for (size_t i = 0; i < ev.len; i++)
                    h = (h ^ ev.data[i]) * 1099511628211ULL;
                h = (h ^ (uint64_t)ev.close_code) * 1099511628211ULL;
            }
        }
        off += chunk < n - off ? chunk : n - off;
    }
    return h;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    uint8_t sel = data[0];
    data++;
    size--;
    uint64_t max = (sel & 3) == 0 ? 0 : (sel & 3) == 1 ? 16 : (sel & 3) == 2 ? 300 : 70000;
    int e1 = 0, e2 = 0;
    uint64_t whole = run(data, size, size ? size : 1, max, &e1);
    uint64_t split = run(data, size, 1 + (sel >> 2), max, &e2);
    if (e1 != e2 || (!e1 && whole != split))
        abort();
    /* the same bytes as an upgrade reply head */
    struct kube_exec_reply r;
    char *m = NULL;
    int pr = kube_exec_parse_reply((const char *)data, size,
                                   "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=", "v5.channel.k8s.io, v4.channel.k8s.io", &r, &m);
    if (pr == 1) {
        if (r.head_len > size)
            abort();
        kube_exec_reply_free(&r);
    } else if (pr < 0 && !m) {
        abort();
    }
    free(m);
    return 0;
}
