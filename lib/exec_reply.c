/* exec_reply.c - the pure parts of the exec upgrade: building the request target
 * (exec URL) and parsing/validating the server's HTTP/1.1 reply head (status,
 * Upgrade/Connection, Sec-WebSocket-Accept, negotiated subprotocol). */
#include "kube/exec.h"

#include <ctype.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "kube/backoff.h"
#include "kube/resource.h"
#include "kube/url.h"
#include "kube/util.h"

#define MAX_HEAD (64 * 1024)

char *kube_exec_target(const struct kube_exec_opts *o)
{
    if (!o->namespace || !*o->namespace || !o->pod || !*o->pod || !o->command)
        return NULL;
    char *path = kube_resource_path(&KUBE_RES_PODS, o->namespace, o->pod, "exec");
    struct kube_query *q = kube_query_new();
    char *out = NULL;
    int has_in = o->fd_in >= 0;
    if (path && q && kube_query_add(q, "command", "/bin/sh") == 0 && kube_query_add(q, "command", "-c") == 0 &&
        kube_query_add(q, "command", o->command) == 0 &&
        kube_query_add(q, "container", o->container && *o->container ? o->container : NULL) == 0 &&
        kube_query_add(q, "stdin", has_in ? "true" : NULL) == 0 && kube_query_add(q, "stdout", "true") == 0 &&
        kube_query_add(q, "stderr", "true") == 0)
        out = kube_strdup_printf("%s?%s", path, kube_query_str(q));
    free(path);
    kube_query_free(q);
    return out;
}

void kube_exec_reply_free(struct kube_exec_reply *r)
{
    free(r->protocol);
    r->protocol = NULL;
}

/* Returns 1 when the comma-separated list contains token (case-insensitive, trimmed). */
static int list_has(const char *list, const char *token, int ci)
{
    size_t tl = strlen(token);
    const char *p = list;
    while (*p) {
        while (*p == ' ' || *p == '\t' || *p == ',')
            p++;
        const char *e = p;
        while (*e && *e != ',')
            e++;
        const char *end = e;
        while (end > p && (end[-1] == ' ' || end[-1] == '\t'))
            end--;
        if ((size_t)(end - p) == tl && (ci ? strncasecmp(p, token, tl) : strncmp(p, token, tl)) == 0)
            return 1;
        p = e;
    }
    return 0;
}

struct head_fields {
    const char *upgrade, *connection, *accept, *protocol, *clen, *te, *retry;
    size_t upgrade_n, connection_n, accept_n, protocol_n, clen_n, te_n, retry_n;
};

/* Records one "Name: value" line (value trimmed) in f. */
static int header_line(const char *line, size_t n, struct head_fields *f)
{
    const char *colon = memchr(line, ':', n);
    if (!colon || colon == line)
        return -1;
    size_t nl = (size_t)(colon - line);
    const char *v = colon + 1, *e = line + n;
    while (v < e && (*v == ' ' || *v == '\t'))
        v++;
    while (e > v && (e[-1] == ' ' || e[-1] == '\t'))
        e--;
    struct {
        const char *name;
        const char **val;
        size_t *len;
    } map[] = {
        { "upgrade", &f->upgrade, &f->upgrade_n },
        { "connection", &f->connection, &f->connection_n },
        { "sec-websocket-accept", &f->accept, &f->accept_n },
        { "sec-websocket-protocol", &f->protocol, &f->protocol_n },
        { "content-length", &f->clen, &f->clen_n },
        { "transfer-encoding", &f->te, &f->te_n },
        { "retry-after", &f->retry, &f->retry_n },
    };
    for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
        if (strlen(map[i].name) == nl && strncasecmp(line, map[i].name, nl) == 0) {
            *map[i].val = v;
            *map[i].len = (size_t)(e - v);
        }
    }
    return 0;
}

static char *dupn(const char *s, size_t n)
{
    char *o = malloc(n + 1);
    if (!o)
        return NULL;
    memcpy(o, s, n);
    o[n] = 0;
    return o;
}

/* A Content-Length of at most 18 digits; -1 when absent or invalid. */
static long parse_long(const char *s, size_t n)
{
    long long v;
    return n <= 18 && kube_parse_int_n(s, n, 0, LLONG_MAX, &v) == 0 ? (long)v : -1;
}

/* Retry-After as the HTTP path reads it (kube_parse_retry_after: delta-seconds clamped to a
 * day), so a huge value cannot overflow the caller's milliseconds; -1 when absent or invalid. */
static long parse_retry_after(const char *s, size_t n)
{
    if (!s)
        return -1;
    char *v = dupn(s, n);
    if (!v)
        return -1;
    long secs = kube_parse_retry_after(v);
    free(v);
    return secs;
}

/* Checks a 101 against what we asked for. */
static int check_upgrade(const struct head_fields *f, const char *accept, const char *offered, struct kube_exec_reply *r,
                         char **errmsg)
{
    char *up = f->upgrade ? dupn(f->upgrade, f->upgrade_n) : NULL;
    char *conn = f->connection ? dupn(f->connection, f->connection_n) : NULL;
    int ok_up = up && strcasecmp(up, "websocket") == 0, ok_conn = conn && list_has(conn, "upgrade", 1);
    free(up);
    free(conn);
    if (!ok_up)
        return kube_set_err(errmsg, "upgrade reply: 101 without \"Upgrade: websocket\"");
    if (!ok_conn)
        return kube_set_err(errmsg, "upgrade reply: 101 without \"Connection: Upgrade\"");
    if (!f->accept || f->accept_n != strlen(accept) || memcmp(f->accept, accept, f->accept_n) != 0)
        return kube_set_err(errmsg, "upgrade reply: Sec-WebSocket-Accept %s (expected %s)",
                            f->accept ? "does not match the key" : "missing", accept);
    if (!f->protocol || f->protocol_n == 0)
        return kube_set_err(errmsg, "upgrade reply: server selected no subprotocol (offered %s)", offered);
    r->protocol = dupn(f->protocol, f->protocol_n);
    if (!r->protocol)
        return kube_set_err(errmsg, "out of memory");
    if (strchr(r->protocol, ',') || !list_has(offered, r->protocol, 0))
        return kube_set_err(errmsg, "upgrade reply: server selected subprotocol \"%.60s\", which was not offered (%s)",
                            r->protocol, offered);
    return 0;
}

int kube_exec_parse_reply(const char *buf, size_t len, const char *accept, const char *offered, struct kube_exec_reply *r,
                          char **errmsg)
{
    memset(r, 0, sizeof(*r));
    r->content_length = -1;
    r->retry_after_s = -1;
    const char *end = memmem(buf, len, "\r\n\r\n", 4);
    if (!end) {
        if (len > MAX_HEAD)
            return kube_set_err(errmsg, "upgrade reply: header over %d bytes", MAX_HEAD);
        return 0;
    }
    r->head_len = (size_t)(end - buf) + 4;
    const char *eol = memmem(buf, r->head_len, "\r\n", 2);
    if (r->head_len < 16 || strncmp(buf, "HTTP/1.", 7) != 0 || (buf[7] != '0' && buf[7] != '1') || buf[8] != ' ' ||
        !isdigit((unsigned char)buf[9]) || !isdigit((unsigned char)buf[10]) || !isdigit((unsigned char)buf[11]) ||
        (eol - buf > 12 && buf[12] != ' ')) {
        kube_set_err(errmsg, "upgrade reply: not an HTTP/1.x status line: \"%.*s\"", (int)(len < 40 ? len : 40), buf);
        for (char *p = *errmsg; p && *p; p++)
            if (*p == '\r' || *p == '\n')
                *p = ' ';
        return -1;
    }
    r->code = (buf[9] - '0') * 100 + (buf[10] - '0') * 10 + (buf[11] - '0');
    struct head_fields f;
    memset(&f, 0, sizeof(f));
    const char *p = eol + 2;
    while (p < end) {
        const char *le = memmem(p, (size_t)(end + 2 - p), "\r\n", 2);
        if (header_line(p, (size_t)(le - p), &f) < 0) {
            kube_set_err(errmsg, "upgrade reply: malformed header line \"%.*s\"", (int)(le - p < 40 ? le - p : 40), p);
            for (char *q = *errmsg; *q; q++)
                if (*q == '\r' || *q == '\n')
                    *q = ' ';
            return -1;
        }
        p = le + 2;
    }
    r->content_length = parse_long(f.clen, f.clen_n);
    r->retry_after_s = parse_retry_after(f.retry, f.retry_n);
    if (f.te) {
        char *te = dupn(f.te, f.te_n);
        r->chunked = te && list_has(te, "chunked", 1);
        free(te);
    }
    if (r->code == 101 && check_upgrade(&f, accept, offered, r, errmsg) < 0) {
        kube_exec_reply_free(r);
        return -1;
    }
    return 1;
}
