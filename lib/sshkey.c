/* sshkey.c - Ed25519 key-pair generation with OpenSSL's EVP API, written out in
 * OpenSSH's formats: the "openssh-key-v1" private key container (unencrypted,
 * PROTOCOL.key) and the one-line public key. Used by the controller to fill the
 * per-job Secret; OpenSSH accepts the result as identity and as host key. */
#include "kube/sshkey.h"
#include "kube/util.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ED25519_LEN 32
#define KEYTYPE "ssh-ed25519"

/* A growable byte buffer; after an allocation failure it stays failed (oom). */
struct kbuf {
    unsigned char *p;
    size_t len, cap;
    int oom;
};

static void kb_put(struct kbuf *b, const void *data, size_t n)
{
    if (b->oom)
        return;
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 256;
        while (cap < b->len + n)
            cap *= 2;
        unsigned char *np = malloc(cap);
        if (!np) {
            b->oom = 1;
            return;
        }
        if (b->len)
            memcpy(np, b->p, b->len);
        if (b->p) {
            OPENSSL_cleanse(b->p, b->cap); /* it may hold the private key */
            free(b->p);
        }
        b->p = np;
        b->cap = cap;
    }
    memcpy(b->p + b->len, data, n);
    b->len += n;
}

static void kb_u32(struct kbuf *b, uint32_t v)
{
    unsigned char x[4] = { (unsigned char)(v >> 24), (unsigned char)(v >> 16), (unsigned char)(v >> 8), (unsigned char)v };
    kb_put(b, x, 4);
}

static void kb_str(struct kbuf *b, const void *data, size_t n)
{
    kb_u32(b, (uint32_t)n);
    kb_put(b, data, n);
}

static void kb_free(struct kbuf *b)
{
    if (b->p) {
        OPENSSL_cleanse(b->p, b->cap);
        free(b->p);
    }
    memset(b, 0, sizeof(*b));
}

/* Base64 of n bytes, optionally wrapped every `wrap` characters with '\n' (0 = one line). */
static char *b64(const unsigned char *in, size_t n, size_t wrap)
{
    char *flat = kube_base64_encode(in, n);
    if (!flat || !wrap)
        return flat;
    size_t enc = strlen(flat);
    char *out = malloc(enc + enc / wrap + 2);
    if (out) {
        size_t o = 0;
        for (size_t i = 0; i < enc; i++) {
            out[o++] = flat[i];
            if ((i + 1) % wrap == 0 || i + 1 == enc)
                out[o++] = '\n';
        }
        out[o] = '\0';
    }
    OPENSSL_cleanse(flat, enc);
    free(flat);
    return out;
}

/* The public key blob: string "ssh-ed25519", string pk. */
static void put_pub_blob(struct kbuf *b, const unsigned char *pk)
{
    kb_str(b, KEYTYPE, strlen(KEYTYPE));
    kb_str(b, pk, ED25519_LEN);
}

/* The openssh-key-v1 container with cipher "none" (PROTOCOL.key). */
static char *format_private(const unsigned char *sk, const unsigned char *pk, const char *comment)
{
    struct kbuf blob = { 0 }, priv = { 0 }, all = { 0 };
    unsigned char check[4], seckey[2 * ED25519_LEN];
    char *text = NULL;

    if (RAND_bytes(check, sizeof(check)) != 1)
        return NULL;
    memcpy(seckey, sk, ED25519_LEN); /* OpenSSH's 64-byte secret: seed || pk */
    memcpy(seckey + ED25519_LEN, pk, ED25519_LEN);
    put_pub_blob(&blob, pk);
    kb_put(&priv, check, 4);
    kb_put(&priv, check, 4);
    put_pub_blob(&priv, pk);
    kb_str(&priv, seckey, sizeof(seckey));
    kb_str(&priv, comment, strlen(comment));
    for (unsigned char pad = 1; priv.len % 8; pad++)
        kb_put(&priv, &pad, 1);
    kb_put(&all, "openssh-key-v1", 15); /* magic including its NUL */
    kb_str(&all, "none", 4);
    kb_str(&all, "none", 4);
    kb_str(&all, "", 0);
    kb_u32(&all, 1);
    kb_str(&all, blob.p, blob.len);
    kb_str(&all, priv.p, priv.len);
    if (!blob.oom && !priv.oom && !all.oom) {
        char *body = b64(all.p, all.len, 70);
        if (body && asprintf(&text,
                             "-----BEGIN OPENSSH PRIVATE KEY-----\n%s"
                             "-----END OPENSSH PRIVATE KEY-----\n",
                             body) < 0)
            text = NULL;
        if (body) {
            OPENSSL_cleanse(body, strlen(body));
            free(body);
        }
    }
    OPENSSL_cleanse(seckey, sizeof(seckey));
    kb_free(&blob);
    kb_free(&priv);
    kb_free(&all);
    return text;
}

static char *format_public(const unsigned char *pk, const char *comment)
{
    struct kbuf blob = { 0 };
    char *line = NULL, *enc;
    put_pub_blob(&blob, pk);
    enc = blob.oom ? NULL : b64(blob.p, blob.len, 0);
    if (enc && asprintf(&line, "%s %s%s%s\n", KEYTYPE, enc, *comment ? " " : "", comment) < 0)
        line = NULL;
    free(enc);
    kb_free(&blob);
    return line;
}

/* Fills sk (seed) and pk with a fresh Ed25519 key; 0 ok, -1 with *errmsg. */
static int keygen(unsigned char *sk, unsigned char *pk, char **errmsg)
{
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_id(EVP_PKEY_ED25519, NULL);
    EVP_PKEY *key = NULL;
    size_t sklen = ED25519_LEN, pklen = ED25519_LEN;
    int ok = ctx && EVP_PKEY_keygen_init(ctx) == 1 && EVP_PKEY_keygen(ctx, &key) == 1 &&
             EVP_PKEY_get_raw_private_key(key, sk, &sklen) == 1 && EVP_PKEY_get_raw_public_key(key, pk, &pklen) == 1 &&
             sklen == ED25519_LEN && pklen == ED25519_LEN;
    EVP_PKEY_free(key);
    EVP_PKEY_CTX_free(ctx);
    if (!ok)
        kube_set_err(errmsg, "sshkey: OpenSSL could not generate an Ed25519 key");
    return ok ? 0 : -1;
}

int kube_sshkey_generate_ed25519(char **private_openssh, char **public_line, const char *comment, char **errmsg)
{
    unsigned char sk[ED25519_LEN], pk[ED25519_LEN];
    *private_openssh = NULL;
    *public_line = NULL;
    if (!comment)
        comment = "";
    if (strpbrk(comment, "\r\n"))
        return kube_set_err(errmsg, "sshkey: comment must be a single line");
    if (keygen(sk, pk, errmsg) < 0)
        return -1;
    *private_openssh = format_private(sk, pk, comment);
    *public_line = format_public(pk, comment);
    OPENSSL_cleanse(sk, sizeof(sk));
    if (!*private_openssh || !*public_line) {
        if (*private_openssh)
            OPENSSL_cleanse(*private_openssh, strlen(*private_openssh));
        free(*private_openssh);
        free(*public_line);
        *private_openssh = *public_line = NULL;
        return kube_set_err(errmsg, "sshkey: out of memory formatting the key pair");
    }
    return 0;
}
