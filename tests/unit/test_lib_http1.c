/* test_lib_http1.c - unit tests for the API client's HTTP/1.1 response parser
 * (lib/http1_parse.c): Content-Length, chunked (extensions, trailers) and
 * close-delimited bodies, every reply split at every byte boundary and fed byte by
 * byte, interim 1xx replies, keep-alive rules, oversize headers, bad Content-Length,
 * malformed status lines/headers/chunks, and premature EOF (an error, never success);
 * the request head (Host, path prefix, token, Content-Length, header injection refused). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/http1.h"
#include "kube/config.h"

struct out {
    int rc;           /* 1 complete, 0 incomplete at the end of input, -1 error, -2 stopped */
    int code;
    int reusable;
    long retry_after;
    size_t used;      /* bytes of the input that belonged to the reply */
    char body[256 * 1024];
    size_t blen;
    char err[256];
    size_t stop_at;   /* nonzero: the callback stops once this many body bytes arrived */
};

static int sink(const char *d, size_t n, void *ud)
{
    struct out *o = ud;
    assert_true(o->blen + n < sizeof o->body);
    memcpy(o->body + o->blen, d, n);
    o->blen += n;
    o->body[o->blen] = '\0';
    return o->stop_at && o->blen >= o->stop_at;
}

/* Feeds s in pieces: cuts[] are the piece boundaries (ascending, may be empty); eof adds the EOF. */
static void feed(struct out *o, const char *s, size_t len, const size_t *cuts, size_t ncuts, int eof, int head)
{
    struct http1_parser p;
    char *err = NULL;
    size_t stop = o->stop_at;
    memset(o, 0, sizeof *o);
    o->stop_at = stop;
    http1_parser_init(&p, head);
    size_t at = 0;
    o->rc = 0;
    for (size_t i = 0; i <= ncuts && o->rc == 0; i++) {
        size_t end = i < ncuts ? cuts[i] : len, used = 0;
        o->rc = http1_parser_feed(&p, s + at, end - at, &used, sink, o, &err);
        o->used = at + used;
        at = end;
    }
    if (o->rc == 0 && eof)
        o->rc = http1_parser_eof(&p, &err);
    o->code = p.code;
    o->reusable = o->rc == 1 && http1_parser_reusable(&p);
    o->retry_after = p.retry_after;
    snprintf(o->err, sizeof o->err, "%s", err ? err : "");
    if (o->rc == -1) {
        assert_non_null(err);
        assert_null(strchr(err, '\n'));
    }
    free(err);
    http1_parser_free(&p);
}

static struct out g_o, g_ref;

static void whole(const char *s, int eof) { feed(&g_o, s, strlen(s), NULL, 0, eof, 0); }

static void test_content_length(void **st)
{
    (void)st;
    const char *r = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 7\r\n\r\n{\"a\":1}";
    whole(r, 0);
    assert_int_equal(g_o.rc, 1);
    assert_int_equal(g_o.code, 200);
    assert_string_equal(g_o.body, "{\"a\":1}");
    assert_int_equal(g_o.reusable, 1);
    assert_int_equal(g_o.used, strlen(r));
    /* bytes after the reply are not part of it */
    char more[256];
    snprintf(more, sizeof more, "%sHTTP/1.1 200 OK\r\n", r);
    whole(more, 0);
    assert_int_equal(g_o.rc, 1);
    assert_int_equal(g_o.used, strlen(r));
    /* zero length, Connection: close */
    whole("HTTP/1.1 201 Created\r\nContent-Length: 0\r\nConnection: keep-alive, close\r\n\r\n", 0);
    assert_int_equal(g_o.rc, 1);
    assert_int_equal(g_o.code, 201);
    assert_int_equal(g_o.blen, 0);
    assert_int_equal(g_o.reusable, 0);
    /* HTTP/1.0: closes unless keep-alive */
    whole("HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok", 0);
    assert_int_equal(g_o.rc, 1);
    assert_int_equal(g_o.reusable, 0);
    whole("HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 2\r\n\r\nok", 0);
    assert_int_equal(g_o.reusable, 1);
    /* the same Content-Length twice is fine; Retry-After is read */
    whole("HTTP/1.1 503 Service Unavailable\r\nContent-Length: 2\r\ncontent-length: 2\r\nRetry-After:  7 \r\n\r\nno", 0);
    assert_int_equal(g_o.rc, 1);
    assert_int_equal(g_o.code, 503);
    assert_int_equal(g_o.retry_after, 7);
    assert_string_equal(g_o.body, "no");
}

static void test_chunked(void **st)
{
    (void)st;
    const char *r = "HTTP/1.1 200 OK\r\nTransfer-Encoding: Chunked\r\n\r\n"
                    "5;name=value;other=\"q;x\"\r\nhello\r\n1A \t; ext\r\n, abcdefghijklmnopqrstuvwx\r\n"
                    "0;last\r\nX-Trailer: t\r\nOther: u\r\n\r\n";
    whole(r, 0);
    assert_int_equal(g_o.rc, 1);
    assert_string_equal(g_o.body, "hello, abcdefghijklmnopqrstuvwx");
    assert_int_equal(g_o.reusable, 1);
    assert_int_equal(g_o.used, strlen(r));
    /* chunked wins over Content-Length, but the connection is not reused */
    whole("HTTP/1.1 200 OK\r\nContent-Length: 100\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n0\r\n\r\n", 0);
    assert_int_equal(g_o.rc, 1);
    assert_string_equal(g_o.body, "ab");
    assert_int_equal(g_o.reusable, 0);
    /* bare LF line ends are accepted */
    whole("HTTP/1.1 200 OK\nTransfer-Encoding: chunked\n\n3\nabc\n0\n\n", 0);
    assert_int_equal(g_o.rc, 1);
    assert_string_equal(g_o.body, "abc");
}

static void test_close_delimited_and_no_body(void **st)
{
    (void)st;
    whole("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil the end", 1);
    assert_int_equal(g_o.rc, 1);
    assert_string_equal(g_o.body, "until the end");
    assert_int_equal(g_o.reusable, 0);
    whole("HTTP/1.1 204 No Content\r\nContent-Length: 10\r\n\r\n", 0);
    assert_int_equal(g_o.rc, 1);
    assert_int_equal(g_o.reusable, 1);
    whole("HTTP/1.1 304 Not Modified\r\n\r\n", 0);
    assert_int_equal(g_o.rc, 1);
    /* a reply to HEAD has no body whatever Content-Length says */
    const char *h = "HTTP/1.1 200 OK\r\nContent-Length: 1234\r\n\r\n";
    feed(&g_o, h, strlen(h), NULL, 0, 0, 1);
    assert_int_equal(g_o.rc, 1);
    assert_int_equal(g_o.blen, 0);
    assert_int_equal(g_o.reusable, 1);
    /* interim replies are skipped */
    whole("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: x\r\n\r\n"
          "HTTP/1.1 404 Not Found\r\nContent-Length: 3\r\n\r\nnope", 0);
    assert_int_equal(g_o.rc, 1);
    assert_int_equal(g_o.code, 404);
    assert_string_equal(g_o.body, "nop");
}

/* Every reply gives the same result in two pieces cut anywhere, and byte by byte. */
static void test_split_everywhere(void **st)
{
    (void)st;
    struct { const char *r; int eof; } cases[] = {
        {"HTTP/1.1 200 OK\r\nContent-Length: 11\r\nRetry-After: 3\r\n\r\nhello world", 0},
        {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;a=b\r\nhello\r\n6\r\n world\r\n0\r\nT: 1\r\n\r\n", 0},
        {"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 500 Oops\r\nConnection: close\r\n\r\nclose-delimited body", 1},
        {"HTTP/1.1 200 OK\nContent-Length: 3\n\nabc", 0},
        {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel", 1}, /* truncated: error */
        {"HTTP/1.1 200 OK\r\nContent-Length: 2x\r\n\r\nab", 0},               /* malformed */
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const char *r = cases[c].r;
        size_t n = strlen(r);
        feed(&g_ref, r, n, NULL, 0, cases[c].eof, 0);
        for (size_t cut = 0; cut <= n; cut++) {
            feed(&g_o, r, n, &cut, 1, cases[c].eof, 0);
            if (g_o.rc != g_ref.rc || g_o.code != g_ref.code || g_o.blen != g_ref.blen ||
                memcmp(g_o.body, g_ref.body, g_o.blen) || g_o.reusable != g_ref.reusable ||
                g_o.retry_after != g_ref.retry_after || strcmp(g_o.err, g_ref.err))
                fail_msg("case %zu cut at %zu: rc %d/%d body \"%s\"/\"%s\" err \"%s\"/\"%s\"", c, cut, g_o.rc,
                         g_ref.rc, g_o.body, g_ref.body, g_o.err, g_ref.err);
        }
        size_t cuts[512];
        assert_true(n < 512);
        for (size_t i = 0; i < n; i++)
            cuts[i] = i + 1;
        feed(&g_o, r, n, cuts, n, cases[c].eof, 0);
        assert_int_equal(g_o.rc, g_ref.rc);
        assert_int_equal(g_o.blen, g_ref.blen);
        assert_memory_equal(g_o.body, g_ref.body, g_o.blen);
        assert_string_equal(g_o.err, g_ref.err);
    }
    assert_int_equal(g_ref.rc, -1); /* the last case is malformed */
}

static void expect_error(const char *r, int eof, const char *needle)
{
    whole(r, eof);
    if (g_o.rc != -1 || !strstr(g_o.err, needle))
        fail_msg("reply \"%.60s\": rc %d err \"%s\", want an error with \"%s\"", r, g_o.rc, g_o.err, needle);
}

static void test_oversize(void **st)
{
    (void)st;
    size_t big = 70 * 1024;
    char *r = malloc(big + 100);
    assert_non_null(r);
    /* many header lines, each fine, together over 64 KiB */
    strcpy(r, "HTTP/1.1 200 OK\r\n");
    while (strlen(r) < big)
        strcat(r, "X-Filler: 0123456789012345678901234567890123456789\r\n");
    strcat(r, "\r\n");
    expect_error(r, 0, "reply header larger than 64 KiB");
    /* one line over 16 KiB */
    strcpy(r, "HTTP/1.1 200 OK\r\nX-Long: ");
    memset(r + strlen(r), 'a', 17 * 1024);
    r[25 + 17 * 1024] = '\0';
    strcat(r, "\r\n\r\n");
    expect_error(r, 0, "reply header line longer than 16 KiB");
    /* a status line without an end */
    memset(r, 'H', 20 * 1024);
    r[20 * 1024] = '\0';
    expect_error(r, 0, "16 KiB");
    /* a chunk-size line over 4 KiB (extensions) and a trailer over 64 KiB */
    strcpy(r, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1;");
    memset(r + strlen(r), 'e', 5000);
    r[49 + 5000] = '\0';
    expect_error(r, 0, "chunk-size line too long");
    strcpy(r, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n");
    while (strlen(r) < big)
        strcat(r, "T: 0123456789012345678901234567890123456789\r\n");
    expect_error(r, 0, "chunked trailer larger than 64 KiB");
    free(r);
    /* interim replies count toward the cap too */
    char *many = malloc(80 * 1024);
    assert_non_null(many);
    many[0] = '\0';
    while (strlen(many) < 70 * 1024)
        strcat(many, "HTTP/1.1 100 Continue\r\n\r\n");
    expect_error(many, 0, "larger than 64 KiB");
    free(many);
}

static void test_bad_content_length(void **st)
{
    (void)st;
    const char *bad[] = {"abc", "-1", "+5", "1 2", "5, 5", "0x10", "", "9999999999999999999999", NULL};
    char r[256];
    for (int i = 0; bad[i]; i++) {
        snprintf(r, sizeof r, "HTTP/1.1 200 OK\r\nContent-Length: %s\r\n\r\nhello", bad[i]);
        expect_error(r, 0, "bad Content-Length");
    }
    expect_error("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!", 0,
                 "conflicting Content-Length");
}

static void test_malformed(void **st)
{
    (void)st;
    const char *status[] = {"HTTP/2 200 OK", "HTTP/1.1 20 OK", "HTTP/1.1 999 Huh", "ICY 200 OK", "HTTP/1.1 200OK",
                            "http/1.1 200 OK", "HTTP/1.2 200 OK", "HTTP/1.1  200 OK", "HTTP/1.1 200 O\001K",
                            "<html>", "", NULL};
    char r[256];
    for (int i = 0; status[i]; i++) {
        snprintf(r, sizeof r, "%s\r\nContent-Length: 0\r\n\r\n", status[i]);
        expect_error(r, 0, "malformed status line");
    }
    expect_error("HTTP/1.1 101 Switching Protocols\r\n\r\n", 0, "unexpected 101");
    expect_error("HTTP/1.1 200 OK\r\nX-A: 1\r\n  folded\r\n\r\n", 0, "obsolete header line folding");
    expect_error("HTTP/1.1 200 OK\r\nno colon here\r\n\r\n", 0, "header line without a name");
    expect_error("HTTP/1.1 200 OK\r\n: empty name\r\n\r\n", 0, "header line without a name");
    expect_error("HTTP/1.1 200 OK\r\nContent-Length : 5\r\n\r\nhello", 0, "bad header name");
    expect_error("HTTP/1.1 200 OK\r\nX-A: a\rb\r\n\r\n", 0, "control character");
    expect_error("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 0, "unsupported Transfer-Encoding");
    expect_error("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n", 0,
                 "unsupported Transfer-Encoding");
    const char *te = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
    const char *chunks[] = {"zz\r\n", "-1\r\n", " 5\r\nhello\r\n", "5 x\r\nhello\r\n", ";5\r\n", NULL};
    for (int i = 0; chunks[i]; i++) {
        snprintf(r, sizeof r, "%s%s0\r\n\r\n", te, chunks[i]);
        expect_error(r, 0, "malformed chunk size");
    }
    snprintf(r, sizeof r, "%s1000000000000000\r\n", te);
    expect_error(r, 0, "chunk size too large");
    snprintf(r, sizeof r, "%s3\r\nabcdef\r\n0\r\n\r\n", te);
    expect_error(r, 0, "chunk data not followed by CRLF");
    snprintf(r, sizeof r, "%s3\r\nabc0\r\n\r\n", te);
    expect_error(r, 0, "chunk data not followed by CRLF");
    snprintf(r, sizeof r, "%s0\r\nbad trailer\r\n\r\n", te);
    expect_error(r, 0, "header line without a name");
}

static void test_premature_eof(void **st)
{
    (void)st;
    expect_error("", 1, "connection closed before the reply");
    expect_error("HTTP/1.1 20", 1, "connection closed inside the status line");
    expect_error("HTTP/1.1 200 OK\r\nContent-Len", 1, "connection closed inside the reply header");
    expect_error("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n", 1, "inside the reply header");
    expect_error("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", 1,
                 "connection closed 7 bytes before the end of the body (Content-Length 10)");
    const char *te = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
    const char *cut[] = {"", "5", "5\r\nhel", "5\r\nhello", "5\r\nhello\r\n", "5\r\nhello\r\n0\r\n", "0\r\nT: 1\r\n",
                         NULL};
    char r[256];
    for (int i = 0; cut[i]; i++) {
        snprintf(r, sizeof r, "%s%s", te, cut[i]);
        expect_error(r, 1, "connection closed inside the chunked body");
    }
    /* without EOF, an incomplete reply is just incomplete */
    whole("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", 0);
    assert_int_equal(g_o.rc, 0);
    assert_int_equal(g_o.reusable, 0);
}

static void test_callback_stop(void **st)
{
    (void)st;
    const char *r = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n3\r\ndef\r\n0\r\n\r\n";
    g_o.stop_at = 3;
    whole(r, 0);
    g_o.stop_at = 0;
    assert_int_equal(g_o.rc, -2);
    assert_string_equal(g_o.body, "abc");
    assert_true(g_o.used < strlen(r));
    assert_int_equal(g_o.reusable, 0);
}

static void test_request_head(void **st)
{
    (void)st;
    struct kube_config *cfg = kube_config_new_server("https://[::1]:8443/prefix/");
    assert_non_null(cfg);
    cfg->token = strdup("t0k");
    char *err = NULL;
    char *h = http1_request_head(cfg, "POST", "/api/v1/namespaces/a/pods?dryRun=All", "ua/1", "application/json", 1,
                                 12, &err);
    assert_non_null(h);
    assert_string_equal(h, "POST /prefix/api/v1/namespaces/a/pods?dryRun=All HTTP/1.1\r\nHost: [::1]:8443\r\n"
                           "User-Agent: ua/1\r\nAccept: application/json\r\nAuthorization: Bearer t0k\r\n"
                           "Content-Type: application/json\r\nContent-Length: 12\r\n\r\n");
    http1_head_free(h);
    kube_config_free(cfg);
    /* default port, no token; a POST without a body still says Content-Length: 0 */
    cfg = kube_config_new_server("http://api.example");
    h = http1_request_head(cfg, "POST", "/fault/x", "ua", "application/json", 0, 0, &err);
    assert_string_equal(h, "POST /fault/x HTTP/1.1\r\nHost: api.example\r\nUser-Agent: ua\r\n"
                           "Accept: application/json\r\nContent-Length: 0\r\n\r\n");
    http1_head_free(h);
    h = http1_request_head(cfg, "GET", "/api", "ua", NULL, 0, 0, &err);
    assert_string_equal(h, "GET /api HTTP/1.1\r\nHost: api.example\r\nUser-Agent: ua\r\nAccept: application/json\r\n\r\n");
    http1_head_free(h);
    /* nothing can inject a header or a second request line */
    assert_null(http1_request_head(cfg, "GET", "/api HTTP/1.1\r\nX: y", "ua", NULL, 0, 0, &err));
    assert_non_null(strstr(err, "control character"));
    free(err);
    err = NULL;
    assert_null(http1_request_head(cfg, "GET", "/api", "ua\r\nX-Evil: 1", NULL, 0, 0, &err));
    free(err);
    err = NULL;
    cfg->token = strdup("abc\nX-Evil: 1");
    assert_null(http1_request_head(cfg, "GET", "/api", "ua", NULL, 0, 0, &err));
    assert_non_null(strstr(err, "bearer token contains a control character"));
    free(err);
    kube_config_free(cfg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_content_length),
        cmocka_unit_test(test_chunked),
        cmocka_unit_test(test_close_delimited_and_no_body),
        cmocka_unit_test(test_split_everywhere),
        cmocka_unit_test(test_oversize),
        cmocka_unit_test(test_bad_content_length),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_premature_eof),
        cmocka_unit_test(test_callback_stop),
        cmocka_unit_test(test_request_head),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
