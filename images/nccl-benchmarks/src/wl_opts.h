/* wl_opts.h - a small table-driven command-line parser for the workload programs:
 * accepts --name=value, --name value, -x value and -xVALUE, and tf_cnn_benchmarks'
 * boolean spellings (--flag, --flag=true|false). */
#ifndef WL_OPTS_H
#define WL_OPTS_H
#include <stddef.h>

enum wl_opt_type { WL_OPT_LONG, WL_OPT_DOUBLE, WL_OPT_SIZE, WL_OPT_STRING, WL_OPT_FLAG, WL_OPT_BOOL };

/* One option. For WL_OPT_FLAG, *(int *)ptr is set to flag_value (no argument).
 * WL_OPT_SIZE accepts K/M/G suffixes (powers of 1024). choices: "a|b|c" or NULL. */
struct wl_opt {
    const char *name; /* long name without "--" */
    char short_name;  /* 0 if none */
    enum wl_opt_type type;
    void *ptr;       /* long*, double*, size_t*, const char**, int* */
    double min, max; /* numeric bounds (inclusive) */
    int flag_value;
    const char *choices;
    const char *help;
};

/* Parses argv against opts (n entries). Returns 0 on success, 1 if --help/-h was given,
 * -1 on error with a one-line message in *err (malloc'd; caller frees). */
int wl_opts_parse(const struct wl_opt *opts, int n, int argc, char **argv, char **err);

/* Prints a usage block for opts to stdout. */
void wl_opts_usage(const char *prog, const char *summary, const struct wl_opt *opts, int n);

/* Parses "8", "64K", "1M", "2G" into bytes. Returns 0 or -1. */
int wl_parse_size(const char *s, size_t *out);

#endif
