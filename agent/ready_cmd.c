/* ready_cmd.c - `mpi-agent ready`: the launcher container's readiness probe. Exits 0 once this
 * container's run has its ranks up (agent/ranksup.h), waiting for that up to --timeout, so that
 * one probe spans the wait for the workers instead of failing (and posting an Unhealthy Event)
 * every period; 1 when the bound passed first. */
#include <stdio.h>
#include <time.h>

#include "commands.h"
#include "kube/clock.h"
#include "ranksup.h"

#define READY_POLL_MS 100

int agent_cmd_ready(struct agent_opts *o)
{
    int64_t deadline = kube_now_ms() + (int64_t)(o->timeout_s * 1000);
    for (;;) {
        if (agent_ranksup_check(o->dest))
            return 0;
        if (kube_now_ms() >= deadline)
            break;
        struct timespec ts = { 0, READY_POLL_MS * 1000000L };
        nanosleep(&ts, NULL);
    }
    printf("mpi-agent: the ranks of this launcher's run have not started yet (%s/%s)\n", o->dest, AGENT_RANKSUP_FILE);
    return 1;
}
