/* log.c - the one-line-per-event stderr logger. */
#include "kube/log.h"
#include "kube/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

static volatile int g_level = KUBE_LOG_INFO;
static volatile int g_fd = 2;
static char g_component[64] = "mpi-k8s";
static const char *const g_names[] = { "ERROR", "WARN", "INFO", "DEBUG", "TRACE" };

void kube_log_set_level(int level)
{
    if (level < KUBE_LOG_ERROR)
        level = KUBE_LOG_ERROR;
    if (level > KUBE_LOG_TRACE)
        level = KUBE_LOG_TRACE;
    g_level = level;
}

int kube_log_get_level(void) { return g_level; }

void kube_log_set_verbosity(int v) { kube_log_set_level(KUBE_LOG_INFO + (v < 0 ? 0 : v)); }

int kube_log_level_parse(const char *s)
{
    if (!s || !*s)
        return -1;
    for (int i = 0; i <= KUBE_LOG_TRACE; i++)
        if (strcasecmp(s, g_names[i]) == 0)
            return i;
    if (strcasecmp(s, "warning") == 0)
        return KUBE_LOG_WARN;
    if (s[0] >= '0' && s[0] <= '4' && s[1] == '\0')
        return s[0] - '0';
    return -1;
}

void kube_log_set_component(const char *name) { snprintf(g_component, sizeof g_component, "%s", name ? name : "mpi-k8s"); }

void kube_log_set_fd(int fd) { g_fd = fd; }

int kube_log_enabled(int level) { return level <= g_level; }

void kube_vlog(int level, const char *fmt, va_list ap)
{
    if (level > g_level)
        return;
    if (level < 0)
        level = 0;
    if (level > KUBE_LOG_TRACE)
        level = KUBE_LOG_TRACE;
    int saved = errno;
    char ts[40];
    kube_time_format_ms(kube_realtime_ms(), ts, sizeof ts);
    char *msg = NULL;
    if (vasprintf(&msg, fmt, ap) < 0)
        msg = NULL;
    size_t ml = msg ? strlen(msg) : 0;
    while (ml > 0 && (msg[ml - 1] == '\n' || msg[ml - 1] == '\r'))
        msg[--ml] = '\0';
    /* keep one event on one line */
    for (size_t i = 0; i < ml; i++)
        if (msg[i] == '\n' || msg[i] == '\r')
            msg[i] = ' ';
    char *line =
        kube_strdup_printf("%s %s %s %s\n", ts, g_component, g_names[level], msg ? msg : "(log message allocation failed)");
    free(msg);
    if (line) {
        (void)kube_write_all(g_fd, line, strlen(line)); /* a log line that cannot go is dropped */
        free(line);
    }
    errno = saved;
}

void kube_log(int level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    kube_vlog(level, fmt, ap);
    va_end(ap);
}
