/* jsonutil.h - the controller's small jansson helpers: typed field reads that
 * produce field-naming errors, nested lookups, building objects, timestamps. */
#ifndef CONTROLLER_JSONUTIL_H
#define CONTROLLER_JSONUTIL_H

#include <stdint.h>
#include <jansson.h>

/* Sets *err to a formatted message (if err != NULL) and returns -1. */
int ju_err(char **err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "<path>: expected <what>, got <json type of v>"; returns -1. */
int ju_type_err(char **err, const char *path, const char *what, const json_t *v);
/* "<path>.<key>: expected <what>, got ..."; returns -1. */
int ju_type_errk(char **err, const char *path, const char *key, const char *what, const json_t *v);
/* Reads o[key] as an integer into *out if present (null = absent). 0 ok, -1 type error. */
int ju_get_int(const json_t *o, const char *key, const char *path, long long *out, char **err);
/* Reads o[key] as a boolean into *out if present. 0 ok, -1 type error. */
int ju_get_bool(const json_t *o, const char *key, const char *path, int *out, char **err);
/* Reads o[key] as a string (borrowed) into *out if present. 0 ok, -1 type error. */
int ju_get_str(const json_t *o, const char *key, const char *path, const char **out, char **err);
/* Follows object keys (NULL-terminated list); borrowed result or NULL. */
json_t *ju_at_(const json_t *o, ...);
#define ju_at(o, ...) ju_at_((o), __VA_ARGS__, (const char *)NULL)
/* metadata.name of an object, or NULL. */
#define obj_name(o) ju_str((o), "metadata", "name")
/* String at a key path, or NULL. */
#define ju_str(o, ...) json_string_value(ju_at((o), __VA_ARGS__))
/* Returns o[key], creating an empty object there when missing or not an object (borrowed). */
json_t *ju_obj(json_t *o, const char *key);
/* Returns o[key], creating an empty array there when missing or not an array (borrowed). */
json_t *ju_arr(json_t *o, const char *key);
/* Sets o[key] = string s (copied). */
void ju_set_str(json_t *o, const char *key, const char *s);
/* Wall clock in epoch milliseconds. */
int64_t ju_now_ms(void);
/* Formats epoch ms as RFC 3339 seconds ("2026-11-30T06:01:02Z") into buf (>= 32 bytes). */
char *ju_time_format(int64_t ms, char *buf, size_t n);
/* Formats with milliseconds ("...:02.123Z"). */
char *ju_time_format_ms(int64_t ms, char *buf, size_t n);
/* Parses an RFC 3339 time (Z or offset, optional fraction) into epoch ms; 0 ok, -1 bad. */
int ju_time_parse(const char *s, int64_t *ms);
/* Standard base64 of the NUL-terminated string s (new string) or NULL. */
char *ju_base64(const char *s);
/* Returns 1 if the two values are equal JSON (jansson json_equal, NULL-safe). */
int ju_equal(const json_t *a, const json_t *b);

#endif
