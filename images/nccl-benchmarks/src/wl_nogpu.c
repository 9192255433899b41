/* wl_nogpu.c - GPU entry points of a CPU-only build (no CUDA/NCCL found at build time). */
#include "wl_dev.h"

#include <stdio.h>

int wl_have_gpu(void) { return 0; }

int wl_dev_open_gpu(struct wl_dev *d, const struct wl_ctx *ctx, double op_timeout)
{
    (void)d;
    (void)op_timeout;
    char msg[256];
    snprintf(msg, sizeof(msg),
             "%.64s was built without CUDA/NCCL; use %.64s-gpu (image "
             "mpik8s/nccl-benchmarks) for GPUs, or --device=cpu",
             ctx->prog, ctx->prog);
    wl_collective_error(ctx, msg);
    return -1;
}
