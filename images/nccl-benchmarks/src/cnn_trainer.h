/* cnn_trainer.h - the small model cnn-bench really trains alongside the synthetic CNN
 * workload: softmax regression on a learnable synthetic data set (Gaussian class
 * clusters generated from a fixed seed). Each rank computes the gradient on its own
 * shard of the global batch; the caller averages gradients across ranks (inside the
 * benchmark's real allreduce) and applies them, so every rank's weights must agree. */
#ifndef CNN_TRAINER_H
#define CNN_TRAINER_H
#include <stddef.h>
#include <stdint.h>

#define CNN_TRAINER_DIM 32
#define CNN_TRAINER_CLASSES 10

struct cnn_trainer {
    int batch; /* samples per rank per step */
    uint64_t seed;
    double lr;
    float *centroids; /* classes x dim */
    float *x;         /* batch x dim */
    int *y;           /* batch */
    float *w;         /* classes x (dim + 1), bias last */
    float *grad;      /* same shape as w */
};

/* Allocates and initialises (weights zero). Returns 0 or -1 (out of memory). */
int cnn_trainer_init(struct cnn_trainer *t, int batch, uint64_t seed, double lr);

/* Number of floats in w and grad. */
size_t cnn_trainer_nparams(void);

/* Generates this rank's shard of global step `step`, computes grad; returns the mean
 * cross-entropy loss of the shard (before the update). */
double cnn_trainer_grad(struct cnn_trainer *t, long step, int rank, int nranks);

/* w -= lr * avg_grad. */
void cnn_trainer_apply(struct cnn_trainer *t, const float *avg_grad);

/* Frees what init allocated. */
void cnn_trainer_free(struct cnn_trainer *t);

#endif
