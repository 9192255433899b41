/* wl_dev_gpu.c - the GPU device: one GPU per rank (chosen by node-local rank), cuBLAS
 * for matrix work, NCCL for the allreduce (communicator bootstrapped by MPI_Bcast of the
 * ncclUniqueId; Debian's Open MPI is not CUDA-aware, so GPU buffers never go through MPI).
 * NCCL runs non-blocking so that every wait is bounded: a peer that vanishes turns into
 * an error message and MPI_Abort instead of a hang. */
#include "wl_dev.h"
#include "wl_kernels.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <nccl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct gpu {
    int dev;
    cudaStream_t stream;
    cublasHandle_t blas;
    ncclComm_t comm;
    unsigned long long *d_wrong;
};

#define GPU(d) ((struct gpu *)(d)->priv)

static int cuda_fail(struct wl_dev *d, const char *what, cudaError_t e)
{
    wl_error(d->ctx, "%s on %s GPU %d: %s (%d): %s", what, d->ctx->host, GPU(d)->dev, cudaGetErrorName(e), (int)e,
             cudaGetErrorString(e));
    return -1;
}

static int blas_fail(struct wl_dev *d, const char *what, cublasStatus_t s)
{
    wl_error(d->ctx, "%s on %s GPU %d: %s (%d)", what, d->ctx->host, GPU(d)->dev, cublasGetStatusString(s), (int)s);
    return -1;
}

static void nccl_fatal(struct wl_dev *d, const char *what, ncclResult_t r)
{
    const char *last = ncclGetLastError(GPU(d)->comm);
    wl_error(d->ctx, "%s failed on %s GPU %d: %s%s%s", what, d->ctx->host, GPU(d)->dev, ncclGetErrorString(r),
             last && *last ? ": " : "", last ? last : "");
    if (GPU(d)->comm)
        ncclCommAbort(GPU(d)->comm);
    GPU(d)->comm = NULL;
    MPI_Abort(MPI_COMM_WORLD, 4);
}

static void sleep_us(long us)
{
    struct timespec ts = { 0, us * 1000 };
    nanosleep(&ts, NULL);
}

/* Waits for an NCCL call that returned ncclInProgress (non-blocking communicator). */
static void nccl_settle(struct wl_dev *d, const char *what, ncclResult_t r)
{
    double start = wl_now();
    while (r == ncclInProgress) {
        if (wl_now() - start > d->op_timeout) {
            wl_error(d->ctx,
                     "%s did not complete within %.0f s (--op_timeout); a peer rank may "
                     "be gone or the network between GPUs is blocked",
                     what, d->op_timeout);
            if (GPU(d)->comm)
                ncclCommAbort(GPU(d)->comm);
            MPI_Abort(MPI_COMM_WORLD, 3);
        }
        sleep_us(100);
        if (ncclCommGetAsyncError(GPU(d)->comm, &r) != ncclSuccess)
            break;
    }
    if (r != ncclSuccess)
        nccl_fatal(d, what, r);
}

static int gpu_sync(struct wl_dev *d)
{
    struct gpu *g = GPU(d);
    double start = wl_now();
    for (;;) {
        cudaError_t e = cudaStreamQuery(g->stream);
        if (e == cudaSuccess)
            return 0;
        if (e != cudaErrorNotReady)
            return cuda_fail(d, "cudaStreamQuery", e);
        ncclResult_t ar = ncclSuccess;
        if (g->comm && ncclCommGetAsyncError(g->comm, &ar) == ncclSuccess && ar != ncclSuccess && ar != ncclInProgress)
            nccl_fatal(d, "NCCL (asynchronous error)", ar);
        double el = wl_now() - start;
        if (el > d->op_timeout) {
            wl_error(d->ctx,
                     "GPU work did not finish within %.0f s (--op_timeout); a peer rank "
                     "may be gone",
                     d->op_timeout);
            if (g->comm)
                ncclCommAbort(g->comm);
            MPI_Abort(MPI_COMM_WORLD, 3);
        }
        if (el > 0.005)
            sleep_us(50);
        else
            sched_yield();
    }
}

static int gpu_alloc(struct wl_dev *d, size_t n, float **out)
{
    *out = NULL;
    cudaError_t e = cudaMalloc((void **)out, (n ? n : 1) * sizeof(float));
    if (e != cudaSuccess) {
        wl_error(d->ctx, "cannot allocate %zu bytes on %s GPU %d: %s", n * sizeof(float), d->ctx->host, GPU(d)->dev,
                 cudaGetErrorString(e));
        *out = NULL;
        return -1;
    }
    e = cudaMemsetAsync(*out, 0, (n ? n : 1) * sizeof(float), GPU(d)->stream);
    return e == cudaSuccess ? gpu_sync(d) : cuda_fail(d, "cudaMemsetAsync", e);
}

static void gpu_release(struct wl_dev *d, float *p)
{
    (void)d;
    if (p)
        cudaFree(p);
}

static int gpu_fill_hash(struct wl_dev *d, float *p, size_t n, uint64_t seed, float scale)
{
    int e = wl_gpu_fill(p, n, seed, scale, GPU(d)->stream);
    return e ? cuda_fail(d, "fill kernel", (cudaError_t)e) : 0;
}

static int gpu_check_sum(struct wl_dev *d, const float *p, size_t n, uint64_t base, int nranks, float scale, uint64_t *wrong)
{
    struct gpu *g = GPU(d);
    unsigned long long h = 0;
    int e = wl_gpu_check(p, n, base, nranks, scale, g->d_wrong, g->stream);
    if (e)
        return cuda_fail(d, "check kernel", (cudaError_t)e);
    cudaError_t ce = cudaMemcpyAsync(&h, g->d_wrong, sizeof(h), cudaMemcpyDeviceToHost, g->stream);
    if (ce != cudaSuccess)
        return cuda_fail(d, "cudaMemcpyAsync", ce);
    if (gpu_sync(d) != 0)
        return -1;
    *wrong = h;
    return 0;
}

static int gpu_allreduce(struct wl_dev *d, const float *in, float *out, size_t n, enum wl_red op)
{
    ncclResult_t r = ncclAllReduce(in, out, n, ncclFloat, op == WL_AVG ? ncclAvg : ncclSum, GPU(d)->comm, GPU(d)->stream);
    nccl_settle(d, "ncclAllReduce", r);
    return 0;
}

static int gpu_gemm(struct wl_dev *d, int ta, int tb, int m, int n, int k, const float *a, int lda, const float *b, int ldb,
                    float *c, int ldc)
{
    const float one = 1.0f, zero = 0.0f;
    cublasStatus_t s = cublasSgemm(GPU(d)->blas, ta ? CUBLAS_OP_T : CUBLAS_OP_N, tb ? CUBLAS_OP_T : CUBLAS_OP_N, m, n, k,
                                   &one, a, lda, b, ldb, &zero, c, ldc);
    return s == CUBLAS_STATUS_SUCCESS ? 0 : blas_fail(d, "cublasSgemm", s);
}

static int gpu_axpy(struct wl_dev *d, size_t n, float alpha, const float *x, float *y)
{
    const size_t chunk = (size_t)1 << 30;
    for (size_t off = 0; off < n; off += chunk) {
        int len = (int)(n - off < chunk ? n - off : chunk);
        cublasStatus_t s = cublasSaxpy(GPU(d)->blas, len, &alpha, x + off, 1, y + off, 1);
        if (s != CUBLAS_STATUS_SUCCESS)
            return blas_fail(d, "cublasSaxpy", s);
    }
    return 0;
}

static int gpu_to_host(struct wl_dev *d, void *dst, const float *src, size_t n)
{
    cudaError_t e = cudaMemcpyAsync(dst, src, n * sizeof(float), cudaMemcpyDeviceToHost, GPU(d)->stream);
    if (e != cudaSuccess)
        return cuda_fail(d, "cudaMemcpyAsync (to host)", e);
    return gpu_sync(d);
}

static int gpu_from_host(struct wl_dev *d, float *dst, const void *src, size_t n)
{
    cudaError_t e = cudaMemcpyAsync(dst, src, n * sizeof(float), cudaMemcpyHostToDevice, GPU(d)->stream);
    if (e != cudaSuccess)
        return cuda_fail(d, "cudaMemcpyAsync (to GPU)", e);
    return gpu_sync(d);
}

static void gpu_close(struct wl_dev *d)
{
    struct gpu *g = GPU(d);
    if (!g)
        return;
    if (g->comm) {
        gpu_sync(d);
        ncclCommFinalize(g->comm);
        ncclResult_t r = ncclSuccess;
        double start = wl_now();
        while (ncclCommGetAsyncError(g->comm, &r) == ncclSuccess && r == ncclInProgress && wl_now() - start < d->op_timeout)
            sleep_us(100);
        ncclCommDestroy(g->comm);
    }
    if (g->d_wrong)
        cudaFree(g->d_wrong);
    if (g->blas)
        cublasDestroy(g->blas);
    if (g->stream)
        cudaStreamDestroy(g->stream);
    free(g);
    d->priv = NULL;
}

static const struct wl_dev_ops gpu_ops = {
    .alloc = gpu_alloc,
    .release = gpu_release,
    .fill_hash = gpu_fill_hash,
    .check_sum = gpu_check_sum,
    .allreduce = gpu_allreduce,
    .gemm = gpu_gemm,
    .axpy = gpu_axpy,
    .to_host = gpu_to_host,
    .from_host = gpu_from_host,
    .sync = gpu_sync,
    .close = gpu_close,
};

int wl_have_gpu(void) { return 1; }

/* Finds and opens this rank's GPU; on failure writes a one-line reason into msg. */
static int open_local_gpu(struct wl_dev *d, char *msg, size_t len)
{
    const struct wl_ctx *c = d->ctx;
    struct gpu *g = GPU(d);
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e == cudaErrorInsufficientDriver) {
        snprintf(msg, len,
                 "no usable NVIDIA driver on %s: cudaGetDeviceCount returned "
                 "cudaErrorInsufficientDriver (35): %s; run on a GPU node (request nvidia.com/gpu) "
                 "or use --device=cpu",
                 c->host, cudaGetErrorString(e));
        return -1;
    }
    if (e == cudaErrorNoDevice || (e == cudaSuccess && n == 0)) {
        snprintf(msg, len,
                 "no CUDA device visible on %s: cudaErrorNoDevice (100): %s; does the "
                 "pod request nvidia.com/gpu (CUDA_VISIBLE_DEVICES=%s)?",
                 c->host, cudaGetErrorString(cudaErrorNoDevice),
                 getenv("CUDA_VISIBLE_DEVICES") ? getenv("CUDA_VISIBLE_DEVICES") : "unset");
        return -1;
    }
    if (e != cudaSuccess) {
        snprintf(msg, len, "cudaGetDeviceCount failed on %s: %s (%d): %s", c->host, cudaGetErrorName(e), (int)e,
                 cudaGetErrorString(e));
        return -1;
    }
    if (n < c->local_size) {
        snprintf(msg, len,
                 "%s has %d visible GPU(s) but %d ranks run there; one GPU per rank is "
                 "needed (make slotsPerWorker equal the nvidia.com/gpu limit)",
                 c->host, n, c->local_size);
        return -1;
    }
    g->dev = c->local_rank;
    struct cudaDeviceProp p;
    if ((e = cudaSetDevice(g->dev)) != cudaSuccess || (e = cudaGetDeviceProperties(&p, g->dev)) != cudaSuccess ||
        (e = cudaStreamCreateWithFlags(&g->stream, cudaStreamNonBlocking)) != cudaSuccess ||
        (e = cudaMalloc((void **)&g->d_wrong, sizeof(*g->d_wrong))) != cudaSuccess) {
        snprintf(msg, len, "cannot open GPU %d on %s: %s (%d): %s", g->dev, c->host, cudaGetErrorName(e), (int)e,
                 cudaGetErrorString(e));
        return -1;
    }
    cublasStatus_t s = cublasCreate(&g->blas);
    if (s == CUBLAS_STATUS_SUCCESS)
        s = cublasSetStream(g->blas, g->stream);
    if (s != CUBLAS_STATUS_SUCCESS) {
        snprintf(msg, len, "cublasCreate failed on GPU %d of %s: %s", g->dev, c->host, cublasGetStatusString(s));
        return -1;
    }
    snprintf(d->desc, sizeof(d->desc), "device %2d [%04x:%02x:%02x] %.128s (NCCL %d.%d.%d)", g->dev, p.pciDomainID,
             p.pciBusID, p.pciDeviceID, p.name, NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH);
    return 0;
}

int wl_dev_open_gpu(struct wl_dev *d, const struct wl_ctx *ctx, double op_timeout)
{
    memset(d, 0, sizeof(*d));
    d->ops = &gpu_ops;
    d->ctx = ctx;
    d->kind = "gpu";
    d->op_timeout = op_timeout;
    d->priv = calloc(1, sizeof(struct gpu));
    char msg[640] = "";
    if (!d->priv)
        snprintf(msg, sizeof(msg), "out of memory");
    else if (open_local_gpu(d, msg, sizeof(msg)) == 0)
        msg[0] = 0;
    if (wl_collective_error(ctx, msg[0] ? msg : NULL) != 0) {
        gpu_close(d);
        return -1;
    }
    struct {
        ncclUniqueId id;
        int rc;
    } boot;
    memset(&boot, 0, sizeof(boot));
    if (ctx->rank == 0)
        boot.rc = (int)ncclGetUniqueId(&boot.id);
    if (MPI_Bcast(&boot, (int)sizeof(boot), MPI_BYTE, 0, MPI_COMM_WORLD) != MPI_SUCCESS) {
        wl_error(ctx, "MPI_Bcast of the NCCL id failed");
        MPI_Abort(MPI_COMM_WORLD, 4);
    }
    if (boot.rc != ncclSuccess)
        nccl_fatal(d, "ncclGetUniqueId (on rank 0)", (ncclResult_t)boot.rc);
    ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
    cfg.blocking = 0;
    ncclResult_t r = ncclCommInitRankConfig(&GPU(d)->comm, ctx->size, boot.id, ctx->rank, &cfg);
    nccl_settle(d, "ncclCommInitRankConfig", r);
    return 0;
}
