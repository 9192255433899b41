/* daemonexit.c - the daemon-exit stop (daemonexit.h): the mark's exit lines and the clock. */
#include "daemonexit.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ranksup.h"
#include "kube/util.h"
#include "mpik8s/contract.h"

#define LOOK_MS 1000

/* line (n bytes) as "!CODE HOST": 1 with *pod and *code, 0 when it is not one, -1 out of memory */
static int exit_line(const char *line, size_t n, char **pod, int *code)
{
    size_t i = 1;
    long c = 0;
    if (n < 4 || line[0] != MPIK8S_RSH_MARK_EXIT)
        return 0;
    while (i < n && i < 4 && line[i] >= '0' && line[i] <= '9')
        c = c * 10 + (line[i++] - '0');
    if (i == 1 || i >= n || line[i] != ' ' || c < 1 || c > 255)
        return 0;
    char *host = strndup(line + i + 1, n - i - 1);
    if (!host)
        return -1;
    *pod = mpik8s_host_to_pod(host, NULL);
    free(host);
    if (!*pod)
        return 0;
    *code = (int)c;
    return 1;
}

int agent_daemonexit_first(const char *text, size_t len, char **pod, int *code)
{
    *pod = NULL;
    *code = 0;
    for (size_t at = 0; text && at < len;) {
        const char *nl = memchr(text + at, '\n', len - at);
        size_t n = nl ? (size_t)(nl - (text + at)) : len - at;
        int r = exit_line(text + at, n, pod, code);
        if (r != 0)
            return r;
        at += n + 1;
    }
    return 0;
}

int agent_daemonexit_read(const char *mark, char **pod, int *code)
{
    *pod = NULL;
    size_t len;
    char *buf = agent_ranksup_mark_read(mark, &len);
    int found = buf && agent_daemonexit_first(buf, len, pod, code) == 1;
    free(buf);
    return found;
}

/* Reads the mark when it grew since the last look; 1 when an exit line is now known. */
static int look(struct agent_daemonexit *d, const char *mark, int64_t now)
{
    struct stat st;
    if (now - d->look_ms < LOOK_MS || !mark)
        return 0;
    d->look_ms = now;
    if (stat(mark, &st) != 0 || st.st_size == d->size)
        return 0;
    d->size = st.st_size;
    return agent_daemonexit_read(mark, &d->pod, &d->code);
}

char *agent_daemonexit_step(struct agent_daemonexit *d, const char *mark, const char *cmd, int64_t now)
{
    if (d->bound_ms <= 0 || d->fired)
        return NULL;
    if (!d->seen_ms) {
        if (!look(d, mark, now))
            return NULL;
        d->seen_ms = now;
    }
    if (now - d->seen_ms < d->bound_ms)
        return NULL;
    d->fired = 1;
    return kube_strdup_printf(MPIK8S_AGENT_DAEMON_EXIT_FMT, d->pod, d->code, cmd ? cmd : "the command",
                              (int)((d->bound_ms + 999) / 1000));
}

void agent_daemonexit_free(struct agent_daemonexit *d)
{
    free(d->pod);
    d->pod = NULL;
}
