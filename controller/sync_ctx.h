/* sync_ctx.h - the working state of one sync, shared by reconcile.c, reconcile_status.c and
 * the status parts they call (blocked.c, worker_restart.c, rank_failure.c), and its
 * condition setter (sync_ctx.c). */
#ifndef CONTROLLER_SYNC_CTX_H
#define CONTROLLER_SYNC_CTX_H

#include <stdint.h>
#include <jansson.h>
#include "reconcile.h"

/* The per-sync working state shared by reconcile.c and reconcile_status.c. */
struct sync_ctx {
    const struct observed *obs;
    const struct build_opts *o;
    const struct mpijob *j;
    struct plan *p;
    json_t *status; /* the status being computed (owned) */
    int64_t now_ms;
    char now[40];
    json_t **workers;     /* [replicas] borrowed worker pods by index, NULL = absent */
    json_t *launcher_pod; /* newest launcher pod (borrowed) or NULL */
    long long launchers_running;
};

/* Sets a condition and emits its event when it changed; returns 1 when it changed. */
int sync_ctx_cond(struct sync_ctx *c, const char *type, const char *st, const char *reason, const char *what,
                  const char *ev_type);

#endif
