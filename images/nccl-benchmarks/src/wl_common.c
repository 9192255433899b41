/* wl_common.c - MPI context, bounded startup barrier, cross-rank agreement checks,
 * timing and checksums for the workload programs. */
#include "wl_common.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void wl_init(struct wl_ctx *ctx, const char *prog, int *argc, char ***argv)
{
    memset(ctx, 0, sizeof(*ctx));
    ctx->prog = prog;
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (MPI_Init(argc, argv) != MPI_SUCCESS) {
        fprintf(stderr, "%s: error: MPI_Init failed\n", prog);
        exit(2);
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &ctx->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ctx->size);
    int len = 0;
    if (MPI_Get_processor_name(ctx->host, &len) != MPI_SUCCESS || len <= 0)
        snprintf(ctx->host, sizeof(ctx->host), "unknown");
    ctx->local_rank = 0;
    ctx->local_size = 1;
}

const char *wl_basename(const char *argv0, const char *fallback)
{
    if (!argv0 || !*argv0)
        return fallback;
    const char *slash = strrchr(argv0, '/');
    return slash && slash[1] ? slash + 1 : argv0;
}

void wl_error(const struct wl_ctx *ctx, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    fprintf(stderr, "%s: rank %d: error: %s\n", ctx->prog, ctx->rank, msg);
    fflush(stderr);
}

static void sleep_us(long us)
{
    struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}

void wl_startup_barrier(struct wl_ctx *ctx, double timeout_s)
{
    MPI_Request req;
    if (MPI_Ibarrier(MPI_COMM_WORLD, &req) != MPI_SUCCESS) {
        wl_error(ctx, "MPI_Ibarrier failed at startup");
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    double deadline = wl_now() + timeout_s;
    for (;;) {
        int done = 0;
        if (MPI_Test(&req, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
            wl_error(ctx, "MPI_Test failed at startup");
            MPI_Abort(MPI_COMM_WORLD, 3);
        }
        if (done)
            break;
        if (wl_now() > deadline) {
            wl_error(ctx,
                     "timed out after %.0f s waiting for all %d ranks at the first "
                     "collective (--startup_timeout); a rank did not start or cannot be reached",
                     timeout_s, ctx->size);
            MPI_Abort(MPI_COMM_WORLD, 3);
        }
        sleep_us(1000);
    }
    /* Node-local ranks (for one GPU per local rank). Safe now that everyone is here. */
    MPI_Comm local;
    if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, ctx->rank, MPI_INFO_NULL, &local) == MPI_SUCCESS) {
        MPI_Comm_rank(local, &ctx->local_rank);
        MPI_Comm_size(local, &ctx->local_size);
        MPI_Comm_free(&local);
    }
}

int wl_all_ok(int ok)
{
    int in = ok ? 1 : 0, out = 0;
    if (MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD) != MPI_SUCCESS)
        return 0;
    return out;
}

int wl_check_agreement(const struct wl_ctx *ctx, const struct wl_param *p, int n)
{
    double *in = calloc((size_t)n * 2, sizeof(double));
    double *out = calloc((size_t)n * 2, sizeof(double));
    int rc = -1;
    if (!in || !out) {
        wl_error(ctx, "out of memory");
        goto done;
    }
    for (int i = 0; i < n; i++) {
        in[2 * i] = p[i].value;
        in[2 * i + 1] = -p[i].value;
    }
    if (MPI_Allreduce(in, out, n * 2, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD) != MPI_SUCCESS)
        goto done;
    rc = 0;
    for (int i = 0; i < n; i++) {
        double lo = out[2 * i], hi = -out[2 * i + 1];
        if (lo != hi) {
            if (ctx->rank == 0)
                fprintf(stderr,
                        "%s: error: ranks disagree on %s (min %g, max %g); "
                        "every rank must be started with the same options\n",
                        ctx->prog, p[i].name, lo, hi);
            rc = -1;
        }
    }
done:
    free(in);
    free(out);
    return rc;
}

int wl_collective_error(const struct wl_ctx *ctx, const char *msg)
{
    int mine = msg != NULL;
    int any = 0, zero_has = mine;
    if (MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD) != MPI_SUCCESS)
        return -1;
    if (!any)
        return 0;
    if (MPI_Bcast(&zero_has, 1, MPI_INT, 0, MPI_COMM_WORLD) != MPI_SUCCESS)
        return -1;
    if (msg && (ctx->rank == 0 || !zero_has))
        wl_error(ctx, "%s", msg);
    return -1;
}

double wl_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

uint64_t wl_fnv1a(uint64_t h, const void *p, size_t len)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < len; i++) {
        h ^= b[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

int wl_all_equal_u64(uint64_t v)
{
    uint64_t lo = 0, hi = 0;
    if (MPI_Allreduce(&v, &lo, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD) != MPI_SUCCESS ||
        MPI_Allreduce(&v, &hi, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD) != MPI_SUCCESS)
        return 0;
    return lo == hi;
}
