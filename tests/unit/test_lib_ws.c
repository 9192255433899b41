/* test_lib_ws.c - unit tests for the RFC 6455 client framing layer (lib/ws_*.c):
 * decoding at every split point, fragmentation with interleaved control frames,
 * every malformed case, length encodings, masking and the handshake accept key. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kube/ws.h"

/* A transcript of decoded events: messages reassembled, control frames noted. */
struct transcript {
    char text[4096]; /* "B:<hex-len>;T:hello;PING:x;CLOSE:1000:bye;ERR:1002" */
    size_t tlen;
    uint8_t *msg;
    size_t msg_len;
    int errors;
    char error[160];
};

static void tappend(struct transcript *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(t->text + t->tlen, sizeof(t->text) - t->tlen, fmt, ap);
    va_end(ap);
    assert_true(n >= 0 && (size_t)n < sizeof(t->text) - t->tlen);
    t->tlen += (size_t)n;
}

/* Feeds buf in chunks of `chunk` bytes (0 = all at once). */
static void run(struct transcript *t, const uint8_t *buf, size_t len, size_t chunk, uint64_t max)
{
    struct kube_ws_decoder d;
    kube_ws_decoder_init(&d, max);
    memset(t, 0, sizeof(*t));
    size_t off = 0;
    int in_msg = 0;
    while (off < len || off == 0) {
        size_t n = chunk ? (len - off < chunk ? len - off : chunk) : len - off;
        const uint8_t *p = buf + off;
        size_t left = n;
        for (;;) {
            struct kube_ws_event ev;
            size_t used = 0;
            enum kube_ws_event_type ty = kube_ws_decode(&d, p, left, &used, &ev);
            assert_true(used <= left);
            p += used;
            left -= used;
            if (ty == KUBE_WS_EV_NONE) {
                assert_int_equal(left, 0);
                break;
            }
            if (ty == KUBE_WS_EV_ERROR) {
                tappend(t, "ERR:%d;", ev.close_code);
                snprintf(t->error, sizeof(t->error), "%s", d.error);
                t->errors++;
                free(t->msg);
                t->msg = NULL;
                return;
            }
            if (ty == KUBE_WS_EV_DATA) {
                if (ev.first) {
                    assert_false(in_msg);
                    in_msg = 1;
                    t->msg_len = 0;
                }
                assert_true(in_msg);
                t->msg = realloc(t->msg, t->msg_len + ev.len + 1);
                assert_non_null(t->msg);
                memcpy(t->msg + t->msg_len, ev.data, ev.len);
                t->msg_len += ev.len;
            } else if (ty == KUBE_WS_EV_MESSAGE_END) {
                assert_true(in_msg);
                in_msg = 0;
                if (ev.opcode == KUBE_WS_OP_TEXT)
                    tappend(t, "T:%.*s;", (int)t->msg_len, (const char *)t->msg);
                else
                    tappend(t, "B:%zu;", t->msg_len);
            } else if (ty == KUBE_WS_EV_PING) {
                tappend(t, "PING:%.*s;", (int)ev.len, (const char *)ev.data);
            } else if (ty == KUBE_WS_EV_PONG) {
                tappend(t, "PONG:%.*s;", (int)ev.len, (const char *)ev.data);
            } else if (ty == KUBE_WS_EV_CLOSE) {
                tappend(t, "CLOSE:%d:%.*s;", ev.close_code, (int)ev.len, (const char *)ev.data);
            }
        }
        off += n;
        if (len == 0)
            break;
    }
}

/* Decodes buf at every chunk size 1..len and checks the transcript is the same. */
static void expect_all_splits(const uint8_t *buf, size_t len, const char *want)
{
    struct transcript t;
    for (size_t chunk = 0; chunk <= len; chunk++) {
        run(&t, buf, len, chunk, 0);
        if (strcmp(t.text, want) != 0)
            fail_msg("chunk %zu: got '%s' want '%s' (%s)", chunk, t.text, want, t.error);
        free(t.msg);
    }
}

static void expect_error(const uint8_t *buf, size_t len, int code, const char *needle)
{
    struct transcript t;
    for (size_t chunk = 0; chunk <= len; chunk++) {
        run(&t, buf, len, chunk, 0);
        assert_int_equal(t.errors, 1);
        char want[32];
        snprintf(want, sizeof(want), "ERR:%d;", code);
        if (!strstr(t.text, want))
            fail_msg("chunk %zu: got '%s' want %s", chunk, t.text, want);
        if (!strstr(t.error, needle))
            fail_msg("error '%s' lacks '%s'", t.error, needle);
    }
}

static void test_accept_key_rfc_example(void **s)
{
    (void)s;
    char acc[29];
    assert_int_equal(kube_ws_accept_for("dGhlIHNhbXBsZSBub25jZQ==", acc), 0);
    assert_string_equal(acc, "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
    char k1[25], k2[25];
    assert_int_equal(kube_ws_make_key(k1), 0);
    assert_int_equal(kube_ws_make_key(k2), 0);
    assert_int_equal(strlen(k1), 24);
    assert_string_not_equal(k1, k2);
}

static void test_single_frames(void **s)
{
    (void)s;
    const uint8_t hello[] = { 0x81, 0x05, 'H', 'e', 'l', 'l', 'o' };
    expect_all_splits(hello, sizeof(hello), "T:Hello;");
    const uint8_t empty[] = { 0x82, 0x00 };
    expect_all_splits(empty, sizeof(empty), "B:0;");
    const uint8_t ping[] = { 0x89, 0x02, 'h', 'i', 0x8a, 0x00 };
    expect_all_splits(ping, sizeof(ping), "PING:hi;PONG:;");
    const uint8_t close0[] = { 0x88, 0x00 };
    expect_all_splits(close0, sizeof(close0), "CLOSE:1005:;");
    const uint8_t close1[] = { 0x88, 0x05, 0x03, 0xe8, 'b', 'y', 'e' };
    expect_all_splits(close1, sizeof(close1), "CLOSE:1000:bye;");
}

static void test_fragmented_with_control(void **s)
{
    (void)s;
    /* RFC 6455 5.7: "Hel" + ping + "lo", then an empty-fragment message */
    const uint8_t f[] = { 0x01, 0x03, 'H',  'e',  'l',  0x89, 0x01, 'p',  0x80, 0x02,
                          'l',  'o',  0x02, 0x00, 0x00, 0x01, 'x',  0x80, 0x00 };
    expect_all_splits(f, sizeof(f), "PING:p;T:Hello;B:1;");
}

static void test_lengths(void **s)
{
    (void)s;
    size_t sizes[] = { 125, 126, 65535, 65536, 200000 };
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        size_t n = sizes[i];
        uint8_t *buf = calloc(1, n + 10);
        assert_non_null(buf);
        size_t h = 0;
        buf[h++] = 0x82;
        if (n < 126)
            buf[h++] = (uint8_t)n;
        else if (n <= 0xffff) {
            buf[h++] = 126;
            buf[h++] = (uint8_t)(n >> 8);
            buf[h++] = (uint8_t)n;
        } else {
            buf[h++] = 127;
            for (int b = 7; b >= 0; b--)
                buf[h++] = (uint8_t)((uint64_t)n >> (8 * b));
        }
        for (size_t j = 0; j < n; j++)
            buf[h + j] = (uint8_t)(j * 7);
        struct transcript t;
        size_t chunks[] = { 0, 1, 7, 4096 };
        for (size_t c = 0; c < 4; c++) {
            if (chunks[c] == 1 && n > 70000)
                continue;
            run(&t, buf, h + n, chunks[c], 0);
            char want[32];
            snprintf(want, sizeof(want), "B:%zu;", n);
            assert_string_equal(t.text, want);
            assert_memory_equal(t.msg, buf + h, n);
            free(t.msg);
        }
        /* over the limit */
        run(&t, buf, h + n, 0, n - 1);
        assert_string_equal(t.text, "ERR:1009;");
        free(buf);
    }
}

static void test_malformed(void **s)
{
    (void)s;
    expect_error((const uint8_t[]){ 0xc2, 0x00 }, 2, 1002, "reserved bits");
    expect_error((const uint8_t[]){ 0x83, 0x00 }, 2, 1002, "unknown opcode");
    expect_error((const uint8_t[]){ 0x8b, 0x00 }, 2, 1002, "unknown opcode");
    expect_error((const uint8_t[]){ 0x82, 0x81, 1, 2, 3, 4, 0 }, 7, 1002, "masked");
    expect_error((const uint8_t[]){ 0x09, 0x00 }, 2, 1002, "fragmented");
    expect_error((const uint8_t[]){ 0x89, 0x7e, 0x00, 0x7e }, 4, 1002, "over 125");
    expect_error((const uint8_t[]){ 0x82, 0x7e, 0x00, 0x05 }, 4, 1002, "minimally");
    expect_error((const uint8_t[]){ 0x82, 0x7f, 0, 0, 0, 0, 0, 0, 0xff, 0xff }, 10, 1002, "minimally");
    expect_error((const uint8_t[]){ 0x82, 0x7f, 0x80, 0, 0, 0, 0, 0, 0, 0 }, 10, 1002, "most significant");
    expect_error((const uint8_t[]){ 0x80, 0x01, 'x' }, 3, 1002, "continuation");
    expect_error((const uint8_t[]){ 0x01, 0x01, 'x', 0x81, 0x01, 'y' }, 6, 1002, "unfinished");
    expect_error((const uint8_t[]){ 0x88, 0x01, 0x03 }, 3, 1002, "1-byte");
    expect_error((const uint8_t[]){ 0x88, 0x02, 0x03, 0xed }, 4, 1002, "invalid code 1005");
    expect_error((const uint8_t[]){ 0x88, 0x02, 0x03, 0xe7 }, 4, 1002, "invalid code 999");
    expect_error((const uint8_t[]){ 0x88, 0x02, 0x03, 0xee }, 4, 1002, "invalid code 1006");
    expect_error((const uint8_t[]){ 0x88, 0x02, 0x0b, 0xb7 }, 4, 1002, "invalid code 2999");
    expect_error((const uint8_t[]){ 0x88, 0x03, 0x03, 0xe8, 0xff }, 5, 1007, "UTF-8");
    expect_error((const uint8_t[]){ 0x81, 0x02, 0xc3, 0x28 }, 4, 1007, "UTF-8");
    expect_error((const uint8_t[]){ 0x81, 0x03, 0xed, 0xa0, 0x80 }, 5, 1007, "UTF-8"); /* surrogate */
    expect_error((const uint8_t[]){ 0x81, 0x02, 0xc0, 0xaf }, 4, 1007, "UTF-8");       /* overlong */
    expect_error((const uint8_t[]){ 0x81, 0x04, 0xf4, 0x90, 0x80, 0x80 }, 6, 1007, "UTF-8");
    expect_error((const uint8_t[]){ 0x01, 0x01, 0xe2, 0x80, 0x00 }, 5, 1007, "inside a UTF-8");
    expect_error((const uint8_t[]){ 0x88, 0x00, 0x82, 0x00 }, 4, 1002, "after the close");
    /* valid multi-byte UTF-8 split across fragments is fine */
    const uint8_t ok[] = { 0x01, 0x02, 0xe2, 0x82, 0x80, 0x01, 0xac };
    expect_all_splits(ok, sizeof(ok), "T:\xe2\x82\xac;");
    /* the decoder stays in error */
    struct kube_ws_decoder d;
    struct kube_ws_event ev;
    size_t used;
    kube_ws_decoder_init(&d, 0);
    assert_int_equal(kube_ws_decode(&d, (const uint8_t[]){ 0xf2, 0 }, 2, &used, &ev), KUBE_WS_EV_ERROR);
    assert_int_equal(kube_ws_decode(&d, (const uint8_t[]){ 0x82, 0 }, 2, &used, &ev), KUBE_WS_EV_ERROR);
    assert_int_equal(ev.close_code, 1002);
}

static void test_encode(void **s)
{
    (void)s;
    uint8_t key[4] = { 0x37, 0xfa, 0x21, 0x3d };
    uint8_t h[KUBE_WS_MAX_HEADER];
    size_t n = kube_ws_frame_header(h, 1, KUBE_WS_OP_TEXT, 5, key);
    assert_int_equal(n, 6);
    assert_memory_equal(h, ((const uint8_t[]){ 0x81, 0x85, 0x37, 0xfa, 0x21, 0x3d }), 6);
    uint8_t p[] = { 'H', 'e', 'l', 'l', 'o' };
    kube_ws_mask(p, 5, key, 0);
    assert_memory_equal(p, ((const uint8_t[]){ 0x7f, 0x9f, 0x4d, 0x51, 0x58 }), 5); /* RFC 5.7 */
    n = kube_ws_frame_header(h, 0, KUBE_WS_OP_BINARY, 126, key);
    assert_int_equal(n, 8);
    assert_memory_equal(h, ((const uint8_t[]){ 0x02, 0xfe, 0x00, 0x7e }), 4);
    n = kube_ws_frame_header(h, 1, KUBE_WS_OP_BINARY, 65536, key);
    assert_int_equal(n, 14);
    assert_memory_equal(h, ((const uint8_t[]){ 0x82, 0xff, 0, 0, 0, 0, 0, 1, 0, 0 }), 10);
    /* masking in pieces equals masking at once */
    uint8_t a[1000], b[1000];
    for (int i = 0; i < 1000; i++)
        a[i] = b[i] = (uint8_t)(i * 13);
    kube_ws_mask(a, 1000, key, 0);
    kube_ws_mask(b, 3, key, 0);
    kube_ws_mask(b + 3, 501, key, 3);
    kube_ws_mask(b + 504, 496, key, 504);
    assert_memory_equal(a, b, 1000);
    uint8_t cp[KUBE_WS_MAX_CONTROL];
    char longr[300];
    memset(longr, 'r', sizeof(longr) - 1);
    longr[299] = 0;
    assert_int_equal(kube_ws_close_payload(cp, 1000, longr), 125);
    assert_int_equal(kube_ws_close_payload(cp, 1001, NULL), 2);
    assert_int_equal(cp[0] << 8 | cp[1], 1001);
    assert_true(kube_ws_close_code_valid(1000));
    assert_false(kube_ws_close_code_valid(1005));
    assert_false(kube_ws_close_code_valid(5000));
    assert_string_equal(kube_ws_close_code_name(1006), "abnormal closure");
}

/* Random valid streams decoded at random split points reassemble exactly. */
static void test_random_streams(void **s)
{
    (void)s;
    unsigned seed = 12345;
    for (int round = 0; round < 200; round++) {
        uint8_t buf[70000];
        size_t len = 0;
        size_t total = 0;
        int nfrag = 1 + rand_r(&seed) % 4;
        for (int f = 0; f < nfrag; f++) {
            size_t n = (size_t)(rand_r(&seed) % (f == 0 && round % 10 == 0 ? 66000 : 300));
            if (len + n + 20 > sizeof(buf))
                n = 0;
            buf[len++] = (uint8_t)((f == nfrag - 1 ? 0x80 : 0) | (f == 0 ? 2 : 0));
            if (n < 126)
                buf[len++] = (uint8_t)n;
            else if (n <= 0xffff) {
                buf[len++] = 126;
                buf[len++] = (uint8_t)(n >> 8);
                buf[len++] = (uint8_t)n;
            } else {
                buf[len++] = 127;
                for (int b = 7; b >= 0; b--)
                    buf[len++] = (uint8_t)((uint64_t)n >> (8 * b));
            }
            for (size_t j = 0; j < n; j++)
                buf[len++] = (uint8_t)(total + j);
            total += n;
            if (rand_r(&seed) % 3 == 0) {
                buf[len++] = 0x89;
                buf[len++] = 0;
            }
        }
        struct transcript t;
        run(&t, buf, len, 1 + rand_r(&seed) % 1000, 0);
        char want[64];
        snprintf(want, sizeof(want), "B:%zu;", total);
        assert_non_null(strstr(t.text, want));
        for (size_t j = 0; j < total; j++)
            assert_int_equal(t.msg[j], (uint8_t)j);
        free(t.msg);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_accept_key_rfc_example),
        cmocka_unit_test(test_single_frames),
        cmocka_unit_test(test_fragmented_with_control),
        cmocka_unit_test(test_lengths),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_encode),
        cmocka_unit_test(test_random_streams),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
