/* parse_int.h - the one decimal integer parser (lib/parse_int.c). */
#ifndef KUBE_PARSE_INT_H
#define KUBE_PARSE_INT_H

#include <stddef.h>

/* Parses s[0..len) as a decimal integer within [lo, hi]: ASCII digits only, a leading '-' only
 * when lo < 0, nothing else (no '+', no spaces, no trailing text); reads no further than the
 * first character that is not a digit. 0 ok (*out set), -1 otherwise (*out and errno untouched).
 * The library's and the programs' one integer parser. */
int kube_parse_int_n(const char *s, size_t len, long long lo, long long hi, long long *out);
/* kube_parse_int_n over the whole NUL-terminated s (NULL and "" are invalid). */
int kube_parse_int(const char *s, long long lo, long long hi, long long *out);

#endif
