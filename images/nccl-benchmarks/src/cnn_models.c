/* cnn_models.c - model table for cnn-bench.
 *
 * Sources (per-image forward multiply-accumulates at the listed input size, and
 * parameter counts of the ImageNet-1k classifiers):
 *   resnet50/101/152: He et al., "Deep Residual Learning for Image Recognition", CVPR 2016,
 *       Table 1 (3.8 / 7.6 / 11.3 x 10^9 FLOPs, counted as multiply-adds); the parameter
 *       counts and the MAC figures including the final FC layer (4.09 / 7.80 / 11.51 GMACs)
 *       are those torchvision publishes for its reference implementations.
 *   vgg16: Simonyan & Zisserman, "Very Deep Convolutional Networks...", ICLR 2015
 *       (138M parameters, Table 2); 15.47 GMACs (torchvision).
 *   inception3: Szegedy et al., "Rethinking the Inception Architecture...", CVPR 2016
 *       (about 5 billion multiply-adds, 299x299 input); 5.71 GMACs and 27,161,264
 *       parameters including the auxiliary head (torchvision's inception_v3).
 *   alexnet: Krizhevsky et al., NIPS 2012 (60M parameters); single-tower variant as in
 *       torchvision, 0.71 GMACs, 61,100,840 parameters.
 * A training step costs about 3x the forward pass (forward + backward for data and
 * weights), i.e. 6 * GMACs * 10^9 floating-point operations per image.
 * Default batch sizes follow tf_cnn_benchmarks (64, alexnet 512). */
#include "cnn_models.h"

#include <string.h>

static const struct cnn_model models[] = {
    { "resnet50", 4.09, 25557032ULL, 224, 64 },   { "resnet101", 7.80, 44549160ULL, 224, 64 },
    { "resnet152", 11.51, 60192808ULL, 224, 64 }, { "vgg16", 15.47, 138357544ULL, 224, 64 },
    { "inception3", 5.71, 27161264ULL, 299, 64 }, { "alexnet", 0.71, 61100840ULL, 224, 512 },
};

const struct cnn_model *cnn_model_find(const char *name)
{
    for (size_t i = 0; i < sizeof(models) / sizeof(models[0]); i++)
        if (strcmp(models[i].name, name) == 0)
            return &models[i];
    return NULL;
}

const char *cnn_model_names(void) { return "resnet50|resnet101|resnet152|vgg16|inception3|alexnet"; }

int cnn_model_index(const struct cnn_model *m) { return (int)(m - models); }
