/* logx.c - multi-line reports through the one-line-per-event logger. */
#include "logx.h"

#include <string.h>

#include "kube/log.h"

void agent_log_lines(int level, const char *text)
{
    while (text && *text) {
        size_t n = strcspn(text, "\n");
        if (n > 0)
            kube_log(level, "%.*s", (int)n, text);
        text += n;
        if (*text == '\n')
            text++;
    }
}
