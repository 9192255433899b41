/* netwatch.h - while mpirun runs, each worker's reachability over the POD NETWORK (not
 * through the API server, whose exec streams survive a pod-network partition): a thread
 * makes a non-blocking TCP connect from the launcher pod to every worker's pod IP on
 * AGENT_NET_PROBE_PORT each period (agent/netpeer.h). An accept or a reset proves the path;
 * a timeout or "unreachable" is silence. A worker silent for the network timeout is
 * reported once, naming pod, IP, node and how long (docs/agent.md, "Pod network watch"). */
#ifndef MPI_AGENT_NETWATCH_H
#define MPI_AGENT_NETWATCH_H

#include <stddef.h>
#include "session.h"

/* The port probed: discard (9), which almost no image listens on, so the answer is the
 * kernel's reset and no process sees a connection. Any answer proves the path. */
#define AGENT_NET_PROBE_PORT 9

/* Called once, from the watch's thread, with a new string (the callee owns it):
 * "worker P (IP, node N): no answer over the pod network for S s (...)" and the worker's
 * index in s->hosts. */
typedef void (*agent_net_report_fn)(void *ctx, char *msg, size_t idx);

struct agent_netwatch;

/* Starts the watch of s->hosts (pod IPs and nodes from s->inf, which must be synced) with
 * the bound timeout_s (> 0). *out NULL and 0 when there is nothing to watch (no informer);
 * 0 ok, -1 with errno when the thread cannot start. */
int agent_netwatch_start(struct agent_session *s, double timeout_s, agent_net_report_fn fn, void *ctx,
                         struct agent_netwatch **out);
/* Stops the thread (within about 100 ms plus one probe's wait) and frees nw (NULL: nothing). */
void agent_netwatch_stop(struct agent_netwatch *nw);

#endif
