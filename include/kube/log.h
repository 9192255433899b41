/* log.h - levelled logging for every mpi-k8s program: one line per event on
 * stderr, "2026-11-30T06:01:02.123Z <component> <LEVEL> message".
 * Thread-safe (each line is written with a single write(2)).
 * Never pass tokens, keys or Secret data to these functions. */
#ifndef KUBE_LOG_H
#define KUBE_LOG_H

#include <stdarg.h>

enum kube_log_level {
    KUBE_LOG_ERROR = 0,
    KUBE_LOG_WARN = 1,
    KUBE_LOG_INFO = 2, /* default */
    KUBE_LOG_DEBUG = 3,
    KUBE_LOG_TRACE = 4,
};

/* Sets the most verbose level that is printed (clamped to ERROR..TRACE). */
void kube_log_set_level(int level);
/* Returns the current level. */
int kube_log_get_level(void);
/* Maps a "-v N" verbosity (0 = INFO, 1 = DEBUG, 2+ = TRACE) to a level and sets it. */
void kube_log_set_verbosity(int v);
/* Parses "error|warn|info|debug|trace" or a digit; returns the level or -1. */
int kube_log_level_parse(const char *s);
/* Sets the component name printed on each line (copied; default "mpi-k8s"). */
void kube_log_set_component(const char *name);
/* Redirects output to fd (default 2); for tests. */
void kube_log_set_fd(int fd);
/* Returns nonzero when messages at level would be printed. */
int kube_log_enabled(int level);
/* Prints one line at level (a trailing newline in fmt is dropped). */
void kube_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* va_list form of kube_log. */
void kube_vlog(int level, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));

#define KLOG_ERROR(...) kube_log(KUBE_LOG_ERROR, __VA_ARGS__)
#define KLOG_WARN(...) kube_log(KUBE_LOG_WARN, __VA_ARGS__)
#define KLOG_INFO(...) kube_log(KUBE_LOG_INFO, __VA_ARGS__)
#define KLOG_DEBUG(...)                                                                                                     \
    do {                                                                                                                    \
        if (kube_log_enabled(KUBE_LOG_DEBUG))                                                                               \
            kube_log(KUBE_LOG_DEBUG, __VA_ARGS__);                                                                          \
    } while (0)
#define KLOG_TRACE(...)                                                                                                     \
    do {                                                                                                                    \
        if (kube_log_enabled(KUBE_LOG_TRACE))                                                                               \
            kube_log(KUBE_LOG_TRACE, __VA_ARGS__);                                                                          \
    } while (0)

#endif
