/* outbuf.c - the bounded ring of the command's last output bytes (see outbuf.h). */
#include "outbuf.h"

#include <stdlib.h>
#include <string.h>

int agent_outbuf_init(struct agent_outbuf *b, size_t cap)
{
    memset(b, 0, sizeof *b);
    b->buf = malloc(cap ? cap : 1);
    if (!b->buf || pthread_mutex_init(&b->mu, NULL) != 0) {
        free(b->buf);
        b->buf = NULL;
        return -1;
    }
    b->cap = cap ? cap : 1;
    return 0;
}

void agent_outbuf_append(struct agent_outbuf *b, const char *p, size_t n)
{
    if (!b->buf)
        return;
    pthread_mutex_lock(&b->mu);
    b->total += n;
    if (n >= b->cap) {
        memcpy(b->buf, p + n - b->cap, b->cap);
        b->len = b->cap, b->head = 0;
    } else {
        size_t end = (b->head + b->len) % b->cap, first = b->cap - end < n ? b->cap - end : n;
        memcpy(b->buf + end, p, first);
        memcpy(b->buf, p + first, n - first);
        size_t over = b->len + n > b->cap ? b->len + n - b->cap : 0;
        b->len += n - over;
        b->head = (b->head + over) % b->cap;
    }
    pthread_mutex_unlock(&b->mu);
}

char *agent_outbuf_copy(struct agent_outbuf *b, size_t *len, uint64_t *total)
{
    if (!b->buf) {
        *len = 0;
        return strdup("");
    }
    pthread_mutex_lock(&b->mu);
    char *out = malloc(b->len + 1);
    if (out) {
        size_t first = b->cap - b->head < b->len ? b->cap - b->head : b->len;
        memcpy(out, b->buf + b->head, first);
        memcpy(out + first, b->buf, b->len - first);
        out[b->len] = '\0';
        *len = b->len;
    }
    if (total)
        *total = b->total;
    pthread_mutex_unlock(&b->mu);
    return out;
}

void agent_outbuf_free(struct agent_outbuf *b)
{
    if (!b->buf)
        return;
    free(b->buf);
    b->buf = NULL;
    pthread_mutex_destroy(&b->mu);
}
