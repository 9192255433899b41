/* cnn_models.h - the compute and communication profile of the CNNs tf_cnn_benchmarks
 * offers: per-image forward cost and parameter count of the published architectures. */
#ifndef CNN_MODELS_H
#define CNN_MODELS_H
#include <stdint.h>

struct cnn_model {
    const char *name;  /* tf_cnn_benchmarks' --model name */
    double fwd_gmacs;  /* forward multiply-accumulates per image, in 10^9 */
    uint64_t params;   /* trainable parameters (= gradient floats per step) */
    int image_size;    /* input height = width */
    int default_batch; /* tf_cnn_benchmarks' default per-device batch size */
};

/* The model named name, or NULL. */
const struct cnn_model *cnn_model_find(const char *name);

/* "resnet50|resnet101|..." for help and error messages. */
const char *cnn_model_names(void);

/* Index of m in the table (for cross-rank agreement checks). */
int cnn_model_index(const struct cnn_model *m);

#endif
