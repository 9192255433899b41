/* health.h - liveness for /healthz: each of the operator's loops (the main supervisor loop,
 * the leader-election loop, the sync workers) beats while it runs; a loop that is watched
 * and has not beaten within its bound makes /healthz fail, naming it. */
#ifndef HEALTH_H
#define HEALTH_H

#include <stdint.h>

enum health_loop { H_MAIN, H_LEADER, H_WORKERS, H__COUNT };

/* Starts watching loop l with bound_ms (counts as a beat now). Thread-safe. */
void health_arm(enum health_loop l, int64_t bound_ms);
/* Stops watching loop l (it ended on purpose). Thread-safe. */
void health_disarm(enum health_loop l);
/* Records that loop l ran now. Thread-safe. */
void health_beat(enum health_loop l);
/* Like health_beat, at an explicit monotonic time (tests). */
void health_beat_at(enum health_loop l, int64_t now_ms);
/* Like health_arm, at an explicit monotonic time (tests). */
void health_arm_at(enum health_loop l, int64_t bound_ms, int64_t now_ms);
/* A predicate with a reason (docs/library.md "## Errors"): 1 when every watched loop beat within
 * its bound at monotonic time now_ms; else 0 and, when why is not NULL, *why = "<loop> loop stalled
 * for N s (bound M s)" (newly allocated; an earlier *why is freed). Never fails. */
int health_alive_at(int64_t now_ms, char **why);
/* health_alive_at(now). */
int health_alive(char **why);
/* The loop's name ("main", "leader-election", "workers"). */
const char *health_loop_name(enum health_loop l);

#endif
