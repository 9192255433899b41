/* netpeer.c - pure bookkeeping of the pod-network watch: probe period and wait, errno
 * classification, silence since the last answer, the first worker over the bound. */
#include "netpeer.h"

#include <errno.h>

#define PERIOD_MIN_MS 1000
#define PERIOD_MAX_MS 5000
#define ATTEMPT_MAX_MS 3000
#define SILENT_PROBES_MIN 2

int64_t agent_net_period_ms(int64_t timeout_ms)
{
    int64_t p = timeout_ms / 4;
    return p < PERIOD_MIN_MS ? PERIOD_MIN_MS : p > PERIOD_MAX_MS ? PERIOD_MAX_MS : p;
}

int64_t agent_net_attempt_ms(int64_t timeout_ms)
{
    int64_t p = agent_net_period_ms(timeout_ms);
    return p > ATTEMPT_MAX_MS ? ATTEMPT_MAX_MS : p;
}

enum agent_net_outcome agent_net_classify(int err)
{
    switch (err) {
    case 0:
    case ECONNREFUSED: return AGENT_NET_ANSWERED;
    case ETIMEDOUT:
    case EHOSTUNREACH:
    case ENETUNREACH:
    case EHOSTDOWN:
    case ENETDOWN: return AGENT_NET_SILENT;
    default: return AGENT_NET_NOT_PROBED;
    }
}

void agent_net_peer_start(struct agent_net_peer *p, int64_t now)
{
    p->since = now;
    p->silent = 0;
    p->last_err = 0;
    p->answers = 0;
}

void agent_net_peer_record(struct agent_net_peer *p, enum agent_net_outcome o, int err, int64_t now)
{
    if (o == AGENT_NET_ANSWERED) {
        p->since = now;
        p->silent = 0;
        p->answers++;
    } else if (o == AGENT_NET_SILENT) {
        p->silent++;
        p->last_err = err;
    }
}

int64_t agent_net_silence_ms(const struct agent_net_peer *p, int64_t now) { return now > p->since ? now - p->since : 0; }

long agent_net_overdue(const struct agent_net_peer *v, size_t n, int64_t now, int64_t timeout_ms)
{
    if (timeout_ms <= 0)
        return -1;
    for (size_t i = 0; i < n; i++)
        if (v[i].silent >= SILENT_PROBES_MIN && agent_net_silence_ms(&v[i], now) >= timeout_ms)
            return (long)i;
    return -1;
}
