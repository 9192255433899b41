/* textpack.h - a tiny static-dictionary codec for the caches' compact JSON:
 * fragments that recur in every cached object (key names, the controller
 * reference, the launcher Role's rules) become single bytes 0x01-0x1e, which
 * never occur in compact JSON (control characters are escaped in strings).
 * The bench's jobs: 3.1 -> 1.3 KB of text per job (10 objects); lossless for any text. */
#ifndef CONTROLLER_TEXTPACK_H
#define CONTROLLER_TEXTPACK_H

/* The packed form of text (new string), or NULL when out of memory. */
char *tp_pack(const char *text);
/* The text a tp_pack result packs (new string), or NULL when out of memory. */
char *tp_unpack(const char *packed);

#endif
