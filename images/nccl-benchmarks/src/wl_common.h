/* wl_common.h - what cnn-bench and allreduce-bench share: the MPI context of a rank,
 * error reporting, the bounded startup barrier (the first collective), agreement checks
 * between ranks, timing and checksums. */
#ifndef WL_COMMON_H
#define WL_COMMON_H
#include <stddef.h>
#include <stdint.h>
#include <mpi.h>

/* One rank's place in the job. */
struct wl_ctx {
    const char *prog;                  /* program name used in messages */
    int rank, size;                    /* in MPI_COMM_WORLD */
    int local_rank, local_size;        /* among ranks on the same node */
    char host[MPI_MAX_PROCESSOR_NAME]; /* this rank's node */
};

/* Initialises MPI, fills ctx and makes stdout line-buffered; exits on failure. */
void wl_init(struct wl_ctx *ctx, const char *prog, int *argc, char ***argv);

/* The last path component of argv0, or fallback when argv0 is NULL or empty. */
const char *wl_basename(const char *argv0, const char *fallback);

/* Prints "prog: rank R: error: ..." on stderr (one line). */
void wl_error(const struct wl_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The first collective, bounded: an MPI_Ibarrier polled until timeout_s; on timeout
 * prints which rank gave up and calls MPI_Abort (exit code 3). Then sets local_rank/size. */
void wl_startup_barrier(struct wl_ctx *ctx, double timeout_s);

/* 1 if ok is non-zero on every rank, else 0 (collective). */
int wl_all_ok(int ok);

/* One option value that must be the same on every rank. */
struct wl_param {
    const char *name;
    double value;
};

/* Collective: 0 if every rank has the same values; else rank 0 prints each
 * disagreement (name, min, max) and all ranks return -1. */
int wl_check_agreement(const struct wl_ctx *ctx, const struct wl_param *p, int n);

/* Reports a per-rank error collectively: rank 0 prints its own message if it has one,
 * any other rank prints its message only when rank 0 has none (no duplicate lines).
 * Returns 0 when no rank had an error, else -1 on every rank. msg may be NULL. */
int wl_collective_error(const struct wl_ctx *ctx, const char *msg);

/* Seconds from a monotonic clock. */
double wl_now(void);

/* FNV-1a 64 over len bytes, continuing from h (start with WL_FNV_INIT). */
#define WL_FNV_INIT 0xcbf29ce484222325ULL
uint64_t wl_fnv1a(uint64_t h, const void *p, size_t len);

/* Collective: 1 if v is the same on every rank. */
int wl_all_equal_u64(uint64_t v);

#endif
