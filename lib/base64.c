/* base64.c - base64 encoding and decoding (lenient for Kubernetes' -data fields, strict for
 * OpenSSH key lines), over OpenSSL's EVP_EncodeBlock/EVP_DecodeBlock. */
#include "kube/base64.h"

#include <limits.h>
#include <openssl/evp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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
