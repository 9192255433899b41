/* test_controller_runtime.c - the work queue (coalescing, no concurrent
 * processing of a key, delays, per-key backoff, shutdown), the metrics text
 * (both job-info names, counters, histograms, quantiles), flag parsing and the
 * caches' write-through of the operator's own writes. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../controller/workqueue.h"
#include "../../controller/metrics.h"
#include "../../controller/controller.h"
#include "../../controller/cache.h"
#include "kube/resource.h"

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* cache_store/cache_drop: the reply to our own write is visible to the next sync at once,
 * pruned and grouped like a watched object; a reply without a numeric resourceVersion is not. */
static void test_cache_write_through(void **state)
{
    (void)state;
    struct cache_opts o = { .res = &KUBE_RES_PODS, .group_label = "training.kubeflow.org/job-name",
                            .prune = prune_pod };
    struct cache *k = cache_new(NULL, &o);
    assert_non_null(k);
    json_t *pod = json_pack("{s:{s:s, s:s, s:s, s:{s:s}}, s:{s:[]}, s:{s:s}}", "metadata", "name", "pi-worker-0",
                            "namespace", "default", "resourceVersion", "17", "labels",
                            "training.kubeflow.org/job-name", "pi", "spec", "containers", "status", "phase", "Pending");
    cache_store(k, pod);
    json_t *got = cache_get(k, "default/pi", "pi-worker-0");
    assert_non_null(got);
    assert_null(json_object_get(got, "spec")); /* pruned */
    json_decref(got);
    assert_int_equal(cache_count(k), 1);
    cache_drop(k, "default/pi", "pi-worker-0");
    assert_null(cache_get(k, "default/pi", "pi-worker-0"));
    assert_int_equal(cache_count(k), 0);
    json_object_set_new(json_object_get(pod, "metadata"), "resourceVersion", json_string("x17"));
    cache_store(k, pod);
    assert_null(cache_get(k, "default/pi", "pi-worker-0"));
    json_decref(pod);
    cache_free(k);
}

static void test_coalesce(void **state)
{
    (void)state;
    struct workqueue *q = wq_new();
    wq_add(q, "ns/a");
    wq_add(q, "ns/a");
    wq_add(q, "ns/b");
    assert_int_equal(wq_len(q), 2);
    char *k = wq_get(q);
    assert_string_equal(k, "ns/a");
    wq_add(q, "ns/a"); /* re-added while processing: waits until done */
    assert_int_equal(wq_len(q), 1);
    char *k2 = wq_get(q);
    assert_string_equal(k2, "ns/b");
    assert_int_equal(wq_len(q), 0);
    wq_done(q, k);
    assert_int_equal(wq_len(q), 1);
    char *k3 = wq_get(q);
    assert_string_equal(k3, "ns/a");
    wq_done(q, k2);
    wq_done(q, k3);
    free(k);
    free(k2);
    free(k3);
    wq_free(q);
}

static void test_delay_and_backoff(void **state)
{
    (void)state;
    struct workqueue *q = wq_new();
    int64_t t0 = mono_ms();
    wq_add_after(q, "ns/x", 150);
    char *k = wq_get(q);
    int64_t waited = mono_ms() - t0;
    assert_string_equal(k, "ns/x");
    assert_true(waited >= 140 && waited < 2000);
    wq_done(q, k);
    free(k);
    for (int i = 0; i < 5; i++)
        wq_add_rate_limited(q, "ns/y"), free(wq_get(q)), wq_done(q, "ns/y");
    assert_int_equal(wq_retries(q, "ns/y"), 5);
    t0 = mono_ms();
    wq_add_rate_limited(q, "ns/y"); /* 6th retry: 5 ms * 2^5 = 160 ms */
    k = wq_get(q);
    waited = mono_ms() - t0;
    assert_true(waited >= 150);
    wq_done(q, k);
    free(k);
    wq_forget(q, "ns/y");
    assert_int_equal(wq_retries(q, "ns/y"), 0);
    wq_free(q);
}

static void *getter(void *arg)
{
    return wq_get(arg);
}

static void test_shutdown_wakes(void **state)
{
    (void)state;
    struct workqueue *q = wq_new();
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, getter, q), 0);
    struct timespec ts = { 0, 50 * 1000000L };
    nanosleep(&ts, NULL);
    wq_shutdown(q);
    void *r = (void *)1;
    pthread_join(th, &r);
    assert_null(r);
    wq_add(q, "ns/late");
    assert_int_equal(wq_len(q), 0);
    wq_free(q);
}

static void test_metrics_text(void **state)
{
    (void)state;
    metrics_init();
    metrics_inc(M_CREATED);
    metrics_inc(M_CREATED);
    metrics_inc(M_SUCCEEDED);
    metrics_set_leader(1);
    metrics_job_info("default/pi", "default", "pi-launcher-abcde");
    metrics_job_info("default/gone", "default", "gone-launcher-x");
    metrics_job_info("default/gone", "default", NULL);
    metrics_launch_latency(4.2);
    metrics_launch_phase("workersReady", 2.5);
    for (int i = 1; i <= 100; i++)
        metrics_reconcile(i / 1000.0);
    char *t = metrics_render();
    assert_non_null(t);
    assert_non_null(strstr(t, "\nmpi_operator_jobs_created_total 2\n"));
    assert_non_null(strstr(t, "\nmpi_operator_jobs_successful_total 1\n"));
    assert_non_null(strstr(t, "mpi_operator_job_info{launcher=\"pi-launcher-abcde\",namespace=\"default\"} 1\n"));
    assert_non_null(strstr(t, "mpi_operator_job_infos{launcher=\"pi-launcher-abcde\",namespace=\"default\"} 1\n"));
    assert_null(strstr(t, "gone-launcher"));
    assert_non_null(strstr(t, "\nmpi_operator_is_leader 1\n"));
    assert_non_null(strstr(t, "mpi_operator_launch_latency_seconds_bucket{le=\"5\"} 1\n"));
    assert_non_null(strstr(t, "mpi_operator_launch_latency_seconds_bucket{le=\"3\"} 0\n"));
    assert_non_null(strstr(t, "mpi_operator_launch_phase_seconds_bucket{phase=\"workersReady\",le=\"3\"} 1\n"));
    assert_non_null(strstr(t, "mpi_operator_reconcile_duration_seconds{quantile=\"0.5\"} 0.050000\n"));
    assert_non_null(strstr(t, "mpi_operator_reconcile_duration_seconds{quantile=\"0.99\"} 0.099000\n"));
    free(t);
}

static void test_flags(void **state)
{
    (void)state;
    struct options o;
    char *err = NULL;
    char *ok[] = { "mpi-operator", "--namespace", "team", "--threadiness=4", "--monitoring-port", "8080",
                   "--gang-scheduling", "volcano", "--leader-elect=false", "-v", "2", NULL };
    assert_int_equal(options_parse(11, ok, &o, &err), 0);
    assert_string_equal(o.ns, "team");
    assert_int_equal(o.threadiness, 4);
    assert_int_equal(o.monitoring_port, 8080);
    assert_string_equal(o.build.gang, "volcano");
    assert_int_equal(o.leader_elect, 0);
    assert_int_equal(o.lease_s, 15);
    assert_int_equal(o.renew_deadline_s, 5);
    assert_int_equal(o.retry_s, 3);
    char *bad1[] = { "mpi-operator", "--threadiness", "zero", NULL };
    assert_int_equal(options_parse(3, bad1, &o, &err), -1);
    assert_non_null(strstr(err, "--threadiness: expected an integer"));
    char *bad2[] = { "mpi-operator", "--gang-scheduling", "kube-batch", NULL };
    assert_int_equal(options_parse(3, bad2, &o, &err), -1);
    assert_non_null(strstr(err, "--gang-scheduling: expected volcano or scheduler-plugins"));
    char *bad3[] = { "mpi-operator", "--bogus", NULL };
    assert_int_equal(options_parse(2, bad3, &o, &err), -1);
    assert_non_null(strstr(err, "unknown flag --bogus"));
    char *bad4[] = { "mpi-operator", "--lease-duration", "5", "--renew-deadline", "5", NULL };
    assert_int_equal(options_parse(5, bad4, &o, &err), -1);
    assert_non_null(strstr(err, "--renew-deadline"));
    free(err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_coalesce),
        cmocka_unit_test(test_delay_and_backoff),
        cmocka_unit_test(test_shutdown_wakes),
        cmocka_unit_test(test_metrics_text),
        cmocka_unit_test(test_flags),
        cmocka_unit_test(test_cache_write_through),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
