/* cnn_trainer.c - softmax regression on synthetic Gaussian clusters (see cnn_trainer.h). */
#include "cnn_trainer.h"
#include "wl_hash.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define D CNN_TRAINER_DIM
#define C CNN_TRAINER_CLASSES
#define CENTROID_SPREAD 0.45 /* class separation relative to unit noise: learnable, not trivial */

static double gauss(uint64_t seed, uint64_t i)
{
    double u1 = wl_hash_unit(seed, 2 * i), u2 = wl_hash_unit(seed, 2 * i + 1);
    if (u1 < 1e-300)
        u1 = 1e-300;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

size_t cnn_trainer_nparams(void) { return (size_t)C * (D + 1); }

int cnn_trainer_init(struct cnn_trainer *t, int batch, uint64_t seed, double lr)
{
    memset(t, 0, sizeof(*t));
    t->batch = batch;
    t->seed = seed;
    t->lr = lr;
    t->centroids = calloc((size_t)C * D, sizeof(float));
    t->x = calloc((size_t)batch * D, sizeof(float));
    t->y = calloc((size_t)batch, sizeof(int));
    t->w = calloc(cnn_trainer_nparams(), sizeof(float));
    t->grad = calloc(cnn_trainer_nparams(), sizeof(float));
    if (!t->centroids || !t->x || !t->y || !t->w || !t->grad) {
        cnn_trainer_free(t);
        return -1;
    }
    uint64_t cs = wl_mix64(seed ^ 0xc0ffee);
    for (int i = 0; i < C * D; i++)
        t->centroids[i] = (float)(CENTROID_SPREAD * gauss(cs, (uint64_t)i));
    return 0;
}

static void make_shard(struct cnn_trainer *t, long step, int rank, int nranks)
{
    uint64_t ds = wl_mix64(t->seed ^ 0xda7a);
    for (int i = 0; i < t->batch; i++) {
        uint64_t g = ((uint64_t)step * (uint64_t)nranks + (uint64_t)rank) * (uint64_t)t->batch + (uint64_t)i;
        int label = (int)(wl_mix64(ds ^ wl_mix64(g)) % C);
        t->y[i] = label;
        for (int j = 0; j < D; j++)
            t->x[i * D + j] = t->centroids[label * D + j] + (float)gauss(ds + 1, g * D + (uint64_t)j);
    }
}

double cnn_trainer_grad(struct cnn_trainer *t, long step, int rank, int nranks)
{
    make_shard(t, step, rank, nranks);
    memset(t->grad, 0, cnn_trainer_nparams() * sizeof(float));
    double loss = 0.0;
    for (int i = 0; i < t->batch; i++) {
        const float *x = t->x + (size_t)i * D;
        double z[C], zmax = -1e300, sum = 0.0;
        for (int k = 0; k < C; k++) {
            const float *wk = t->w + (size_t)k * (D + 1);
            double s = wk[D];
            for (int j = 0; j < D; j++)
                s += (double)wk[j] * x[j];
            z[k] = s;
            if (s > zmax)
                zmax = s;
        }
        for (int k = 0; k < C; k++) {
            z[k] = exp(z[k] - zmax);
            sum += z[k];
        }
        loss -= log(z[t->y[i]] / sum);
        for (int k = 0; k < C; k++) {
            double dk = z[k] / sum - (k == t->y[i] ? 1.0 : 0.0);
            float *gk = t->grad + (size_t)k * (D + 1);
            for (int j = 0; j < D; j++)
                gk[j] += (float)(dk * x[j] / t->batch);
            gk[D] += (float)(dk / t->batch);
        }
    }
    return loss / t->batch;
}

void cnn_trainer_apply(struct cnn_trainer *t, const float *avg_grad)
{
    for (size_t i = 0; i < cnn_trainer_nparams(); i++)
        t->w[i] -= (float)t->lr * avg_grad[i];
}

void cnn_trainer_free(struct cnn_trainer *t)
{
    free(t->centroids);
    free(t->x);
    free(t->y);
    free(t->w);
    free(t->grad);
    memset(t, 0, sizeof(*t));
}
