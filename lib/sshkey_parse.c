/* sshkey_parse.c - reading OpenSSH public keys back: one line of an authorized_keys,
 * known_hosts or .pub file to (type, blob), and SHA256 fingerprints as OpenSSH prints
 * them. Used to pin worker host keys against the key the job distributes. */
#include "kube/sshkey.h"
#include "kube/util.h"

#include <openssl/evp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char *const key_types[] = {
    "ssh-ed25519",
    "ecdsa-sha2-nistp256",
    "ecdsa-sha2-nistp384",
    "ecdsa-sha2-nistp521",
    "ssh-rsa",
    "ssh-dss",
    "sk-ssh-ed25519@openssh.com",
    "sk-ecdsa-sha2-nistp256@openssh.com",
};

static int is_key_type(const char *t, size_t n)
{
    for (size_t i = 0; i < sizeof(key_types) / sizeof(key_types[0]); i++)
        if (strlen(key_types[i]) == n && memcmp(key_types[i], t, n) == 0)
            return 1;
    return 0;
}

/* Next whitespace-separated token of s[*pos..len), double quotes protecting spaces. */
static int next_token(const char *s, size_t len, size_t *pos, size_t *start, size_t *tlen)
{
    size_t i = *pos;
    int quoted = 0;
    while (i < len && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r' || s[i] == '\n'))
        i++;
    if (i >= len)
        return 0;
    *start = i;
    for (; i < len; i++) {
        if (s[i] == '"')
            quoted = !quoted;
        else if (!quoted && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r' || s[i] == '\n'))
            break;
    }
    *tlen = i - *start;
    *pos = i;
    return 1;
}

/* 1 when blob starts with the SSH string `type` (the key's own type name). */
static int blob_has_type(const unsigned char *b, size_t n, const char *type, size_t tlen)
{
    if (n < 4)
        return 0;
    uint32_t l = ((uint32_t)b[0] << 24) | ((uint32_t)b[1] << 16) | ((uint32_t)b[2] << 8) | b[3];
    return l == tlen && n - 4 >= l && memcmp(b + 4, type, tlen) == 0;
}

int kube_sshkey_parse_line(const char *line, size_t len, char **type, unsigned char **blob, size_t *blob_len)
{
    size_t pos = 0, st, tl;
    *type = NULL;
    *blob = NULL;
    *blob_len = 0;
    if (!next_token(line, len, &pos, &st, &tl) || line[st] == '#' || line[st] == '@')
        return 0; /* blank, comment, or a marker (@revoked, @cert-authority): not a plain key */
    do {
        if (!is_key_type(line + st, tl))
            continue;
        size_t bst, btl;
        if (!next_token(line, len, &pos, &bst, &btl))
            return -1;
        if (btl > (1u << 20) || kube_base64_decode_strict(line + bst, btl, blob, blob_len) < 0)
            return -1;
        if (!blob_has_type(*blob, *blob_len, line + st, tl) || !(*type = strndup(line + st, tl))) {
            free(*blob);
            *blob = NULL;
            *blob_len = 0;
            return -1;
        }
        return 1;
    } while (next_token(line, len, &pos, &st, &tl));
    return -1;
}

char *kube_sshkey_fingerprint(const unsigned char *blob, size_t blob_len)
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    if (EVP_Digest(blob, blob_len, md, &mdlen, EVP_sha256(), NULL) != 1)
        return NULL;
    char *out = malloc(7 + 4 * ((mdlen + 2) / 3) + 1);
    if (!out)
        return NULL;
    memcpy(out, "SHA256:", 7);
    size_t n = kube_base64_encode_to(out + 7, md, mdlen);
    while (n > 0 && out[7 + n - 1] == '=')
        n--;
    out[7 + n] = '\0';
    return out;
}
