/* blocked.h - the Blocked condition (blocked.c). */
#ifndef CONTROLLER_BLOCKED_H
#define CONTROLLER_BLOCKED_H

#include "sync_ctx.h"

/* The Blocked condition and its Event from the first pod that cannot start (written only when
 * that pod or its reason changes); "has failed: ..." (new string) once the launcher has been
 * blocked on itself for the worker timeout, else NULL (controller/blocked.c). */
char *blocked_update(struct sync_ctx *c);

#endif
