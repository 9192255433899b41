/* url.c - URLs: percent-encoding, the query-string builder, and splitting a server URL
 * (scheme, host, port, path prefix) for the connections that do not go through libcurl. */
#include "kube/url.h"
#include "kube/parse_int.h"
#include "url_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int unreserved(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' ||
           c == '~';
}

char *kube_url_escape(const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    if (!s)
        return NULL;
    size_t n = strlen(s);
    char *out = malloc(n * 3 + 1);
    if (!out)
        return NULL;
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (unreserved(c)) {
            out[o++] = (char)c;
        } else {
            out[o++] = '%';
            out[o++] = hex[c >> 4];
            out[o++] = hex[c & 15];
        }
    }
    out[o] = '\0';
    return out;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

char *kube_url_unescape(const char *s, int plus_is_space)
{
    if (!s)
        return NULL;
    size_t n = strlen(s), o = 0;
    char *out = malloc(n + 1);
    if (!out)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '%') {
            int a = i + 1 < n ? hexval(s[i + 1]) : -1;
            int b = i + 2 < n ? hexval(s[i + 2]) : -1;
            if (a < 0 || b < 0) {
                free(out);
                return NULL;
            }
            out[o++] = (char)(a * 16 + b);
            i += 2;
        } else if (s[i] == '+' && plus_is_space) {
            out[o++] = ' ';
        } else {
            out[o++] = s[i];
        }
    }
    out[o] = '\0';
    return out;
}

struct kube_query {
    char *buf;
    size_t len, cap;
};

struct kube_query *kube_query_new(void)
{
    struct kube_query *q = calloc(1, sizeof *q);
    if (!q)
        return NULL;
    q->buf = malloc(64);
    if (!q->buf) {
        free(q);
        return NULL;
    }
    q->cap = 64;
    q->buf[0] = '\0';
    return q;
}

static int append(struct kube_query *q, const char *s)
{
    size_t n = strlen(s);
    if (q->len + n + 1 > q->cap) {
        size_t ncap = q->cap;
        while (q->len + n + 1 > ncap)
            ncap *= 2;
        char *nb = realloc(q->buf, ncap);
        if (!nb)
            return -1;
        q->buf = nb;
        q->cap = ncap;
    }
    memcpy(q->buf + q->len, s, n + 1);
    q->len += n;
    return 0;
}

int kube_query_add(struct kube_query *q, const char *key, const char *value)
{
    if (!q || !key)
        return -1;
    if (!value)
        return 0;
    char *k = kube_url_escape(key), *v = kube_url_escape(value);
    int rc = -1;
    if (k && v && (q->len == 0 || append(q, "&") == 0) && append(q, k) == 0 && append(q, "=") == 0 && append(q, v) == 0)
        rc = 0;
    free(k);
    free(v);
    return rc;
}

int kube_query_add_int(struct kube_query *q, const char *key, long long n)
{
    char num[32];
    snprintf(num, sizeof num, "%lld", n);
    return kube_query_add(q, key, num);
}

const char *kube_query_str(const struct kube_query *q) { return q ? q->buf : ""; }

void kube_query_free(struct kube_query *q)
{
    if (!q)
        return;
    free(q->buf);
    free(q);
}

int kube_query_add_list_opts(struct kube_query *q, const struct kube_list_opts *o)
{
    if (!o)
        return 0;
    if ((o->label_selector && *o->label_selector && kube_query_add(q, "labelSelector", o->label_selector)) ||
        (o->field_selector && *o->field_selector && kube_query_add(q, "fieldSelector", o->field_selector)) ||
        (o->limit > 0 && kube_query_add_int(q, "limit", o->limit)) ||
        (o->continue_token && *o->continue_token && kube_query_add(q, "continue", o->continue_token)) ||
        (o->resource_version && kube_query_add(q, "resourceVersion", o->resource_version)) ||
        (o->timeout_seconds > 0 && kube_query_add_int(q, "timeoutSeconds", o->timeout_seconds)) ||
        (o->allow_bookmarks && kube_query_add(q, "allowWatchBookmarks", "true")))
        return -1;
    return 0;
}

int Kube_url_split_server(const char *server, char **scheme, char **host, long *port, char **prefix)
{
    *scheme = *host = *prefix = NULL;
    const char *p = server ? strstr(server, "://") : NULL;
    if (!p)
        return -1;
    *scheme = strndup(server, (size_t)(p - server));
    p += 3;
    const char *hend = *p == '[' ? strchr(p, ']') : p + strcspn(p, ":/?#");
    if (!hend)
        goto bad;
    if (*p == '[')
        hend++;
    *host = strndup(p, (size_t)(hend - p));
    *port = *scheme && !strcmp(*scheme, "http") ? 80 : 443;
    if (*hend == ':') {
        size_t digits = strspn(hend + 1, "0123456789");
        long long v;
        if (kube_parse_int_n(hend + 1, digits, 0, 65535, &v) < 0)
            goto bad;
        *port = (long)v;
        hend += 1 + digits;
    }
    size_t pl = strlen(hend);
    while (pl > 0 && hend[pl - 1] == '/')
        pl--;
    *prefix = strndup(hend, pl);
    if (!*scheme || !*host || !**host || !*prefix || *port <= 0 || *port > 65535 || (pl && *hend != '/') ||
        (strcmp(*scheme, "https") && strcmp(*scheme, "http")))
        goto bad;
    return 0;
bad:
    free(*scheme);
    free(*host);
    free(*prefix);
    *scheme = *host = *prefix = NULL;
    return -1;
}
