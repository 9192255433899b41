/* wl_dev.h - the compute device one rank drives: the CPU (OpenBLAS + MPI_Allreduce)
 * or one GPU (cuBLAS + NCCL, bootstrapped over MPI). Both benchmarks are written once
 * against these operations. Buffers are floats in the device's memory. Every operation
 * returns 0 or -1 after printing a one-line error; waits are bounded by op_timeout. */
#ifndef WL_DEV_H
#define WL_DEV_H
#include <stddef.h>
#include <stdint.h>
#include "wl_common.h"

enum wl_red { WL_SUM, WL_AVG };

struct wl_dev;

struct wl_dev_ops {
    int (*alloc)(struct wl_dev *d, size_t n, float **out);
    void (*release)(struct wl_dev *d, float *p);
    /* p[i] = wl_hash_val(seed, i) * scale */
    int (*fill_hash)(struct wl_dev *d, float *p, size_t n, uint64_t seed, float scale);
    /* counts i where p[i] != scale * sum over r < nranks of wl_hash_val(wl_rank_seed(base, r), i) */
    int (*check_sum)(struct wl_dev *d, const float *p, size_t n, uint64_t base, int nranks, float scale, uint64_t *wrong);
    /* out = reduction over all ranks of in (in == out: in place) */
    int (*allreduce)(struct wl_dev *d, const float *in, float *out, size_t n, enum wl_red op);
    /* column-major C(m x n) = op(A) * op(B), op = transpose when ta/tb */
    int (*gemm)(struct wl_dev *d, int ta, int tb, int m, int n, int k, const float *a, int lda, const float *b, int ldb,
                float *c, int ldc);
    /* y += alpha * x */
    int (*axpy)(struct wl_dev *d, size_t n, float alpha, const float *x, float *y);
    int (*to_host)(struct wl_dev *d, void *dst, const float *src, size_t n);
    int (*from_host)(struct wl_dev *d, float *dst, const void *src, size_t n);
    /* waits until queued work is done (bounded) */
    int (*sync)(struct wl_dev *d);
    void (*close)(struct wl_dev *d);
};

struct wl_dev {
    const struct wl_dev_ops *ops;
    const struct wl_ctx *ctx;
    const char *kind;  /* "cpu" or "gpu" */
    char desc[256];    /* e.g. "device 0 [0000:1b:00] NVIDIA H200" or "cpu (OpenBLAS, 1 thread)" */
    double op_timeout; /* seconds a GPU wait may take before the job is aborted */
    void *priv;
};

/* Opens the CPU device (BLAS threads per rank). */
int wl_dev_open_cpu(struct wl_dev *d, const struct wl_ctx *ctx, int blas_threads);

/* 1 when this binary was built with CUDA + NCCL. */
int wl_have_gpu(void);

/* Collective: every rank opens the GPU of its local rank and joins one NCCL communicator.
 * A rank without a usable GPU (no driver: cudaErrorInsufficientDriver, no device:
 * cudaErrorNoDevice, fewer GPUs than local ranks) makes every rank return -1, with the
 * reason printed once. NCCL init is bounded by op_timeout. */
int wl_dev_open_gpu(struct wl_dev *d, const struct wl_ctx *ctx, double op_timeout);

/* Collective: gathers every rank's "host + device" line to rank 0 and prints them in
 * nccl-tests' "# Using devices" style. */
void wl_dev_print_all(const struct wl_dev *d);

#endif
