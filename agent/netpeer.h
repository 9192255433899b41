/* netpeer.h - the bookkeeping behind the pod-network watch (agent/netwatch.h), as pure
 * functions of the probe outcomes and the clock: how often to probe, how long one probe may
 * wait, what a connect's errno says about the path, and which worker has been silent past
 * the bound. No sockets, no threads: tests/unit/test_agent_netpeer.c drives it. */
#ifndef MPI_AGENT_NETPEER_H
#define MPI_AGENT_NETPEER_H

#include <stddef.h>
#include <stdint.h>

/* What one probe of a worker said. */
enum agent_net_outcome {
    AGENT_NET_ANSWERED,   /* the worker's stack answered (accept or RST): the path works */
    AGENT_NET_SILENT,     /* no answer in time, or the path is reported down (EHOSTUNREACH...) */
    AGENT_NET_NOT_PROBED, /* no probe was made (no pod IP yet, a local error): says nothing */
};

/* One worker's record. Silence is counted from `since`: the last answer, or the start of
 * the watch (the workers were checked just before mpirun started). */
struct agent_net_peer {
    int64_t since;     /* monotonic ms: last answer, or start */
    int silent;        /* consecutive silent probes (reset by an answer) */
    int last_err;      /* errno of the last silent probe (ETIMEDOUT for a timeout) */
    long long answers; /* answers seen (for the log) */
};

/* The probe period for a timeout: a quarter of it, within 1 s .. 5 s (ms). */
int64_t agent_net_period_ms(int64_t timeout_ms);
/* How long one probe waits for an answer: the period, at most 3 s (ms). On a working pod
 * network an answer takes well under a millisecond; 3 s covers a SYN lost once (Linux
 * resends it after 1 s). */
int64_t agent_net_attempt_ms(int64_t timeout_ms);
/* What a finished non-blocking connect says: 0 (accepted) or ECONNREFUSED (reset: nothing
 * listens) -> ANSWERED; ETIMEDOUT, EHOSTUNREACH, ENETUNREACH, EHOSTDOWN, ENETDOWN -> SILENT;
 * anything else (EMFILE, ENOBUFS, EADDRNOTAVAIL, EACCES ...: this side's trouble) -> NOT_PROBED. */
enum agent_net_outcome agent_net_classify(int err);
/* Starts a record at now. */
void agent_net_peer_start(struct agent_net_peer *p, int64_t now);
/* Records one probe's outcome at now (err: the errno for SILENT). */
void agent_net_peer_record(struct agent_net_peer *p, enum agent_net_outcome o, int err, int64_t now);
/* Milliseconds the worker has gone without an answer at now. */
int64_t agent_net_silence_ms(const struct agent_net_peer *p, int64_t now);
/* The first of n records that is overdue at now: silent for at least timeout_ms, with its
 * last two probes (at least) silent, so a watch that itself stalled (no probes made) blames no
 * one. -1 when none, or when timeout_ms <= 0 (off). */
long agent_net_overdue(const struct agent_net_peer *v, size_t n, int64_t now, int64_t timeout_ms);

#endif
