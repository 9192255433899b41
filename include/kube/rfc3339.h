/* rfc3339.h - RFC 3339 times to and from epoch milliseconds (lib/rfc3339.c). */
#ifndef KUBE_RFC3339_H
#define KUBE_RFC3339_H

#include <stddef.h>
#include <stdint.h>

/* Formats epoch milliseconds as "2026-11-30T06:01:02Z" (whole seconds) into buf (>= 32 bytes); returns buf. */
char *kube_time_format(int64_t epoch_ms, char *buf, size_t bufsz);
/* Formats epoch milliseconds as "2026-11-30T06:01:02.123Z" into buf (>= 32 bytes); returns buf. */
char *kube_time_format_ms(int64_t epoch_ms, char *buf, size_t bufsz);
/* Parses an RFC 3339 time ("...Z" or "+hh:mm", optional fraction) into epoch ms; 0 ok, -1 bad. */
int kube_time_parse_ms(const char *s, int64_t *epoch_ms);

#endif
