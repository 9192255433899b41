/* base64.h - base64, the library's one implementation (lib/base64.c). */
#ifndef KUBE_BASE64_H
#define KUBE_BASE64_H

#include <stddef.h>

/* Over OpenSSL's EVP_EncodeBlock/EVP_DecodeBlock.
 * Decodes base64 as Kubernetes' "-data" fields hold it: whitespace ignored, padding optional,
 * the URL-safe '-' and '_' accepted, unused bits of the last character zero; 0 ok, -1 invalid
 * (or out of memory). *out is new and NUL-terminated; out_len may be NULL. */
int kube_base64_decode(const char *in, size_t in_len, char **out, size_t *out_len);
/* Decodes padded standard base64 as OpenSSH's key lines hold it: in_len a non-zero multiple of 4,
 * '=' only as the last one or two characters, no whitespace, no URL-safe letters; 0 ok (*out new,
 * NUL-terminated), -1 invalid (or out of memory). */
int kube_base64_decode_strict(const char *in, size_t in_len, unsigned char **out, size_t *out_len);
/* Encodes bytes as standard base64 (NUL-terminated, newly allocated) or NULL on allocation failure. */
char *kube_base64_encode(const void *in, size_t len);
/* Encodes len bytes as padded standard base64 into out, which holds 4 * ((len + 2) / 3) + 1
 * bytes; NUL-terminates it and returns the length without the NUL. */
size_t kube_base64_encode_to(char *out, const void *in, size_t len);

#endif
