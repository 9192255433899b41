/* cnn_report.h - tf_cnn_benchmarks-style output: the header block and the
 * "step images/sec: mean +/- err (jitter = j) loss" lines. */
#ifndef CNN_REPORT_H
#define CNN_REPORT_H
#include <stddef.h>

/* Formats tf_cnn_benchmarks' speed string for per-step times t[0..n-1] (seconds) at
 * `batch` images per step: "images/sec: M +/- E (jitter = J)". M is the mean of the
 * per-step speeds, E their standard deviation / sqrt(n), J = 1.4826 * median absolute
 * deviation. Returns 0, or -1 when out of memory. */
int cnn_speed_str(const double *t, size_t n, int batch, char *buf, size_t len);

#endif
