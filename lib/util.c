/* util.c - formatted allocation, the error setter, clocks, RFC 3339 times, file reads,
 * whole writes, base64. */
#include "kube/util.h"

#include <errno.h>
#include <limits.h>
#include <openssl/evp.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char *kube_strdup_printf(const char *fmt, ...)
{
    va_list ap;
    char *s = NULL;
    va_start(ap, fmt);
    int n = vasprintf(&s, fmt, ap);
    va_end(ap);
    return n < 0 ? NULL : s;
}

const char *kube_excerpt(const char *s, char *buf, size_t bufsz)
{
    size_t n = 0;
    for (; s && s[n] && n + 1 < bufsz; n++)
        buf[n] = ((unsigned char)s[n] < 0x20 || s[n] == 0x7f) ? '?' : s[n];
    if (s && s[n] && bufsz >= 4)
        memcpy(buf + bufsz - 4, "...", 3), n = bufsz - 1;
    buf[n] = '\0';
    return buf;
}

int kube_set_err(char **errmsg, const char *fmt, ...)
{
    if (!errmsg)
        return -1;
    va_list ap;
    char *s = NULL;
    va_start(ap, fmt);
    int n = vasprintf(&s, fmt, ap);
    va_end(ap);
    free(*errmsg);
    *errmsg = n < 0 ? NULL : s;
    return -1;
}

int64_t kube_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t kube_realtime_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

char *kube_time_format(int64_t epoch_ms, char *buf, size_t bufsz)
{
    kube_time_format_ms(epoch_ms, buf, bufsz);
    char *dot = strrchr(buf, '.');
    if (dot)
        memcpy(dot, "Z", 2); /* "...:02.123Z" -> "...:02Z" */
    return buf;
}

char *kube_time_format_ms(int64_t epoch_ms, char *buf, size_t bufsz)
{
    time_t secs = (time_t)(epoch_ms / 1000);
    int ms = (int)(epoch_ms % 1000);
    if (ms < 0) {
        ms += 1000;
        secs -= 1;
    }
    struct tm tm;
    if (!gmtime_r(&secs, &tm)) {
        snprintf(buf, bufsz, "?");
        return buf;
    }
    snprintf(buf, bufsz, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
             tm.tm_min, tm.tm_sec, ms);
    return buf;
}

int kube_parse_int_n(const char *s, size_t len, long long lo, long long hi, long long *out)
{
    int neg = s && len > 0 && s[0] == '-' && lo < 0;
    unsigned long long v = 0, lim = neg ? (unsigned long long)LLONG_MAX + 1 : (unsigned long long)LLONG_MAX;
    if (!s || len <= (size_t)neg)
        return -1;
    for (size_t i = (size_t)neg; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        unsigned d = (unsigned)(s[i] - '0');
        if (v > (lim - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    long long x = !neg ? (long long)v : v > (unsigned long long)LLONG_MAX ? LLONG_MIN : -(long long)v;
    if (x < lo || x > hi)
        return -1;
    *out = x;
    return 0;
}

int kube_parse_int(const char *s, long long lo, long long hi, long long *out)
{
    return kube_parse_int_n(s, s ? strlen(s) : 0, lo, hi, out);
}

/* n digits at *p (a field of an RFC 3339 time), advancing *p. */
static int parse_digits(const char **p, int n, int *out)
{
    long long v;
    if (kube_parse_int_n(*p, (size_t)n, 0, LLONG_MAX, &v) < 0)
        return -1;
    *p += n;
    *out = (int)v;
    return 0;
}

static int expect(const char **p, char c)
{
    if (**p != c && !(c == 'T' && (**p == 't' || **p == ' ')))
        return -1;
    (*p)++;
    return 0;
}

int kube_time_parse_ms(const char *s, int64_t *epoch_ms)
{
    if (!s)
        return -1;
    const char *p = s;
    int Y, M, D, h, m, sec, ms = 0;
    if (parse_digits(&p, 4, &Y) || expect(&p, '-') || parse_digits(&p, 2, &M) || expect(&p, '-') ||
        parse_digits(&p, 2, &D) || expect(&p, 'T') || parse_digits(&p, 2, &h) || expect(&p, ':') ||
        parse_digits(&p, 2, &m) || expect(&p, ':') || parse_digits(&p, 2, &sec))
        return -1;
    if (*p == '.') {
        p++;
        int nd = 0;
        while (*p >= '0' && *p <= '9') {
            if (nd < 3)
                ms = ms * 10 + (*p - '0');
            nd++;
            p++;
        }
        if (nd == 0)
            return -1;
        for (int i = nd; i < 3; i++)
            ms *= 10;
    }
    int off_min = 0;
    if (*p == 'Z' || *p == 'z') {
        p++;
    } else if (*p == '+' || *p == '-') {
        int sign = *p == '-' ? -1 : 1, oh, om;
        p++;
        if (parse_digits(&p, 2, &oh) || expect(&p, ':') || parse_digits(&p, 2, &om))
            return -1;
        off_min = sign * (oh * 60 + om);
    } else {
        return -1;
    }
    if (*p || M < 1 || M > 12 || D < 1 || D > 31 || h > 23 || m > 59 || sec > 60)
        return -1;
    struct tm tm = { 0 };
    tm.tm_year = Y - 1900;
    tm.tm_mon = M - 1;
    tm.tm_mday = D;
    tm.tm_hour = h;
    tm.tm_min = m;
    tm.tm_sec = sec;
    time_t t = timegm(&tm);
    *epoch_ms = ((int64_t)t - (int64_t)off_min * 60) * 1000 + ms;
    return 0;
}

int kube_read_file(const char *path, size_t max_len, char **out, size_t *len, char **errmsg)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return kube_set_err(errmsg, "%s: %s", path, strerror(errno));
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap + 1);
    if (!buf) {
        close(fd);
        return kube_set_err(errmsg, "%s: out of memory", path);
    }
    for (;;) {
        if (n == cap) {
            if (cap >= max_len) {
                kube_set_err(errmsg, "%s: larger than %zu bytes", path, max_len);
                goto fail;
            }
            size_t ncap = cap * 2 > max_len ? max_len : cap * 2;
            char *nb = realloc(buf, ncap + 1);
            if (!nb) {
                kube_set_err(errmsg, "%s: out of memory", path);
                goto fail;
            }
            buf = nb;
            cap = ncap;
        }
        ssize_t r = read(fd, buf + n, cap - n);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            kube_set_err(errmsg, "%s: %s", path, strerror(errno));
            goto fail;
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    close(fd);
    buf[n] = '\0';
    *out = buf;
    if (len)
        *len = n;
    return 0;
fail:
    close(fd);
    free(buf);
    return -1;
}

#define WRITE_CHUNK 4096 /* PIPE_BUF: a pipe that polls writable takes this much without blocking */

int kube_write_all_cancel(int fd, int cancel_fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len > 0) {
        struct pollfd pf[2] = { { .fd = fd, .events = POLLOUT }, { .fd = cancel_fd, .events = POLLIN } };
        int r = poll(pf, cancel_fd > 0 ? 2 : 1, 1000);
        if (r < 0 && errno != EINTR)
            return -1;
        if (cancel_fd > 0 && (pf[1].revents & POLLIN))
            return -2;
        if (r <= 0)
            continue;
        if (pf[0].revents & (POLLERR | POLLNVAL)) {
            errno = (pf[0].revents & POLLNVAL) ? EBADF : EPIPE;
            return -1;
        }
        ssize_t w = write(fd, p, len < WRITE_CHUNK ? len : WRITE_CHUNK);
        if (w < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (w <= 0) {
            if (w == 0)
                errno = EIO;
            return -1;
        }
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

int kube_write_all(int fd, const void *buf, size_t len) { return kube_write_all_cancel(fd, 0, buf, len); }

size_t kube_base64_encode_to(char *out, const void *in, size_t len)
{
    const unsigned char *s = in;
    size_t o = 0;
    while (len > 0) { /* EVP_EncodeBlock takes an int: whole 3-byte groups a call */
        size_t n = len > 3u << 20 ? 3u << 20 : len;
        o += (size_t)EVP_EncodeBlock((unsigned char *)out + o, s, (int)n);
        s += n;
        len -= n;
    }
    out[o] = '\0';
    return o;
}

char *kube_base64_encode(const void *in, size_t len)
{
    if (len > SIZE_MAX / 4 - 3)
        return NULL;
    char *out = malloc((len + 2) / 3 * 4 + 1);
    if (out)
        kube_base64_encode_to(out, in, len);
    return out;
}

/* Decodes n characters of padded standard base64 (n a multiple of 4, '=' only at the end) with
 * EVP_DecodeBlock, which decodes each '=' as zero bits: those bytes are dropped from *out_len
 * but stay in the buffer, where *canonical checks the unused bits of the last character. */
static int decode_blocks(const char *in, size_t n, unsigned char **out, size_t *out_len, int *canonical)
{
    size_t pad = n >= 1 && in[n - 1] == '=' ? 1 + (n >= 2 && in[n - 2] == '=') : 0;
    if (n % 4 || n > INT_MAX || memchr(in, '=', n - pad))
        return -1;
    unsigned char *buf = malloc(n / 4 * 3 + 1);
    if (!buf)
        return -1;
    int got = n ? EVP_DecodeBlock(buf, (const unsigned char *)in, (int)n) : 0;
    if (got < 0 || (size_t)got < pad) {
        free(buf);
        return -1;
    }
    *out_len = (size_t)got - pad;
    *canonical = pad == 0 || (buf[*out_len] == 0 && buf[got - 1] == 0);
    buf[*out_len] = '\0';
    *out = buf;
    return 0;
}

int kube_base64_decode_strict(const char *in, size_t in_len, unsigned char **out, size_t *out_len)
{
    int canonical;
    if (in_len == 0)
        return -1;
    return decode_blocks(in, in_len, out, out_len, &canonical);
}

int kube_base64_decode(const char *in, size_t in_len, char **out, size_t *out_len)
{
    /* to EVP's grammar: whitespace dropped, URL-safe letters mapped, padding redone */
    char *t = malloc(in_len + 4);
    if (!t)
        return -1;
    size_t n = 0, pad = 0;
    int bad = 0;
    for (size_t i = 0; i < in_len && !bad; i++) {
        char c = in[i];
        if (c == ' ' || c == '\n' || c == '\r' || c == '\t')
            continue;
        if (c == '=') {
            pad++;
            continue;
        }
        bad = pad > 0 || c == '\0';
        t[n++] = c == '-' ? '+' : c == '_' ? '/' : c;
    }
    bad = bad || pad > 2 || n % 4 == 1;
    while (n % 4)
        t[n++] = '=';
    unsigned char *dec = NULL;
    size_t dlen = 0;
    int canonical = 0;
    if (!bad && decode_blocks(t, n, &dec, &dlen, &canonical) == 0 && !canonical) {
        free(dec);
        dec = NULL;
    }
    free(t);
    if (!dec)
        return -1;
    *out = (char *)dec;
    if (out_len)
        *out_len = dlen;
    return 0;
}

void kube_sleep_ms(int64_t ms)
{
    if (ms <= 0)
        return;
    struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {}
}

void kube_strv_free(char **v)
{
    for (size_t i = 0; v && v[i]; i++)
        free(v[i]);
    free(v);
}
