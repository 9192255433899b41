/* sync_ctx.c - a sync's condition setter: the condition and its Event. */
#include "sync_ctx.h"
#include "cond.h"
#include "plan.h"

#include <stdlib.h>
#include <string.h>

int sync_ctx_cond(struct sync_ctx *c, const char *type, const char *st, const char *reason, const char *what,
                  const char *ev_type)
{
    char *msg = what && strncmp(what, "MPIJob ", 7) == 0 ? strdup(what) : cond_msg(c->j->ns, c->j->name, what);
    int changed = cond_set(c->status, type, st, reason, msg, c->now);
    if (changed && ev_type) {
        /* upstream's MPIJobRunning Event reads "MPIJob <ns>/<name> is running", without the
         * condition message's period (mpi_job_controller.go's Eventf) */
        size_t n = msg ? strlen(msg) : 0;
        if (reason && strcmp(reason, R_RUNNING) == 0 && n > 0 && msg[n - 1] == '.')
            msg[n - 1] = '\0';
        plan_event(c->p, ev_type, reason, msg);
    }
    free(msg);
    return changed;
}
