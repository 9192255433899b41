/* cnn_work.h - one data-parallel training step of cnn-bench on a wl_dev: matrix work
 * sized to the model's FLOPs, a real allreduce (average) of a gradient buffer of the
 * model's parameter count that also carries the small trained model's gradient, and an
 * SGD update of both weight sets. */
#ifndef CNN_WORK_H
#define CNN_WORK_H
#include <stddef.h>
#include <stdint.h>
#include "cnn_models.h"
#include "cnn_trainer.h"
#include "wl_dev.h"

struct cnn_work {
    struct wl_dev *dev;
    int dim;           /* GEMM dimension d: layers are (rows x d) * (d x d) */
    long full_layers;  /* layers of d rows per step */
    int rem_rows;      /* rows of one extra, partial layer (0 = none) */
    double step_flops; /* floating-point operations per step actually issued */
    size_t ngrad;      /* floats in the gradient / big weight buffers */
    float *x, *w, *y, *dx, *dw, *grad, *wbig;
    float *small_avg; /* host copy of the averaged small-model gradient */
    struct cnn_trainer tr;
    uint64_t seed;
};

/* Sizes and allocates everything: flops_per_step total work, ngrad gradient floats
 * (at least the trainer's), GEMM dimension dim. Returns 0 or -1 (message printed). */
int cnn_work_init(struct cnn_work *w, struct wl_dev *dev, double flops_per_step, size_t ngrad, int dim, int batch,
                  uint64_t seed, double lr);

/* Runs global step `step`; *loss = this rank's small-model loss. 0 or -1. */
int cnn_work_step(struct cnn_work *w, long step, double *loss);

/* Checksum of all weights (small model, then the big buffer). 0 or -1. */
int cnn_work_checksum(struct cnn_work *w, uint64_t *out);

/* Frees every buffer. */
void cnn_work_free(struct cnn_work *w);

#endif
