/* util.h - small helpers shared by the library and the programs: formatted
 * allocation, the one error setter, clocks, RFC 3339 timestamps, whole-file reads
 * and writes, base64. */
#ifndef KUBE_UTIL_H
#define KUBE_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* Like asprintf but returns the string (NULL on allocation failure). */
char *kube_strdup_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Sets *errmsg (if errmsg != NULL) to a newly allocated formatted message; frees any previous one.
 * Returns -1: a failing function writes `return kube_set_err(errmsg, ...);` (docs/library.md, "Errors"). */
int kube_set_err(char **errmsg, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Copies s into buf (bufsz >= 4) for quoting in a one-line message: control characters become
 * '?', and a string longer than bufsz - 1 is cut with "..."; returns buf ("" for NULL s). */
const char *kube_excerpt(const char *s, char *buf, size_t bufsz);
/* Monotonic clock in milliseconds (for timeouts and backoff). */
int64_t kube_now_ms(void);
/* Wall clock in milliseconds since the epoch. */
int64_t kube_realtime_ms(void);
/* Formats epoch milliseconds as "2026-11-30T06:01:02Z" (whole seconds) into buf (>= 32 bytes); returns buf. */
char *kube_time_format(int64_t epoch_ms, char *buf, size_t bufsz);
/* Formats epoch milliseconds as "2026-11-30T06:01:02.123Z" into buf (>= 32 bytes); returns buf. */
char *kube_time_format_ms(int64_t epoch_ms, char *buf, size_t bufsz);
/* Parses an RFC 3339 time ("...Z" or "+hh:mm", optional fraction) into epoch ms; 0 ok, -1 bad. */
int kube_time_parse_ms(const char *s, int64_t *epoch_ms);
/* Parses s[0..len) as a decimal integer within [lo, hi]: ASCII digits only, a leading '-' only
 * when lo < 0, nothing else (no '+', no spaces, no trailing text); reads no further than the
 * first character that is not a digit. 0 ok (*out set), -1 otherwise (*out and errno untouched).
 * The library's and the programs' one integer parser. */
int kube_parse_int_n(const char *s, size_t len, long long lo, long long hi, long long *out);
/* kube_parse_int_n over the whole NUL-terminated s (NULL and "" are invalid). */
int kube_parse_int(const char *s, long long lo, long long hi, long long *out);
/* Reads a whole file (at most max_len bytes, NUL-terminated) into *out; 0 ok, -1 with *errmsg naming path. */
int kube_read_file(const char *path, size_t max_len, char **out, size_t *len, char **errmsg);
/* Writes all len bytes of buf to fd, waiting in poll() when fd is non-blocking; 0 ok, -1 errno set. */
int kube_write_all(int fd, const void *buf, size_t len);
/* Like kube_write_all, but never blocks in write(): it waits in poll() for fd to take more (at most
 * PIPE_BUF bytes a write) or for cancel_fd (> 0) to become readable, so a signal pipe ends a write
 * to a stalled reader at once. 0 ok, -1 hard error (errno set; EPIPE when fd's reader is gone),
 * -2 cancelled. */
int kube_write_all_cancel(int fd, int cancel_fd, const void *buf, size_t len);
/* base64: the library's one implementation, over OpenSSL's EVP_EncodeBlock/EVP_DecodeBlock.
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
/* Sleeps for ms milliseconds (restarting on EINTR). */
void kube_sleep_ms(int64_t ms);
/* Frees a NULL-terminated vector of strings and the strings (NULL is fine). */
void kube_strv_free(char **v);

#endif
