/* cnn_report.c - the statistics behind tf_cnn_benchmarks' images/sec lines. */
#include "cnn_report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, size_t n)
{
    qsort(v, n, sizeof(double), cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int cnn_speed_str(const double *t, size_t n, int batch, char *buf, size_t len)
{
    double *s = malloc((n ? n : 1) * sizeof(double));
    if (!s)
        return -1;
    double mean = 0.0, var = 0.0;
    for (size_t i = 0; i < n; i++) {
        s[i] = t[i] > 0 ? batch / t[i] : 0.0;
        mean += s[i];
    }
    mean = n ? mean / (double)n : 0.0;
    for (size_t i = 0; i < n; i++)
        var += (s[i] - mean) * (s[i] - mean);
    double err = n ? sqrt(var / (double)n) / sqrt((double)n) : 0.0;
    double jitter = 0.0;
    if (n) {
        double med = median(s, n);
        for (size_t i = 0; i < n; i++)
            s[i] = fabs(s[i] - med);
        jitter = 1.4826 * median(s, n);
    }
    free(s);
    snprintf(buf, len, "images/sec: %.1f +/- %.1f (jitter = %.1f)", mean, err, jitter);
    return 0;
}
