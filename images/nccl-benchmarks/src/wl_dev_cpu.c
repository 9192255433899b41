/* wl_dev_cpu.c - the CPU device: OpenBLAS for matrix work, MPI_Allreduce for the
 * collective, plain loops for filling and checking buffers. */
#include "wl_dev.h"
#include "wl_hash.h"

#include <cblas.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int cpu_alloc(struct wl_dev *d, size_t n, float **out)
{
    *out = NULL;
    if (n == 0)
        n = 1;
    if (posix_memalign((void **)out, 64, n * sizeof(float)) != 0) {
        wl_error(d->ctx, "cannot allocate %zu bytes of host memory", n * sizeof(float));
        return -1;
    }
    memset(*out, 0, n * sizeof(float));
    return 0;
}

static void cpu_release(struct wl_dev *d, float *p)
{
    (void)d;
    free(p);
}

static int cpu_fill_hash(struct wl_dev *d, float *p, size_t n, uint64_t seed, float scale)
{
    (void)d;
    for (size_t i = 0; i < n; i++)
        p[i] = wl_hash_val(seed, i) * scale;
    return 0;
}

static int cpu_check_sum(struct wl_dev *d, const float *p, size_t n, uint64_t base, int nranks, float scale, uint64_t *wrong)
{
    uint64_t *seeds = malloc((size_t)nranks * sizeof(*seeds));
    if (!seeds) {
        wl_error(d->ctx, "out of memory");
        return -1;
    }
    for (int r = 0; r < nranks; r++)
        seeds[r] = wl_rank_seed(base, r);
    uint64_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        float e = 0.0f;
        for (int r = 0; r < nranks; r++)
            e += wl_hash_val(seeds[r], i);
        if (p[i] != e * scale)
            bad++;
    }
    free(seeds);
    *wrong = bad;
    return 0;
}

static int cpu_allreduce(struct wl_dev *d, const float *in, float *out, size_t n, enum wl_red op)
{
    if (n > INT_MAX) {
        wl_error(d->ctx, "allreduce of %zu elements exceeds MPI's int count", n);
        return -1;
    }
    int rc = MPI_Allreduce(in == out ? MPI_IN_PLACE : in, out, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS) {
        char s[MPI_MAX_ERROR_STRING];
        int len = 0;
        MPI_Error_string(rc, s, &len);
        wl_error(d->ctx, "MPI_Allreduce failed: %s", s);
        return -1;
    }
    if (op == WL_AVG)
        cblas_sscal((int)n, 1.0f / (float)d->ctx->size, out, 1);
    return 0;
}

static int cpu_gemm(struct wl_dev *d, int ta, int tb, int m, int n, int k, const float *a, int lda, const float *b, int ldb,
                    float *c, int ldc)
{
    (void)d;
    cblas_sgemm(CblasColMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, m, n, k, 1.0f, a, lda, b, ldb,
                0.0f, c, ldc);
    return 0;
}

static int cpu_axpy(struct wl_dev *d, size_t n, float alpha, const float *x, float *y)
{
    (void)d;
    for (size_t i = 0; i < n; i++)
        y[i] += alpha * x[i];
    return 0;
}

static int cpu_copy(struct wl_dev *d, void *dst, const float *src, size_t n)
{
    (void)d;
    memcpy(dst, src, n * sizeof(float));
    return 0;
}

static int cpu_from_host(struct wl_dev *d, float *dst, const void *src, size_t n)
{
    (void)d;
    memcpy(dst, src, n * sizeof(float));
    return 0;
}

static int cpu_sync(struct wl_dev *d)
{
    (void)d;
    return 0;
}

static void cpu_close(struct wl_dev *d) { (void)d; }

static const struct wl_dev_ops cpu_ops = {
    .alloc = cpu_alloc,
    .release = cpu_release,
    .fill_hash = cpu_fill_hash,
    .check_sum = cpu_check_sum,
    .allreduce = cpu_allreduce,
    .gemm = cpu_gemm,
    .axpy = cpu_axpy,
    .to_host = cpu_copy,
    .from_host = cpu_from_host,
    .sync = cpu_sync,
    .close = cpu_close,
};

int wl_dev_open_cpu(struct wl_dev *d, const struct wl_ctx *ctx, int blas_threads)
{
    memset(d, 0, sizeof(*d));
    d->ops = &cpu_ops;
    d->ctx = ctx;
    d->kind = "cpu";
    openblas_set_num_threads(blas_threads);
    snprintf(d->desc, sizeof(d->desc), "cpu (OpenBLAS, %d thread%s; MPI_Allreduce)", blas_threads,
             blas_threads == 1 ? "" : "s");
    return 0;
}

void wl_dev_print_all(const struct wl_dev *d)
{
    const struct wl_ctx *c = d->ctx;
    enum { LINE = 576 };
    char mine[LINE];
    snprintf(mine, sizeof(mine), "#  Rank %2d Pid %6d on %10s %s", c->rank, (int)getpid(), c->host, d->desc);
    char *all = NULL;
    if (c->rank == 0)
        all = malloc((size_t)c->size * LINE);
    if (c->rank == 0 && !all) {
        wl_error(c, "out of memory");
        MPI_Abort(MPI_COMM_WORLD, 4);
    }
    if (MPI_Gather(mine, LINE, MPI_CHAR, all, LINE, MPI_CHAR, 0, MPI_COMM_WORLD) != MPI_SUCCESS)
        wl_error(c, "MPI_Gather of device names failed");
    else if (c->rank == 0 && all)
        for (int r = 0; r < c->size; r++)
            printf("%s\n", all + (size_t)r * LINE);
    free(all);
}
