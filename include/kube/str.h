/* str.h - strings: formatted allocation, the one error setter, excerpts for one-line messages,
 * string vectors (lib/str.c). */
#ifndef KUBE_STR_H
#define KUBE_STR_H

#include <stddef.h>

/* Like asprintf but returns the string (NULL on allocation failure). */
char *kube_strdup_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Sets *errmsg (if errmsg != NULL) to a newly allocated formatted message; frees any previous one.
 * Returns -1: a failing function writes `return kube_set_err(errmsg, ...);` (docs/library.md, "Errors"). */
int kube_set_err(char **errmsg, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Copies s into buf (bufsz >= 4) for quoting in a one-line message: control characters become
 * '?', and a string longer than bufsz - 1 is cut with "..."; returns buf ("" for NULL s). */
const char *kube_excerpt(const char *s, char *buf, size_t bufsz);
/* Frees a NULL-terminated vector of strings and the strings (NULL is fine). */
void kube_strv_free(char **v);

#endif
