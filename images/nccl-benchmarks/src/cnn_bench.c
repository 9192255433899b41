/* cnn_bench.c - main() of cnn-bench: synthetic data-parallel CNN training with the
 * compute and communication profile of a real model, printed in tf_cnn_benchmarks'
 * format, plus a small model trained for real whose loss must fall and whose weights
 * must agree on every rank at the end.
 * Exit codes: 0 ok, 1 weights differ between ranks, 2 bad options or no usable device,
 * 3 timeout, 4 device/communication error. */
#include "cnn_models.h"
#include "cnn_report.h"
#include "cnn_work.h"
#include "wl_common.h"
#include "wl_dev.h"
#include "wl_opts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define IMAGENET_TRAIN_IMAGES 1281167.0

struct opts {
    const char *model, *variable_update, *device, *data_format, *optimizer;
    long batch, num_batches, warmup, display_every, cpu_threads, gemm_dim, seed, num_gpus;
    double cpu_scale, lr, startup_timeout, op_timeout;
    int dev_flag; /* 0 unset, 1 cpu, 2 gpu */
    int test_corrupt;
};

#define NOPTS 20
static void opt_table(struct opts *o, struct wl_opt *t)
{
    struct wl_opt tab[NOPTS] = {
        { "model", 0, WL_OPT_STRING, &o->model, 0, 0, 0, cnn_model_names(), "model profile (default resnet50)" },
        { "batch_size", 0, WL_OPT_LONG, &o->batch, 1, 65536, 0, NULL,
          "images per device per step (default: model's, 64; alexnet 512)" },
        { "num_batches", 0, WL_OPT_LONG, &o->num_batches, 1, 10000000, 0, NULL, "timed steps (default 100)" },
        { "num_warmup_batches", 0, WL_OPT_LONG, &o->warmup, 0, 1000000, 0, NULL, "untimed steps first (default 10)" },
        { "display_every", 0, WL_OPT_LONG, &o->display_every, 1, 10000000, 0, NULL,
          "print a line every N steps (default 10)" },
        { "variable_update", 0, WL_OPT_STRING, &o->variable_update, 0, 0, 0, "horovod",
          "gradient exchange (horovod: allreduce)" },
        { "device", 0, WL_OPT_STRING, &o->device, 0, 0, 0, "cpu|gpu", "cpu or gpu (default: gpu in -gpu builds, else cpu)" },
        { "cpu", 0, WL_OPT_FLAG, &o->dev_flag, 0, 0, 1, NULL, "same as --device=cpu" },
        { "gpu", 0, WL_OPT_FLAG, &o->dev_flag, 0, 0, 2, NULL, "same as --device=gpu" },
        { "cpu_scale", 0, WL_OPT_DOUBLE, &o->cpu_scale, 1e-7, 1, 0, NULL,
          "on CPU, fraction of the model's FLOPs and gradient size used (default 0.001)" },
        { "cpu_threads", 0, WL_OPT_LONG, &o->cpu_threads, 1, 256, 0, NULL, "OpenBLAS threads per rank on CPU (default 1)" },
        { "gemm_dim", 0, WL_OPT_LONG, &o->gemm_dim, 16, 16384, 0, NULL, "GEMM size d (default 256 on CPU, 2048 on GPU)" },
        { "learning_rate", 0, WL_OPT_DOUBLE, &o->lr, 1e-6, 10, 0, NULL,
          "SGD learning rate of the trained model (default 0.2)" },
        { "seed", 0, WL_OPT_LONG, &o->seed, 0, 2147483647, 0, NULL, "data set and initialisation seed (default 1234)" },
        { "startup_timeout", 0, WL_OPT_DOUBLE, &o->startup_timeout, 1, 86400, 0, NULL,
          "seconds to wait for all ranks at the first collective (default 60)" },
        { "op_timeout", 0, WL_OPT_DOUBLE, &o->op_timeout, 1, 86400, 0, NULL,
          "seconds a GPU step or NCCL call may take (default 300)" },
        { "data_format", 0, WL_OPT_STRING, &o->data_format, 0, 0, 0, "NCHW|NHWC",
          "accepted for compatibility; printed in the header" },
        { "optimizer", 0, WL_OPT_STRING, &o->optimizer, 0, 0, 0, "sgd", "sgd (the only one)" },
        { "test_corrupt", 0, WL_OPT_FLAG, &o->test_corrupt, 0, 0, 1, NULL,
          "testing: the last rank alters one weight before the checksum (must fail)" },
        { "num_gpus", 0, WL_OPT_LONG, &o->num_gpus, 1, 1, 0, NULL, "GPUs per rank: 1 (horovod runs one rank per GPU)" },
    };
    memcpy(t, tab, sizeof(tab));
}

static void defaults(struct opts *o)
{
    memset(o, 0, sizeof(*o));
    o->model = "resnet50";
    o->variable_update = "horovod";
    o->data_format = "NCHW";
    o->optimizer = "sgd";
    o->num_batches = 100;
    o->warmup = 10;
    o->display_every = 10;
    o->cpu_threads = 1;
    o->seed = 1234;
    o->num_gpus = 1;
    o->cpu_scale = 0.001;
    o->lr = 0.2;
    o->startup_timeout = 60;
    o->op_timeout = 300;
}

/* Parses argv into o; returns a malloc'd error message or NULL; *help set for --help. */
static char *parse(struct opts *o, int argc, char **argv, int *help)
{
    struct wl_opt t[NOPTS];
    char *err = NULL;
    opt_table(o, t);
    int rc = wl_opts_parse(t, NOPTS, argc, argv, &err);
    *help = rc == 1;
    if (rc != 0)
        return rc < 0 ? (err ? err : strdup("invalid options")) : NULL;
    if (o->dev_flag)
        o->device = o->dev_flag == 1 ? "cpu" : "gpu";
    if (!o->device)
        o->device = wl_have_gpu() ? "gpu" : "cpu";
    if (!o->batch)
        o->batch = cnn_model_find(o->model)->default_batch;
    return NULL;
}

static void print_devices(const struct wl_ctx *c, const char *kind)
{
    printf("Devices:     [");
    for (int r = 0; r < c->size; r++)
        printf("%s'horovod/%s:%d'", r ? ", " : "", kind, r);
    printf("]\n");
}

static void print_header(const struct wl_ctx *c, const struct opts *o, const struct cnn_model *m, const struct cnn_work *w,
                         const struct wl_dev *d)
{
    int gpu = !strcmp(d->kind, "gpu");
    double scale = gpu ? 1.0 : o->cpu_scale;
    printf("TensorFlow:  none (mpi-k8s cnn-bench 1.0: C, MPI + %s)\n", gpu ? "cuBLAS + NCCL" : "OpenBLAS + MPI_Allreduce");
    printf("Model:       %s\n", m->name);
    printf("Dataset:     imagenet (synthetic)\n");
    printf("Mode:        training\n");
    printf("SingleSess:  False\n");
    printf("Batch size:  %ld global\n", o->batch * c->size);
    printf("             %ld per device\n", o->batch);
    printf("Num batches: %ld\n", o->num_batches);
    printf("Num epochs:  %.2f\n", (double)o->num_batches * o->batch * c->size / IMAGENET_TRAIN_IMAGES);
    print_devices(c, gpu ? "gpu" : "cpu");
    printf("NUMA bind:   False\n");
    printf("Data format: %s\n", o->data_format);
    printf("Optimizer:   %s\n", o->optimizer);
    printf("Variables:   %s\n", o->variable_update);
    if (!gpu)
        printf("CPU scale:   %g (compute and gradient are this fraction of %s's)\n", scale, m->name);
    printf("Compute:     %.3f GFLOP per step per device = 6 x %.2f GMAC x %ld images%s, as "
           "%ld+%d rows of %s sgemm layers (d = %d)\n",
           w->step_flops / 1e9, m->fwd_gmacs, o->batch, gpu ? "" : " x cpu_scale", w->full_layers * w->dim, w->rem_rows,
           gpu ? "cuBLAS" : "OpenBLAS", w->dim);
    printf("Allreduce:   %zu floats (%.1f MB) averaged per step with %s (%llu parameters%s)\n", w->ngrad,
           w->ngrad * 4.0 / 1e6, gpu ? "NCCL" : "MPI_Allreduce", (unsigned long long)m->params, gpu ? "" : " x cpu_scale");
    printf("Trainer:     softmax regression, %d features x %d classes, synthetic Gaussian "
           "clusters (seed %ld), lr %g; total_loss is its cross-entropy\n",
           CNN_TRAINER_DIM, CNN_TRAINER_CLASSES, o->seed, o->lr);
    printf("==========\n");
}

static void print_step(const struct wl_ctx *c, long i, const double *times, int batch, double loss)
{
    char speed[128];
    if (cnn_speed_str(times, (size_t)i, batch, speed, sizeof(speed)) != 0) {
        wl_error(c, "out of memory");
        MPI_Abort(MPI_COMM_WORLD, 4);
    }
    printf("%ld\t%s\t%.3f\n", i, speed, loss);
}

/* Warm-up and timed steps; fills times[0..num_batches-1]; returns the timed wall time. */
static double train(const struct wl_ctx *c, const struct opts *o, struct cnn_work *w, double *times)
{
    if (c->rank == 0)
        printf("Generating training model\nInitializing graph\nRunning warm up\n");
    double t_start = 0.0;
    for (long s = 0; s < o->warmup + o->num_batches; s++) {
        if (s == o->warmup) {
            if (c->rank == 0)
                printf("Done warm up\nStep\tImg/sec\ttotal_loss\n");
            t_start = wl_now();
        }
        double loss = 0.0, t0 = wl_now();
        if (cnn_work_step(w, s, &loss) != 0)
            MPI_Abort(MPI_COMM_WORLD, 4);
        if (s < o->warmup)
            continue;
        long i = s - o->warmup + 1;
        times[i - 1] = wl_now() - t0;
        if (i == 1 || i % o->display_every == 0)
            print_step(c, i, times, (int)o->batch, loss);
    }
    return wl_now() - t_start;
}

/* Prints each rank's weights checksum; returns 0 when all ranks agree, else 1. */
static int check_weights(const struct wl_ctx *c, struct cnn_work *w, int corrupt)
{
    uint64_t h = 0;
    if (corrupt && c->rank == c->size - 1)
        w->tr.w[0] += 1.0f;
    if (cnn_work_checksum(w, &h) != 0)
        MPI_Abort(MPI_COMM_WORLD, 4);
    printf("rank %d: weights checksum: 0x%016llx\n", c->rank, (unsigned long long)h);
    int same = wl_all_equal_u64(h);
    if (c->rank == 0)
        printf("checksums match: %s (%d ranks)\n", same ? "yes" : "no", c->size);
    if (!same && c->rank == 0)
        fprintf(stderr,
                "%s: error: the ranks' weights differ after training: the allreduce did "
                "not give every rank the same result\n",
                c->prog);
    return same ? 0 : 1;
}

static int run(const struct wl_ctx *c, const struct opts *o, struct wl_dev *d)
{
    const struct cnn_model *m = cnn_model_find(o->model);
    int gpu = !strcmp(d->kind, "gpu");
    double scale = gpu ? 1.0 : o->cpu_scale;
    double flops = 6.0 * m->fwd_gmacs * 1e9 * (double)o->batch * scale;
    size_t ngrad = (size_t)((double)m->params * scale + 0.5);
    int dim = o->gemm_dim ? (int)o->gemm_dim : gpu ? 2048 : 256;
    struct cnn_work w;
    memset(&w, 0, sizeof(w));
    double *times = calloc((size_t)o->num_batches, sizeof(double));
    int ok = times && cnn_work_init(&w, d, flops, ngrad, dim, (int)o->batch, (uint64_t)o->seed, o->lr) == 0;
    if (!times)
        wl_error(c, "out of memory");
    if (!wl_all_ok(ok)) {
        cnn_work_free(&w);
        free(times);
        return 4;
    }
    if (c->rank == 0)
        print_header(c, o, m, &w, d);
    double elapsed = train(c, o, &w, times);
    double mine = elapsed > 0 ? (double)o->num_batches * o->batch / elapsed : 0.0, total = 0.0;
    /* the rank's own share of the total (its wall rate, not the step lines' mean of rates) */
    printf("rank %d: images/sec: %.2f\n", c->rank, mine);
    MPI_Reduce(&mine, &total, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (c->rank == 0)
        printf("----------------------------------------------------------------\n"
               "total images/sec: %.2f\n",
               total);
    MPI_Barrier(MPI_COMM_WORLD); /* the checksum lines follow the total, as in the seed's log */
    int rc = check_weights(c, &w, o->test_corrupt);
    cnn_work_free(&w);
    free(times);
    return rc;
}

static int config_ok(const struct wl_ctx *c, const struct opts *o)
{
    const struct cnn_model *m = cnn_model_find(o->model);
    struct wl_param p[] = {
        { "--model", cnn_model_index(m) },
        { "--batch_size", (double)o->batch },
        { "--num_batches", (double)o->num_batches },
        { "--num_warmup_batches", (double)o->warmup },
        { "--display_every", (double)o->display_every },
        { "--device", !strcmp(o->device, "gpu") },
        { "--cpu_scale", o->cpu_scale },
        { "--gemm_dim", (double)o->gemm_dim },
        { "--learning_rate", o->lr },
        { "--seed", (double)o->seed },
    };
    return wl_check_agreement(c, p, (int)(sizeof(p) / sizeof(p[0]))) == 0;
}

int main(int argc, char **argv)
{
    struct wl_ctx c;
    struct opts o;
    int help = 0, rc = 2;
    wl_init(&c, wl_basename(argv[0], "cnn-bench"), &argc, &argv);
    defaults(&o);
    char *err = parse(&o, argc, argv, &help);
    wl_startup_barrier(&c, o.startup_timeout);
    if (!wl_all_ok(!help)) {
        if (c.rank == 0) {
            struct wl_opt t[NOPTS];
            opt_table(&o, t);
            wl_opts_usage(c.prog,
                          "Synthetic data-parallel CNN training benchmark in "
                          "tf_cnn_benchmarks' output format (mpi-k8s).",
                          t, NOPTS);
        }
        rc = 0;
    } else if (wl_collective_error(&c, err) == 0 && config_ok(&c, &o)) {
        struct wl_dev d;
        int opened =
            !strcmp(o.device, "gpu") ? wl_dev_open_gpu(&d, &c, o.op_timeout) : wl_dev_open_cpu(&d, &c, (int)o.cpu_threads);
        if (opened == 0) {
            rc = run(&c, &o, &d);
            d.ops->close(&d);
        }
    }
    free(err);
    MPI_Finalize();
    return rc;
}
