/* watch_parse.c - the watch stream parser: newline-delimited JSON events
 * {"type":"ADDED","object":{...}}, fed arbitrary chunks (pure, no I/O). */
#include <stdlib.h>
#include <string.h>

#include "kube/util.h"
#include "kube/watch.h"

#define DEFAULT_MAX_LINE (16u << 20) /* one watch event; etcd caps objects at 1.5 MiB */

static const char *const g_types[] = { "ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR" };

const char *kube_event_type_name(enum kube_event_type t) { return (unsigned)t <= KUBE_EVENT_ERROR ? g_types[t] : "?"; }

void kube_watch_event_clear(struct kube_watch_event *ev)
{
    json_decref(ev->object);
    ev->object = NULL;
    ev->type = KUBE_EVENT_ADDED;
}

int kube_watch_parse_line(const char *line, size_t len, struct kube_watch_event *ev, char **errmsg)
{
    ev->object = NULL;
    while (len > 0 && strchr(" \t\r\n", line[len - 1]))
        len--;
    size_t start = 0;
    while (start < len && strchr(" \t\r\n", line[start]))
        start++;
    if (start == len)
        return 1;
    json_error_t jerr;
    json_t *v = json_loadb(line + start, len - start, 0, &jerr);
    if (!v)
        return kube_set_err(errmsg, "watch event is not JSON (column %d: %s)", jerr.column, jerr.text);
    const char *type = json_string_value(json_object_get(v, "type"));
    json_t *obj = json_object_get(v, "object");
    int t = -1;
    for (int i = 0; type && i <= KUBE_EVENT_ERROR; i++)
        if (!strcmp(type, g_types[i]))
            t = i;
    if (!json_is_object(v) || !type || t < 0 || !json_is_object(obj)) {
        kube_set_err(errmsg, "watch event: %s",
                     !json_is_object(v) ? "not a JSON object"
                     : !type            ? "missing \"type\" string"
                     : t < 0            ? "unknown \"type\""
                                        : "\"object\" is not a JSON object");
        json_decref(v);
        return -1;
    }
    ev->type = (enum kube_event_type)t;
    ev->object = json_incref(obj);
    json_decref(v);
    return 0;
}

struct kube_watch_parser {
    char *buf; /* incomplete trailing line */
    size_t len, cap;
    size_t max_line;
};

struct kube_watch_parser *kube_watch_parser_new(size_t max_line)
{
    struct kube_watch_parser *p = calloc(1, sizeof *p);
    if (p)
        p->max_line = max_line ? max_line : DEFAULT_MAX_LINE;
    return p;
}

void kube_watch_parser_free(struct kube_watch_parser *p)
{
    if (!p)
        return;
    free(p->buf);
    free(p);
}

size_t kube_watch_parser_pending(const struct kube_watch_parser *p)
{
    size_t n = p->len;
    /* whitespace-only leftovers are not a truncated event */
    while (n > 0 && strchr(" \t\r\n", p->buf[n - 1]))
        n--;
    return n;
}

static int hold(struct kube_watch_parser *p, const char *data, size_t n, char **errmsg)
{
    if (p->len + n > p->max_line)
        return kube_set_err(errmsg, "watch event longer than %zu bytes", p->max_line);
    if (p->len + n > p->cap) {
        size_t ncap = p->cap ? p->cap : 4096;
        while (ncap < p->len + n)
            ncap *= 2;
        char *nb = realloc(p->buf, ncap);
        if (!nb)
            return kube_set_err(errmsg, "out of memory buffering a watch event");
        p->buf = nb;
        p->cap = ncap;
    }
    memcpy(p->buf + p->len, data, n);
    p->len += n;
    return 0;
}

static int emit(const char *line, size_t n, kube_watch_cb cb, void *ud, char **errmsg)
{
    struct kube_watch_event ev = { 0 };
    int r = kube_watch_parse_line(line, n, &ev, errmsg);
    if (r < 0)
        return -1;
    if (r == 1)
        return 0;
    int stop = cb ? cb(&ev, ud) : 0;
    kube_watch_event_clear(&ev);
    return stop ? 1 : 0;
}

int kube_watch_parser_feed(struct kube_watch_parser *p, const char *data, size_t len, kube_watch_cb cb, void *ud,
                           char **errmsg)
{
    while (len > 0) {
        const char *nl = memchr(data, '\n', len);
        if (!nl)
            return hold(p, data, len, errmsg);
        size_t n = (size_t)(nl - data);
        int r;
        if (p->len) {
            if (hold(p, data, n, errmsg))
                return -1;
            size_t total = p->len;
            p->len = 0; /* the bytes stay valid until the next hold */
            r = emit(p->buf, total, cb, ud, errmsg);
        } else {
            if (n > p->max_line)
                return kube_set_err(errmsg, "watch event longer than %zu bytes", p->max_line);
            r = emit(data, n, cb, ud, errmsg);
        }
        data += n + 1;
        len -= n + 1;
        if (r)
            return r;
    }
    return 0;
}
