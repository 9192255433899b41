/* fuzz_http_response.c - libFuzzer target for the API client's HTTP/1.1 response parser
 * (lib/http1_parse.c): the input after its first byte is one reply, fed whole and then
 * in chunks of 1..16 bytes (first byte), then EOF. Both feeds must agree exactly (result,
 * status, body, keep-alive, bytes used, message); errors are one bounded line; the body is
 * never longer than the input; a complete reply stays complete at EOF. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/http1.h"

struct run {
    int rc, code, reusable;
    size_t used;
    char *body;
    size_t blen, cap;
    char *err;
};

static int sink(const char *d, size_t n, void *ud)
{
    struct run *r = ud;
    if (r->blen + n > r->cap)
        abort(); /* more body than input */
    memcpy(r->body + r->blen, d, n);
    r->blen += n;
    return 0;
}

static void run(struct run *r, const char *s, size_t len, size_t chunk, int head)
{
    struct http1_parser p;
    http1_parser_init(&p, head);
    size_t at = 0;
    r->rc = 0;
    while (r->rc == 0 && at < len) {
        size_t k = len - at < chunk ? len - at : chunk, used = 0;
        r->rc = http1_parser_feed(&p, s + at, k, &used, sink, r, &r->err);
        if (used > k)
            abort();
        r->used = at + used;
        at += k;
    }
    if (r->rc == 0) {
        r->rc = http1_parser_eof(&p, &r->err);
        if (r->rc != 1 && r->rc != -1)
            abort();
    } else if (r->rc == 1 && http1_parser_eof(&p, NULL) != 1) {
        abort(); /* complete stays complete */
    }
    if ((r->rc == -1) != (r->err != NULL))
        abort();
    if (r->err && (strchr(r->err, '\n') || strlen(r->err) > 200))
        abort();
    if (r->rc == 1 && (p.code < 200 || p.code > 599))
        abort();
    r->code = p.code;
    r->reusable = r->rc == 1 && http1_parser_reusable(&p);
    http1_parser_free(&p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    size_t chunk = (data[0] & 15) + 1;
    int head = (data[0] & 16) != 0;
    const char *s = (const char *)data + 1;
    size_t len = size - 1;
    struct run a = {0}, b = {0};
    a.cap = b.cap = len;
    a.body = malloc(len + 1);
    b.body = malloc(len + 1);
    if (!a.body || !b.body)
        abort();
    run(&a, s, len, len ? len : 1, head);
    run(&b, s, len, chunk, head);
    if (a.rc != b.rc || a.code != b.code || a.reusable != b.reusable || a.blen != b.blen ||
        memcmp(a.body, b.body, a.blen) || (a.err && strcmp(a.err, b.err)))
        abort();
    if (a.rc == 1 && a.used != b.used)
        abort();
    free(a.body);
    free(b.body);
    free(a.err);
    free(b.err);
    return 0;
}
