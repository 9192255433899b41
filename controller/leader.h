/* leader.h - leader election on a coordination.k8s.io/v1 Lease (upstream's
 * timings: lease 15 s, renew deadline 5 s, retry 3 s). Only the holder runs
 * the controller; a standby takes over once the lease has not been renewed
 * for a full lease duration (measured on the standby's own clock, as
 * client-go does); losing the lease ends the process. */
#ifndef CONTROLLER_LEADER_H
#define CONTROLLER_LEADER_H

#include "kube/client.h"
#include "kube/cancel.h"

struct leader_opts {
    const char *ns, *name, *identity;
    int lease_s, renew_deadline_s, retry_s;
    struct kube_client *cancellable; /* client for acquiring that shutdown interrupts (NULL = c) */
};

struct leader;

/* Creates an elector (strings copied); NULL with *errmsg when out of memory. */
struct leader *leader_new(struct kube_client *c, const struct leader_opts *o, char **errmsg);
/* Blocks until this process holds the lease (0) or cancel triggers (1: not a failure, the
 * process is shutting down). A failed attempt is logged and retried, so there is no -1. */
int leader_acquire(struct leader *l, struct kube_cancel *cancel);
/* Starts renewing in the background; on_lost runs (once, on that thread) if a renewal
 * deadline passes. 0 ok, -1 with *errmsg when the renewer cannot start. */
int leader_start_renewing(struct leader *l, void (*on_lost)(void *), void *ud, char **errmsg);
/* Stops renewing and, if still held, releases the lease so a standby takes over at once. */
void leader_release(struct leader *l);
/* Frees l (after leader_release). */
void leader_free(struct leader *l);

#endif
