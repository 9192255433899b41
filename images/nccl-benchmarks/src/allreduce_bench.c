/* allreduce_bench.c - main() of allreduce-bench: an allreduce sweep over message sizes
 * with nccl-tests' all_reduce_perf definitions (time per operation; algbw = bytes / time;
 * busbw = algbw * 2(n-1)/n), out of place, float sum. Every timed iteration uses fresh
 * pseudo-random data (small integers, so the sum is exact in any order) and every result
 * is checked element by element; wrong elements are counted in #wrong.
 * GPU: NCCL on one GPU per rank. CPU: MPI_Allreduce.
 * Exit codes: 0 ok, 1 wrong results, 2 bad options or no usable device, 3 timeout,
 * 4 device/communication error. */
#include "wl_common.h"
#include "wl_dev.h"
#include "wl_hash.h"
#include "wl_opts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct opts {
    size_t minbytes, maxbytes;
    long factor, iters, warmup, seed;
    const char *device;
    int dev_flag, test_corrupt;
    double startup_timeout, op_timeout;
};

#define NOPTS 12
static void opt_table(struct opts *o, struct wl_opt *t)
{
    struct wl_opt tab[NOPTS] = {
        { "minbytes", 'b', WL_OPT_SIZE, &o->minbytes, 4, 68719476736.0, 0, NULL,
          "smallest message in bytes, K/M/G suffixes (default 8)" },
        { "maxbytes", 'e', WL_OPT_SIZE, &o->maxbytes, 4, 68719476736.0, 0, NULL, "largest message in bytes (default 128M)" },
        { "stepfactor", 'f', WL_OPT_LONG, &o->factor, 2, 1024, 0, NULL, "multiply the size by this each step (default 2)" },
        { "iters", 'n', WL_OPT_LONG, &o->iters, 1, 1000000, 0, NULL, "timed and checked iterations per size (default 20)" },
        { "warmup_iters", 'w', WL_OPT_LONG, &o->warmup, 0, 1000000, 0, NULL, "untimed iterations per size (default 5)" },
        { "device", 0, WL_OPT_STRING, &o->device, 0, 0, 0, "cpu|gpu", "cpu or gpu (default: gpu in -gpu builds, else cpu)" },
        { "cpu", 0, WL_OPT_FLAG, &o->dev_flag, 0, 0, 1, NULL, "same as --device=cpu (MPI_Allreduce)" },
        { "gpu", 0, WL_OPT_FLAG, &o->dev_flag, 0, 0, 2, NULL, "same as --device=gpu (NCCL)" },
        { "seed", 0, WL_OPT_LONG, &o->seed, 0, 2147483647, 0, NULL, "data seed (default 1)" },
        { "startup_timeout", 0, WL_OPT_DOUBLE, &o->startup_timeout, 1, 86400, 0, NULL,
          "seconds to wait for all ranks at the first collective (default 60)" },
        { "op_timeout", 0, WL_OPT_DOUBLE, &o->op_timeout, 1, 86400, 0, NULL,
          "seconds one GPU operation may take (default 300)" },
        { "test_corrupt", 0, WL_OPT_FLAG, &o->test_corrupt, 0, 0, 1, NULL,
          "testing: rank 0 alters one result element per iteration (the check must count it)" },
    };
    memcpy(t, tab, sizeof(tab));
}

static char *parse(struct opts *o, int argc, char **argv, int *help)
{
    memset(o, 0, sizeof(*o));
    o->minbytes = 8;
    o->maxbytes = (size_t)128 << 20;
    o->factor = 2;
    o->iters = 20;
    o->warmup = 5;
    o->seed = 1;
    o->startup_timeout = 60;
    o->op_timeout = 300;
    struct wl_opt t[NOPTS];
    opt_table(o, t);
    char *err = NULL;
    int rc = wl_opts_parse(t, NOPTS, argc, argv, &err);
    *help = rc == 1;
    if (rc < 0)
        return err ? err : strdup("invalid options");
    if (rc == 0 && o->minbytes > o->maxbytes) {
        if (asprintf(&err, "--minbytes (%zu) is larger than --maxbytes (%zu)", o->minbytes, o->maxbytes) < 0)
            err = NULL;
        return err ? err : strdup("invalid sizes");
    }
    if (o->dev_flag)
        o->device = o->dev_flag == 1 ? "cpu" : "gpu";
    if (!o->device)
        o->device = wl_have_gpu() ? "gpu" : "cpu";
    return NULL;
}

static int config_ok(const struct wl_ctx *c, const struct opts *o)
{
    struct wl_param p[] = {
        { "--minbytes", (double)o->minbytes },     { "--maxbytes", (double)o->maxbytes },
        { "--stepfactor", (double)o->factor },     { "--iters", (double)o->iters },
        { "--warmup_iters", (double)o->warmup },   { "--seed", (double)o->seed },
        { "--device", !strcmp(o->device, "gpu") },
    };
    return wl_check_agreement(c, p, (int)(sizeof(p) / sizeof(p[0]))) == 0;
}

struct result {
    double usec;
    uint64_t wrong;
};

/* One size: warm-up, then iters x (fresh data, barrier, timed allreduce, check). */
static int one_size(struct wl_dev *d, const struct opts *o, size_t count, float *send, float *recv, struct result *res)
{
    const struct wl_dev_ops *ops = d->ops;
    const struct wl_ctx *c = d->ctx;
    double total = 0.0;
    uint64_t wrong = 0;
    for (long it = -o->warmup; it < o->iters; it++) {
        uint64_t base = wl_mix64(((uint64_t)o->seed << 40) ^ ((uint64_t)count << 8) ^ (uint64_t)(it + o->warmup));
        if (ops->fill_hash(d, send, count, wl_rank_seed(base, c->rank), 1.0f) != 0 || ops->sync(d) != 0 ||
            MPI_Barrier(MPI_COMM_WORLD) != MPI_SUCCESS)
            return -1;
        double t0 = wl_now();
        if (ops->allreduce(d, send, recv, count, WL_SUM) != 0 || ops->sync(d) != 0)
            return -1;
        double t = wl_now() - t0;
        uint64_t bad = 0;
        if (it < 0)
            continue;
        if (o->test_corrupt && c->rank == 0) {
            float v = 0.5f; /* never a sum of integers */
            if (ops->from_host(d, recv + count / 2, &v, 1) != 0)
                return -1;
        }
        if (ops->check_sum(d, recv, count, base, c->size, 1.0f, &bad) != 0)
            return -1;
        total += t;
        wrong += bad;
    }
    double mine = total / (double)o->iters, worst = 0.0;
    uint64_t all_wrong = 0;
    if (MPI_Allreduce(&mine, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD) != MPI_SUCCESS ||
        MPI_Allreduce(&wrong, &all_wrong, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD) != MPI_SUCCESS)
        return -1;
    res->usec = worst * 1e6;
    res->wrong = all_wrong;
    return 0;
}

static void print_preamble(const struct opts *o, const struct wl_dev *d)
{
    const struct wl_ctx *c = d->ctx;
    if (c->rank == 0) {
        printf("# allreduce-bench (mpi-k8s): all_reduce_perf definitions, out-of-place, %s\n",
               !strcmp(d->kind, "gpu") ? "NCCL" : "MPI_Allreduce");
        printf("# nRanks %d minBytes %zu maxBytes %zu step: %ld(factor) warmup iters: %ld "
               "iters: %ld validation: every iteration, fresh random data\n#\n# Using devices\n",
               c->size, o->minbytes, o->maxbytes, o->factor, o->warmup, o->iters);
    }
    wl_dev_print_all(d);
    if (c->rank == 0)
        printf("#\n#%12s %13s %9s %7s %10s %9s %9s %8s\n#%12s %13s %9s %7s %10s %9s %9s %8s\n", "size", "count", "type",
               "redop", "time", "algbw", "busbw", "#wrong", "(B)", "(elements)", "", "", "(us)", "(GB/s)", "(GB/s)", "");
}

static int sweep(struct wl_dev *d, const struct opts *o)
{
    const struct wl_ctx *c = d->ctx;
    size_t maxcount = o->maxbytes / sizeof(float);
    float *send = NULL, *recv = NULL;
    int ok = d->ops->alloc(d, maxcount, &send) == 0 && d->ops->alloc(d, maxcount, &recv) == 0;
    if (!wl_all_ok(ok)) {
        if (send)
            d->ops->release(d, send);
        if (recv)
            d->ops->release(d, recv);
        return 4;
    }
    print_preamble(o, d);
    uint64_t wrong = 0;
    double busbw_sum = 0.0;
    int nsizes = 0;
    for (size_t bytes = o->minbytes; bytes <= o->maxbytes; bytes *= (size_t)o->factor) {
        size_t count = bytes / sizeof(float);
        struct result r = { 0.0, 0 };
        if (one_size(d, o, count, send, recv, &r) != 0)
            MPI_Abort(MPI_COMM_WORLD, 4);
        double algbw = (double)(count * sizeof(float)) / (r.usec * 1e-6) / 1e9;
        double busbw = algbw * 2.0 * (c->size - 1) / c->size;
        if (c->rank == 0)
            printf(" %12zu %13zu %9s %7s %10.2f %9.2f %9.2f %8llu\n", count * sizeof(float), count, "float", "sum", r.usec,
                   algbw, busbw, (unsigned long long)r.wrong);
        wrong += r.wrong;
        busbw_sum += busbw;
        nsizes++;
        if (bytes > SIZE_MAX / (size_t)o->factor)
            break;
    }
    if (c->rank == 0) {
        printf("# Out of bounds values : %llu %s\n", (unsigned long long)wrong, wrong ? "FAILED" : "OK");
        printf("# Avg bus bandwidth    : %.4f\n#\n", nsizes ? busbw_sum / nsizes : 0.0);
    }
    if (wrong && c->rank == 0)
        fprintf(stderr, "%s: error: %llu wrong values in allreduce results\n", c->prog, (unsigned long long)wrong);
    d->ops->release(d, send);
    d->ops->release(d, recv);
    return wrong ? 1 : 0;
}

int main(int argc, char **argv)
{
    struct wl_ctx c;
    struct opts o;
    int help = 0, rc = 2;
    wl_init(&c, wl_basename(argv[0], "allreduce-bench"), &argc, &argv);
    char *err = parse(&o, argc, argv, &help);
    wl_startup_barrier(&c, o.startup_timeout);
    if (!wl_all_ok(!help)) {
        if (c.rank == 0) {
            struct wl_opt t[NOPTS];
            opt_table(&o, t);
            wl_opts_usage(c.prog,
                          "Allreduce bandwidth sweep with nccl-tests' all_reduce_perf "
                          "definitions and full result checking (mpi-k8s).",
                          t, NOPTS);
        }
        rc = 0;
    } else if (wl_collective_error(&c, err) == 0 && config_ok(&c, &o)) {
        struct wl_dev d;
        int opened = !strcmp(o.device, "gpu") ? wl_dev_open_gpu(&d, &c, o.op_timeout) : wl_dev_open_cpu(&d, &c, 1);
        if (opened == 0) {
            rc = sweep(&d, &o);
            d.ops->close(&d);
        }
    }
    free(err);
    MPI_Finalize();
    return rc;
}
