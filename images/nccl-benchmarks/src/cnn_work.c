/* cnn_work.c - the per-step work of cnn-bench (see cnn_work.h).
 *
 * A "layer" is a GEMM triple over activations X (rows x d) and weights W (d x d):
 * forward Y = X W, backward-data dX = Y W^T, backward-weights dW = X^T Y, i.e.
 * 3 * 2 * rows * d^2 flops. A step issues enough layers to match 3x the model's
 * forward cost for the batch (forward + the two backward products). X and W are
 * never overwritten, so values stay bounded however many steps run. */
#include "cnn_work.h"
#include "wl_hash.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define GRAD_SCALE (1.0f / 16384.0f) /* synthetic gradient values: small, exact in float */
#define BIG_LR 0.01f

int cnn_work_init(struct cnn_work *w, struct wl_dev *dev, double flops_per_step, size_t ngrad, int dim, int batch,
                  uint64_t seed, double lr)
{
    memset(w, 0, sizeof(*w));
    w->dev = dev;
    w->dim = dim;
    w->seed = seed;
    double per_row = 6.0 * (double)dim * dim;
    double rows = ceil(flops_per_step / per_row);
    if (rows < 1)
        rows = 1;
    w->full_layers = (long)(rows / dim);
    w->rem_rows = (int)(rows - (double)w->full_layers * dim);
    w->step_flops = rows * per_row;
    w->ngrad = ngrad < cnn_trainer_nparams() ? cnn_trainer_nparams() : ngrad;
    if (cnn_trainer_init(&w->tr, batch, seed, lr) != 0 || !(w->small_avg = calloc(cnn_trainer_nparams(), sizeof(float)))) {
        wl_error(dev->ctx, "out of memory");
        return -1;
    }
    const struct wl_dev_ops *o = dev->ops;
    size_t dd = (size_t)dim * dim;
    if (o->alloc(dev, dd, &w->x) || o->alloc(dev, dd, &w->w) || o->alloc(dev, dd, &w->y) || o->alloc(dev, dd, &w->dx) ||
        o->alloc(dev, dd, &w->dw) || o->alloc(dev, w->ngrad, &w->grad) || o->alloc(dev, w->ngrad, &w->wbig))
        return -1;
    /* X, W: values in [-1/4, 1/4) scaled by 1/sqrt(d) so Y stays O(1). */
    float s = 1.0f / (64.0f * (float)sqrt((double)dim));
    if (o->fill_hash(dev, w->x, dd, seed ^ 0x11, s) || o->fill_hash(dev, w->w, dd, seed ^ 0x22, s) ||
        o->fill_hash(dev, w->wbig, w->ngrad, seed ^ 0x33, 1.0f / 256.0f))
        return -1;
    return o->sync(dev);
}

static int layer(struct cnn_work *w, int rows)
{
    const struct wl_dev_ops *o = w->dev->ops;
    int d = w->dim;
    if (o->gemm(w->dev, 0, 0, rows, d, d, w->x, d, w->w, d, w->y, d) != 0) /* Y = X W */
        return -1;
    if (o->gemm(w->dev, 0, 1, rows, d, d, w->y, d, w->w, d, w->dx, d) != 0) /* dX = Y W^T */
        return -1;
    return o->gemm(w->dev, 1, 0, d, d, rows, w->x, d, w->y, d, w->dw, d); /* dW = X^T Y */
}

int cnn_work_step(struct cnn_work *w, long step, double *loss)
{
    struct wl_dev *dev = w->dev;
    const struct wl_dev_ops *o = dev->ops;
    const struct wl_ctx *c = dev->ctx;
    for (long i = 0; i < w->full_layers; i++)
        if (layer(w, w->dim) != 0)
            return -1;
    if (w->rem_rows && layer(w, w->rem_rows) != 0)
        return -1;
    /* This rank's gradient: fresh synthetic values, with the real model's gradient at the head. */
    uint64_t gs = wl_mix64(w->seed ^ ((uint64_t)step << 20) ^ (uint64_t)c->rank);
    if (o->fill_hash(dev, w->grad, w->ngrad, gs, GRAD_SCALE) != 0)
        return -1;
    *loss = cnn_trainer_grad(&w->tr, step, c->rank, c->size);
    size_t np = cnn_trainer_nparams();
    if (o->from_host(dev, w->grad, w->tr.grad, np) != 0 || o->allreduce(dev, w->grad, w->grad, w->ngrad, WL_AVG) != 0 ||
        o->to_host(dev, w->small_avg, w->grad, np) != 0)
        return -1;
    cnn_trainer_apply(&w->tr, w->small_avg);
    if (o->axpy(dev, w->ngrad, -BIG_LR, w->grad, w->wbig) != 0)
        return -1;
    return o->sync(dev);
}

int cnn_work_checksum(struct cnn_work *w, uint64_t *out)
{
    uint64_t h = wl_fnv1a(WL_FNV_INIT, w->tr.w, cnn_trainer_nparams() * sizeof(float));
    float *host = malloc(w->ngrad * sizeof(float));
    if (!host) {
        wl_error(w->dev->ctx, "out of memory");
        return -1;
    }
    int rc = w->dev->ops->to_host(w->dev, host, w->wbig, w->ngrad);
    if (rc == 0)
        *out = wl_fnv1a(h, host, w->ngrad * sizeof(float));
    free(host);
    return rc;
}

void cnn_work_free(struct cnn_work *w)
{
    if (w->dev) {
        float *bufs[] = { w->x, w->w, w->y, w->dx, w->dw, w->grad, w->wbig };
        for (size_t i = 0; i < sizeof(bufs) / sizeof(bufs[0]); i++)
            if (bufs[i])
                w->dev->ops->release(w->dev, bufs[i]);
    }
    free(w->small_avg);
    cnn_trainer_free(&w->tr);
    memset(w, 0, sizeof(*w));
}
