/* ws_encode.c - the client side of RFC 6455 framing: masked frame headers,
 * payload masking, close payloads and codes, and the opening-handshake
 * Sec-WebSocket-Key / Sec-WebSocket-Accept computation. */
#include "kube/ws.h"
#include "kube/util.h"

#include <errno.h>
#include <openssl/evp.h>
#include <string.h>
#include <sys/random.h>

size_t kube_ws_frame_header(uint8_t *out, int fin, int opcode, uint64_t len, const uint8_t key[4])
{
    size_t n = 0;
    out[n++] = (uint8_t)((fin ? 0x80 : 0) | (opcode & 0x0f));
    if (len < 126) {
        out[n++] = (uint8_t)(0x80 | len);
    } else if (len <= 0xffff) {
        out[n++] = 0x80 | 126;
        out[n++] = (uint8_t)(len >> 8);
        out[n++] = (uint8_t)len;
    } else {
        out[n++] = 0x80 | 127;
        for (int i = 7; i >= 0; i--)
            out[n++] = (uint8_t)(len >> (8 * i));
    }
    memcpy(out + n, key, 4);
    return n + 4;
}

void kube_ws_mask(uint8_t *buf, size_t len, const uint8_t key[4], size_t offset)
{
    size_t i = 0;
    uint8_t k[4];
    for (int j = 0; j < 4; j++)
        k[j] = key[(offset + j) & 3];
    /* word at a time for the bulk, bytes for the tail */
    uint32_t kw;
    memcpy(&kw, k, 4);
    for (; i + 4 <= len; i += 4) {
        uint32_t w;
        memcpy(&w, buf + i, 4);
        w ^= kw;
        memcpy(buf + i, &w, 4);
    }
    for (; i < len; i++)
        buf[i] ^= k[i & 3];
}

int kube_ws_random(uint8_t *buf, size_t len)
{
    size_t have = 0;
    while (have < len) {
        ssize_t r = getrandom(buf + have, len - have, 0);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        have += (size_t)r;
    }
    return 0;
}

size_t kube_ws_close_payload(uint8_t *out, int code, const char *reason)
{
    size_t rl = reason ? strlen(reason) : 0;
    if (rl > KUBE_WS_MAX_CONTROL - 2) {
        rl = KUBE_WS_MAX_CONTROL - 2;
        while (rl > 0 && ((uint8_t)reason[rl] & 0xC0) == 0x80)
            rl--; /* don't split UTF-8 */
    }
    out[0] = (uint8_t)(code >> 8);
    out[1] = (uint8_t)code;
    if (rl)
        memcpy(out + 2, reason, rl);
    return 2 + rl;
}

int kube_ws_close_code_valid(int code)
{
    if (code >= 1000 && code <= 1003)
        return 1;
    if (code >= 1007 && code <= 1014)
        return 1;
    return code >= 3000 && code <= 4999;
}

const char *kube_ws_close_code_name(int code)
{
    switch (code) {
    case 1000: return "normal closure";
    case 1001: return "going away";
    case 1002: return "protocol error";
    case 1003: return "unsupported data";
    case 1005: return "no status code";
    case 1006: return "abnormal closure";
    case 1007: return "invalid payload data";
    case 1008: return "policy violation";
    case 1009: return "message too big";
    case 1010: return "mandatory extension";
    case 1011: return "internal server error";
    case 1012: return "service restart";
    case 1013: return "try again later";
    case 1014: return "bad gateway";
    default: return code >= 3000 && code <= 4999 ? "application-defined" : "unknown code";
    }
}

int kube_ws_make_key(char key[25])
{
    uint8_t raw[16];
    if (kube_ws_random(raw, sizeof(raw)) < 0)
        return -1;
    return kube_base64_encode_to(key, raw, sizeof(raw)) == 24 ? 0 : -1;
}

int kube_ws_accept_for(const char *key, char accept[29])
{
    static const char guid[] = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    size_t kl = strlen(key);
    EVP_MD_CTX *c = EVP_MD_CTX_new();
    if (!c)
        return -1;
    int ok = EVP_DigestInit_ex(c, EVP_sha1(), NULL) == 1 && EVP_DigestUpdate(c, key, kl) == 1 &&
             EVP_DigestUpdate(c, guid, sizeof(guid) - 1) == 1 && EVP_DigestFinal_ex(c, md, &mdlen) == 1;
    EVP_MD_CTX_free(c);
    if (!ok || mdlen != 20)
        return -1;
    return kube_base64_encode_to(accept, md, 20) == 28 ? 0 : -1;
}
