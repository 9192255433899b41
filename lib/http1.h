/* http1.h - (library-internal) the API client's own HTTP/1.1: a response parser (a state
 * machine fed arbitrary chunks: status line, headers, Content-Length / chunked /
 * close-delimited bodies, with strict bounds) in http1_parse.c, and one request/response
 * over a kube_conn with a deadline and cancel tokens in http1.c. No proxies, no
 * compression, no pipelining, no 1xx handling beyond skipping interim replies. */
#ifndef KUBE_HTTP1_H
#define KUBE_HTTP1_H

#include <stddef.h>
#include <stdint.h>

#include "kube/cancel.h"
#include "kube/config.h"

#define HTTP1_HEAD_MAX (64 * 1024)  /* status line + header fields (and the chunked trailer) */
#define HTTP1_LINE_MAX (16 * 1024)  /* one header line */
#define HTTP1_CHUNK_LINE_MAX 4096   /* one chunk-size line, extensions included */

/* Receives body bytes (chunk framing removed); nonzero stops the parse (feed returns -2). */
typedef int (*http1_body_cb)(const char *data, size_t len, void *ud);

struct http1_parser {
    int state;
    int head_only;           /* a reply to HEAD: no body whatever the headers say */
    int code;                /* status code, once the status line is parsed (else 0) */
    int minor;               /* HTTP/1.<minor> */
    long long content_length; /* -1: none */
    int chunked;             /* Transfer-Encoding: chunked */
    int close;               /* the connection cannot carry another request */
    int keep_alive;          /* Connection: keep-alive (matters for HTTP/1.0) */
    long retry_after;        /* Retry-After in seconds, -1 none */
    unsigned long long left; /* bytes left of the Content-Length body or of this chunk */
    size_t head_bytes;       /* header section (or trailer) bytes so far */
    char *line;              /* the line being assembled */
    size_t llen, lcap;
};

/* Initialises p (any contents) for one response (head_only: the request was HEAD); free with
 * http1_parser_free. */
void http1_parser_init(struct http1_parser *p, int head_only);
/* Feeds len bytes. Returns 1 when the response is complete (*used: bytes that belonged to it;
 * the rest belong to no reply), 0 when it needs more, -1 malformed (*errmsg: one line),
 * -2 when cb asked to stop. */
int http1_parser_feed(struct http1_parser *p, const char *data, size_t len, size_t *used, http1_body_cb cb,
                      void *ud, char **errmsg);
/* The peer closed the connection: 1 when that ends the response (a close-delimited body),
 * -1 with *errmsg naming where the reply was cut otherwise. */
int http1_parser_eof(struct http1_parser *p, char **errmsg);
/* 1 once the status line and headers are parsed (code and framing known). */
int http1_parser_have_head(const struct http1_parser *p);
/* 1 when the connection may carry another request after this complete response. */
int http1_parser_reusable(const struct http1_parser *p);
/* Frees the parser's line buffer (p itself is the caller's). */
void http1_parser_free(struct http1_parser *p);

struct kube_conn;

/* One request/response. The request head is built by http1_request_head. */
struct http1_call {
    const char *head;        /* request line + headers + CRLF CRLF */
    size_t head_len;
    const char *body;        /* may be NULL */
    size_t body_len;
    int head_only;           /* HEAD request */
    int64_t deadline;        /* monotonic ms bounding the whole exchange; 0 = none (watch) */
    struct kube_cancel *c1, *c2; /* either stops it (may be NULL) */
    http1_body_cb on_body;
    void *ud;
    struct http1_parser p;   /* out: the reply's status and headers */
    int got_bytes;           /* out: some reply bytes arrived */
    int sent;                /* out: the whole request was written */
};

enum http1_outcome {
    HTTP1_OK = 0,       /* complete reply in call->p */
    HTTP1_BROKEN,       /* send/recv failed or the peer closed early; see got_bytes */
    HTTP1_TIMEOUT,
    HTTP1_CANCELLED,
    HTTP1_MALFORMED,    /* the reply is not HTTP/1.x */
    HTTP1_STOPPED,      /* on_body asked to stop */
};

/* Runs one exchange over k. Returns an http1_outcome; all but HTTP1_OK and HTTP1_STOPPED set
 * *errmsg (one line, without the URL). The caller frees call->p with http1_parser_free. */
int http1_exchange(struct kube_conn *k, struct http1_call *call, char **errmsg);
/* Builds the request head for method target (path + query, with the server's path prefix):
 * Host, User-Agent, Accept, bearer token (re-read per kube_config_token), Content-Type and
 * Content-Length when has_body. NULL with *errmsg (token file unreadable, out of memory). */
char *http1_request_head(const struct kube_config *cfg, const char *method, const char *target,
                         const char *user_agent, const char *content_type, int has_body, size_t body_len,
                         char **errmsg);
/* Wipes and frees a request head (it holds the token). */
void http1_head_free(char *head);
/* 1 when k has nothing unread and is still open (a pooled connection the server has not
 * closed), 0 when it must be discarded. */
int http1_conn_idle_ok(struct kube_conn *k);

#endif
