/* http1_parse.c - the HTTP/1.x response parser of the API client: a state machine fed
 * arbitrary chunks (any split), so the same code serves buffered replies and watch
 * streams. Strict: a bounded status line and header section, token header names, no
 * obsolete line folding, one Content-Length (digits only), Transfer-Encoding chunked
 * only, chunk sizes of at most 15 hex digits, a CRLF after each chunk; interim 1xx replies
 * are skipped. Bare LF line ends are accepted. Every rejection is one line. */
#include "http1.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "kube/backoff.h"
#include "kube/util.h"

enum {
    S_STATUS,
    S_HEADER,
    S_BODY_LEN,
    S_CHUNK_SIZE,
    S_CHUNK_DATA,
    S_CHUNK_END,
    S_TRAILER,
    S_BODY_EOF,
    S_DONE,
    S_ERROR,
};

void http1_parser_init(struct http1_parser *p, int head_only)
{
    memset(p, 0, sizeof *p);
    p->state = S_STATUS;
    p->head_only = head_only;
    p->content_length = -1;
    p->retry_after = -1;
}

void http1_parser_free(struct http1_parser *p)
{
    free(p->line);
    p->line = NULL;
    p->lcap = p->llen = 0;
}

int http1_parser_have_head(const struct http1_parser *p)
{
    return p->state != S_STATUS && p->state != S_HEADER && p->state != S_ERROR;
}

int http1_parser_reusable(const struct http1_parser *p) { return p->state == S_DONE && !p->close; }

/* Copies up to 40 bytes of s (up to a CR or LF) into buf for a message, other non-printable
 * bytes as '?'. */
static const char *shown(char *buf, size_t n, const char *s, size_t len)
{
    size_t k = 0;
    for (size_t i = 0; i < len; i++) /* up to the line end */
        if (s[i] == '\r' || s[i] == '\n') {
            len = i;
            break;
        }
    for (; k < len && k < 40 && k + 4 < n; k++)
        buf[k] = s[k] >= 0x20 && s[k] < 0x7f ? s[k] : '?';
    if (k < len && k + 4 < n) {
        memcpy(buf + k, "...", 3);
        k += 3;
    }
    buf[k] = '\0';
    return buf;
}

static int fail(struct http1_parser *p, char **errmsg, const char *what, const char *s, size_t len)
{
    char b[64];
    if (s)
        kube_set_err(errmsg, "%s: \"%s\"", what, shown(b, sizeof b, s, len));
    else
        kube_set_err(errmsg, "%s", what);
    p->state = S_ERROR;
    return -1;
}

static int is_tchar(unsigned char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* 1 when every byte is allowed in a field value or reason phrase (HTAB, SP, VCHAR, obs-text). */
static int text_ok(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if ((c < 0x20 && c != '\t') || c == 0x7f)
            return 0;
    }
    return 1;
}

/* "HTTP/1.x SSS[ reason]" */
static int status_line(struct http1_parser *p, const char *l, size_t n, char **errmsg)
{
    if (n < 12 || strncmp(l, "HTTP/1.", 7) || (l[7] != '0' && l[7] != '1') || l[8] != ' ' || l[9] < '1' ||
        l[9] > '5' || l[10] < '0' || l[10] > '9' || l[11] < '0' || l[11] > '9' || (n > 12 && l[12] != ' ') ||
        !text_ok(l, n))
        return fail(p, errmsg, "malformed status line", l, n);
    p->minor = l[7] - '0';
    p->code = (l[9] - '0') * 100 + (l[10] - '0') * 10 + (l[11] - '0');
    if (p->code == 101)
        return fail(p, errmsg, "unexpected 101 Switching Protocols (no upgrade was asked for)", NULL, 0);
    p->state = S_HEADER;
    return 0;
}

/* Trims optional whitespace around [*s, *s + *n). */
static void trim(const char **s, size_t *n)
{
    while (*n && (**s == ' ' || **s == '\t'))
        (*s)++, (*n)--;
    while (*n && ((*s)[*n - 1] == ' ' || (*s)[*n - 1] == '\t'))
        (*n)--;
}

static int content_length(struct http1_parser *p, const char *v, size_t n, char **errmsg)
{
    long long x = 0;
    if (n == 0 || n > 18)
        return fail(p, errmsg, "bad Content-Length", v, n);
    for (size_t i = 0; i < n; i++) {
        if (v[i] < '0' || v[i] > '9')
            return fail(p, errmsg, "bad Content-Length", v, n);
        x = x * 10 + (v[i] - '0');
    }
    if (p->content_length >= 0 && p->content_length != x)
        return fail(p, errmsg, "conflicting Content-Length headers", v, n);
    p->content_length = x;
    return 0;
}

/* The Connection header's tokens: close, keep-alive (others ignored). */
static void connection(struct http1_parser *p, const char *v, size_t n)
{
    while (n) {
        size_t k = 0;
        while (k < n && v[k] != ',')
            k++;
        const char *t = v;
        size_t tn = k;
        trim(&t, &tn);
        if (tn == 5 && !strncasecmp(t, "close", 5))
            p->close = 1;
        else if (tn == 10 && !strncasecmp(t, "keep-alive", 10))
            p->keep_alive = 1;
        v += k < n ? k + 1 : k;
        n -= k < n ? k + 1 : k;
    }
}

/* One "name: value" line; the line buffer is writable (l[n] is the NUL). */
static int header_line(struct http1_parser *p, char *l, size_t n, int trailer, char **errmsg)
{
    if (l[0] == ' ' || l[0] == '\t')
        return fail(p, errmsg, "obsolete header line folding", l, n);
    char *colon = memchr(l, ':', n);
    if (!colon || colon == l)
        return fail(p, errmsg, "header line without a name", l, n);
    for (char *c = l; c < colon; c++)
        if (!is_tchar((unsigned char)*c))
            return fail(p, errmsg, "bad header name", l, (size_t)(colon - l));
    const char *v = colon + 1;
    size_t vn = n - (size_t)(v - l), nn = (size_t)(colon - l);
    if (!text_ok(v, vn))
        return fail(p, errmsg, "control character in header value", l, n);
    trim(&v, &vn);
    if (trailer)
        return 0; /* trailer fields are parsed, not used */
    if (nn == 14 && !strncasecmp(l, "Content-Length", nn))
        return content_length(p, v, vn, errmsg);
    if (nn == 17 && !strncasecmp(l, "Transfer-Encoding", nn)) {
        if (p->chunked || vn != 7 || strncasecmp(v, "chunked", 7))
            return fail(p, errmsg, "unsupported Transfer-Encoding", v, vn);
        p->chunked = 1;
    } else if (nn == 10 && !strncasecmp(l, "Connection", nn)) {
        connection(p, v, vn);
    } else if (nn == 11 && !strncasecmp(l, "Retry-After", nn)) {
        ((char *)v)[vn] = '\0';
        p->retry_after = kube_parse_retry_after(v);
    }
    return 0;
}

/* The empty line after the headers: picks the body framing. */
static int end_of_head(struct http1_parser *p)
{
    if (p->code < 200) { /* interim reply (100 Continue, 103...): the real one follows */
        int head_only = p->head_only;
        size_t hb = p->head_bytes, lcap = p->lcap;
        char *line = p->line;
        http1_parser_init(p, head_only);
        p->head_bytes = hb; /* the cap covers every interim reply too */
        p->line = line;
        p->lcap = lcap;
        return 0;
    }
    if (p->minor == 0 && !p->keep_alive)
        p->close = 1;
    if (p->head_only || p->code == 204 || p->code == 304) {
        p->state = S_DONE;
    } else if (p->chunked) {
        if (p->content_length >= 0)
            p->close = 1; /* chunked wins (RFC 9112 6.3), but the framing was ambiguous */
        p->state = S_CHUNK_SIZE;
    } else if (p->content_length >= 0) {
        p->left = (unsigned long long)p->content_length;
        p->state = p->left ? S_BODY_LEN : S_DONE;
    } else {
        p->close = 1;
        p->state = S_BODY_EOF;
    }
    return 0;
}

/* "1*HEXDIG [BWS ; ext...]" */
static int chunk_size(struct http1_parser *p, const char *l, size_t n, char **errmsg)
{
    size_t i = 0;
    unsigned long long x = 0;
    for (; i < n; i++) {
        char c = l[i];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (d < 0)
            break;
        if (i >= 15)
            return fail(p, errmsg, "chunk size too large", l, n);
        x = x * 16 + (unsigned)d;
    }
    if (i == 0)
        return fail(p, errmsg, "malformed chunk size", l, n);
    while (i < n && (l[i] == ' ' || l[i] == '\t'))
        i++;
    if ((i < n && l[i] != ';') || !text_ok(l, n))
        return fail(p, errmsg, "malformed chunk size", l, n);
    p->left = x;
    if (x == 0) {
        p->head_bytes = 0;
        p->state = S_TRAILER;
    } else {
        p->state = S_CHUNK_DATA;
    }
    return 0;
}

/* A complete line (CR LF or LF stripped, NUL-terminated in the buffer). */
static int line_done(struct http1_parser *p, char **errmsg)
{
    char *l = p->line;
    size_t n = p->llen;
    switch (p->state) {
    case S_STATUS:
        return status_line(p, l, n, errmsg);
    case S_HEADER:
        return n == 0 ? end_of_head(p) : header_line(p, l, n, 0, errmsg);
    case S_CHUNK_SIZE:
        return chunk_size(p, l, n, errmsg);
    case S_CHUNK_END:
        if (n)
            return fail(p, errmsg, "chunk data not followed by CRLF", l, n);
        p->state = S_CHUNK_SIZE;
        return 0;
    case S_TRAILER:
        if (n == 0) {
            p->state = S_DONE;
            return 0;
        }
        return header_line(p, l, n, 1, errmsg);
    default:
        return fail(p, errmsg, "internal error: line in a body state", NULL, 0);
    }
}

static size_t line_max(int state)
{
    return state == S_CHUNK_SIZE ? HTTP1_CHUNK_LINE_MAX : state == S_CHUNK_END ? 0 : HTTP1_LINE_MAX;
}

/* Appends up to the next LF to the line; 1 when the line is complete, 0 needs more, -1 error. */
static int take_line(struct http1_parser *p, const char *d, size_t len, size_t *took, char **errmsg)
{
    const char *nl = memchr(d, '\n', len);
    size_t take = nl ? (size_t)(nl - d) + 1 : len;
    *took = take;
    int counted = p->state == S_STATUS || p->state == S_HEADER || p->state == S_TRAILER;
    if (counted && (p->head_bytes += take) > HTTP1_HEAD_MAX)
        return fail(p, errmsg, p->state == S_TRAILER ? "chunked trailer larger than 64 KiB"
                                                     : "reply header larger than 64 KiB", NULL, 0);
    if (p->llen + take > line_max(p->state) + 2) { /* + CR LF */
        const char *what = p->state == S_CHUNK_SIZE ? "chunk-size line too long"
                           : p->state == S_CHUNK_END ? "chunk data not followed by CRLF"
                                                     : "reply header line longer than 16 KiB";
        char start[48]; /* the line's first bytes, however they arrived */
        size_t a = p->llen < 44 ? p->llen : 44, b = take < 44 - a ? take : 44 - a;
        memcpy(start, p->line ? p->line : "", a);
        memcpy(start + a, d, b);
        size_t n = a + b < line_max(p->state) + 2 ? a + b : line_max(p->state) + 2; /* same for any split */
        return fail(p, errmsg, what, start, n);
    }
    if (p->llen + take + 1 > p->lcap) {
        size_t ncap = p->lcap ? p->lcap : 256;
        while (ncap < p->llen + take + 1)
            ncap *= 2;
        char *nb = realloc(p->line, ncap);
        if (!nb)
            return fail(p, errmsg, "out of memory", NULL, 0);
        p->line = nb;
        p->lcap = ncap;
    }
    memcpy(p->line + p->llen, d, take);
    p->llen += take;
    p->line[p->llen] = '\0';
    if (!nl)
        return 0;
    p->line[--p->llen] = '\0';
    if (p->llen && p->line[p->llen - 1] == '\r')
        p->line[--p->llen] = '\0';
    return 1;
}

/* Body bytes of a Content-Length body, a chunk, or a close-delimited body. */
static int body_bytes(struct http1_parser *p, const char *d, size_t len, size_t *took, http1_body_cb cb, void *ud)
{
    size_t n = len;
    if (p->state != S_BODY_EOF && p->left < n)
        n = (size_t)p->left;
    *took = n;
    if (p->state != S_BODY_EOF) {
        p->left -= n;
        if (!p->left)
            p->state = p->state == S_BODY_LEN ? S_DONE : S_CHUNK_END;
    }
    return n && cb && cb(d, n, ud) ? -2 : 0;
}

int http1_parser_feed(struct http1_parser *p, const char *data, size_t len, size_t *used, http1_body_cb cb,
                      void *ud, char **errmsg)
{
    size_t i = 0;
    *used = 0;
    if (p->state == S_ERROR)
        return fail(p, errmsg, "reply parser already failed", NULL, 0);
    while (i < len && p->state != S_DONE) {
        size_t took = 0;
        int r;
        if (p->state == S_BODY_LEN || p->state == S_CHUNK_DATA || p->state == S_BODY_EOF) {
            r = body_bytes(p, data + i, len - i, &took, cb, ud);
            i += took;
            if (r) {
                *used = i;
                return r;
            }
            continue;
        }
        r = take_line(p, data + i, len - i, &took, errmsg);
        i += took;
        if (r < 0)
            return -1;
        if (r == 1) {
            r = line_done(p, errmsg);
            p->llen = 0;
            if (r < 0)
                return -1;
        }
    }
    *used = i;
    return p->state == S_DONE ? 1 : 0;
}

int http1_parser_eof(struct http1_parser *p, char **errmsg)
{
    char b[96];
    switch (p->state) {
    case S_BODY_EOF:
        p->state = S_DONE;
        return 1;
    case S_DONE:
        return 1;
    case S_STATUS:
        return fail(p, errmsg, p->head_bytes || p->llen ? "connection closed inside the status line"
                                                        : "connection closed before the reply", NULL, 0);
    case S_HEADER:
        return fail(p, errmsg, "connection closed inside the reply header", NULL, 0);
    case S_BODY_LEN:
        snprintf(b, sizeof b, "connection closed %llu bytes before the end of the body (Content-Length %lld)",
                 p->left, p->content_length);
        return fail(p, errmsg, b, NULL, 0);
    case S_ERROR:
        return fail(p, errmsg, "reply parser already failed", NULL, 0);
    default:
        return fail(p, errmsg, "connection closed inside the chunked body", NULL, 0);
    }
}
