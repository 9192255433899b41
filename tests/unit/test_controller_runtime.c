/* test_controller_runtime.c - the work queue (coalescing, no concurrent
 * processing of a key, delays, per-key backoff, shutdown), the metrics text
 * (both job-info names, counters, histograms, quantiles), flag parsing and the
 * informers' write-through of the operator's own writes, their compact object
 * store, what pruning keeps of a pod, and which failed creates are read back by name. */
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
#include "../../controller/kind.h"
#include "../../lib/informer_store.h"
#include "kube/informer.h"
#include "kube/resource.h"
#include "../../controller/prune.h"
#include "../../controller/apply.h"

/* A pod informer as the controller makes it (compact, pruned, grouped by job), not started. */
static struct kube_informer *pod_cache(void)
{
    struct kube_informer_opts io = { .index = kind_owned_group, .transform = prune_pod, .compact = 1 };
    return kube_informer_new(NULL, &KUBE_RES_PODS, &io, NULL, NULL);
}

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* kube_informer_store/kube_informer_drop: the reply to our own write is visible to the next sync at once,
 * pruned and grouped like a watched object; a reply without a numeric resourceVersion is not. */
static void test_cache_write_through(void **state)
{
    (void)state;
    struct kube_informer *k = pod_cache();
    assert_non_null(k);
    json_t *pod = json_pack("{s:{s:s, s:s, s:s, s:{s:s}}, s:{s:[]}, s:{s:s}}", "metadata", "name", "pi-worker-0",
                            "namespace", "default", "resourceVersion", "17", "labels", "training.kubeflow.org/job-name",
                            "pi", "spec", "containers", "status", "phase", "Pending");
    kube_informer_store(k, pod);
    json_t *got = kube_informer_get_in(k, "default/pi", "pi-worker-0");
    assert_non_null(got);
    assert_null(json_object_get(got, "spec")); /* pruned */
    json_decref(got);
    assert_int_equal(kube_informer_count(k), 1);
    kube_informer_drop(k, "default/pi", "pi-worker-0");
    assert_null(kube_informer_get_in(k, "default/pi", "pi-worker-0"));
    assert_int_equal(kube_informer_count(k), 0);
    json_object_set_new(json_object_get(pod, "metadata"), "resourceVersion", json_string("x17"));
    kube_informer_store(k, pod);
    assert_null(kube_informer_get_in(k, "default/pi", "pi-worker-0"));
    json_decref(pod);
    kube_informer_free(k);
}

static void count_cb(const char *group, const struct store_entry *e, void *ud)
{
    (void)group;
    (void)e;
    (*(int *)ud)++;
}

static void key_cb(const char *key, void *ud)
{
    (void)key;
    (*(int *)ud)++;
}

/* The store: put replaces, del removes (and the group with its last object), groups and
 * counts stay exact across the bucket array's growth (3,000 groups from 64 buckets). */
/* The text stored as name in group key (NULL when absent); *rv (if given) its resourceVersion. */
static const char *get_text(const struct store *s, const char *key, const char *name, unsigned long long *rv)
{
    const struct store_entry *e = Kube_store_get(s, key, name);
    if (e && rv)
        *rv = e->rv;
    return e ? Kube_store_entry_text(e) : NULL;
}

static void test_objstore(void **state)
{
    (void)state;
    struct store *s = Kube_store_new();
    assert_non_null(s);
    char key[64], name[64];
    for (int i = 0; i < 3000; i++) {
        snprintf(key, sizeof key, "ns/job-%d", i);
        for (int j = 0; j < 3; j++) {
            snprintf(name, sizeof name, "job-%d-worker-%d", i, j);
            assert_int_equal(Kube_store_put(s, key, name, NULL, "{\"a\":1}", (unsigned long long)(i * 10 + j)), 0);
        }
    }
    assert_int_equal(Kube_store_count(s), 9000);
    unsigned long long rv = 0;
    assert_string_equal(get_text(s, "ns/job-2999", "job-2999-worker-2", &rv), "{\"a\":1}");
    assert_int_equal(rv, 29992);
    assert_int_equal(Kube_store_put(s, "ns/job-7", "job-7-worker-1", NULL, "{\"b\":2}", 99), 0); /* replace */
    assert_int_equal(Kube_store_count(s), 9000);
    assert_string_equal(get_text(s, "ns/job-7", "job-7-worker-1", &rv), "{\"b\":2}");
    assert_int_equal(rv, 99);
    int n = 0;
    Kube_store_foreach(s, "ns/job-7", count_cb, &n);
    assert_int_equal(n, 3);
    assert_null(get_text(s, "ns/job-7", "job-7-worker-9", NULL));
    assert_null(get_text(s, "ns/job-3000", "job-3000-worker-0", NULL));
    assert_int_equal(Kube_store_del(s, "ns/job-7", "job-7-worker-9"), 0);
    for (int j = 0; j < 3; j++) {
        snprintf(name, sizeof name, "job-7-worker-%d", j);
        assert_int_equal(Kube_store_del(s, "ns/job-7", name), 1);
    }
    assert_int_equal(Kube_store_has_group(s, "ns/job-7"), 0);
    assert_int_equal(Kube_store_has_group(s, "ns/job-8"), 1);
    assert_int_equal(Kube_store_count(s), 8997);
    n = 0;
    Kube_store_groups_foreach(s, key_cb, &n);
    assert_int_equal(n, 2999);
    Kube_store_free(s);
}

/* A pod as the caches keep it: the name back from the store's key, the role and
 * index labels, the controller reference's kind/uid, phase, conditions' type/status/time,
 * termination records; no spec, other labels, uid, annotations or other owner references. */
static void test_cache_pruned_pod(void **state)
{
    (void)state;
    struct kube_informer *k = pod_cache();
    assert_non_null(k);
    json_t *pod = json_loads(
        "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"pi-worker-1\",\"namespace\":\"team\","
        "\"uid\":\"u1\",\"resourceVersion\":\"42\",\"creationTimestamp\":\"2026-11-30T12:00:00Z\","
        "\"annotations\":{\"a\":\"b\"},\"labels\":{\"training.kubeflow.org/job-name\":\"pi\","
        "\"training.kubeflow.org/job-role\":\"worker\",\"training.kubeflow.org/replica-index\":\"1\","
        "\"mpi_job_name\":\"pi\"},"
        "\"ownerReferences\":[{\"apiVersion\":\"v1\",\"kind\":\"Other\",\"name\":\"x\",\"uid\":\"u-x\"},"
        "{\"apiVersion\":\"kubeflow.org/v2beta1\",\"kind\":\"MPIJob\",\"name\":\"pi\",\"uid\":\"u-pi\",\"controller\":true,"
        "\"blockOwnerDeletion\":true}]},\"spec\":{\"containers\":[{\"name\":\"w\"}]},"
        "\"status\":{\"phase\":\"Running\",\"qosClass\":\"BestEffort\","
        "\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\","
        "\"lastTransitionTime\":\"2026-11-30T12:00:05Z\",\"lastProbeTime\":null}],\"containerStatuses\":[{\"name\":\"w\","
        "\"image\":\"i\",\"state\":{\"running\":{}},\"lastState\":{\"terminated\":{\"exitCode\":3}}}]}}",
        0, NULL);
    assert_non_null(pod);
    kube_informer_store(k, pod);
    json_t *got = kube_informer_get_in(k, "team/pi", "pi-worker-1");
    assert_non_null(got);
    json_t *want = json_loads(
        "{\"metadata\":{\"name\":\"pi-worker-1\",\"namespace\":\"team\",\"resourceVersion\":\"42\","
        "\"creationTimestamp\":\"2026-11-30T12:00:00Z\",\"labels\":{\"training.kubeflow.org/job-role\":\"worker\","
        "\"training.kubeflow.org/replica-index\":\"1\"},\"ownerReferences\":[{\"kind\":\"MPIJob\",\"uid\":\"u-pi\","
        "\"controller\":true}]},\"status\":{\"phase\":\"Running\",\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\","
        "\"lastTransitionTime\":\"2026-11-30T12:00:05Z\"}],\"containerStatuses\":[{\"name\":\"w\","
        "\"lastState\":{\"terminated\":{\"exitCode\":3}}}]}}",
        0, NULL);
    assert_non_null(want);
    char *g = json_dumps(got, JSON_SORT_KEYS | JSON_COMPACT), *w = json_dumps(want, JSON_SORT_KEYS | JSON_COMPACT);
    assert_string_equal(g, w);
    json_t *grp = kube_informer_group(k, "team/pi");
    assert_int_equal(json_array_size(grp), 1);
    assert_true(json_equal(json_array_get(grp, 0), want));
    free(g);
    free(w);
    json_decref(grp);
    json_decref(want);
    json_decref(got);
    json_decref(pod);
    kube_informer_free(k);
}

/* A blocked pod keeps why (controller/blocked.c): PodScheduled=False's reason and message, a
 * blocking waiting state with its image; ContainerCreating and True conditions' texts go. */
static void test_prune_pod_blocked(void **state)
{
    (void)state;
    json_t *pod = json_loads(
        "{\"metadata\":{\"name\":\"p\"},\"status\":{\"phase\":\"Pending\",\"conditions\":[{\"type\":\"PodScheduled\","
        "\"status\":\"False\",\"reason\":\"Unschedulable\",\"message\":\"0/1 nodes are available\","
        "\"lastTransitionTime\":\"t\"},{\"type\":\"Initialized\",\"status\":\"True\",\"reason\":\"x\",\"message\":\"y\"}],"
        "\"initContainerStatuses\":[{\"name\":\"i\",\"image\":\"a\","
        "\"state\":{\"waiting\":{\"reason\":\"PodInitializing\"}}}],"
        "\"containerStatuses\":[{\"name\":\"c\",\"image\":\"b:1\",\"imageID\":\"\",\"state\":{\"waiting\":"
        "{\"reason\":\"ImagePullBackOff\",\"message\":\"Back-off pulling image \\\"b:1\\\"\"}}}]}}",
        0, NULL);
    assert_non_null(pod);
    prune_pod(pod);
    json_t *want = json_loads(
        "{\"metadata\":{\"name\":\"p\"},\"status\":{\"phase\":\"Pending\",\"conditions\":[{\"type\":\"PodScheduled\","
        "\"status\":\"False\",\"reason\":\"Unschedulable\",\"message\":\"0/1 nodes are available\","
        "\"lastTransitionTime\":\"t\"},{\"type\":\"Initialized\",\"status\":\"True\"}],"
        "\"initContainerStatuses\":[{\"name\":\"i\"}],\"containerStatuses\":[{\"name\":\"c\",\"image\":\"b:1\","
        "\"state\":{\"waiting\":{\"reason\":\"ImagePullBackOff\",\"message\":\"Back-off pulling image \\\"b:1\\\"\"}}}]}}",
        0, NULL);
    assert_non_null(want);
    char *g = json_dumps(pod, JSON_SORT_KEYS | JSON_COMPACT), *w = json_dumps(want, JSON_SORT_KEYS | JSON_COMPACT);
    assert_string_equal(g, w);
    free(g);
    free(w);
    json_decref(want);
    json_decref(pod);
}

/* A worker taken away keeps who did it: DisruptionTarget True's reason and message (the job's
 * failure and restart records say "preempted", "evicted", ...: kube/poddisrupt.h). */
static void test_prune_pod_disrupted(void **state)
{
    (void)state;
    json_t *pod = json_loads("{\"metadata\":{\"name\":\"p\"},\"status\":{\"phase\":\"Failed\",\"conditions\":["
                             "{\"type\":\"DisruptionTarget\",\"status\":\"True\",\"reason\":\"PreemptionByScheduler\","
                             "\"message\":\"m\",\"lastTransitionTime\":\"t\",\"observedGeneration\":1}]}}",
                             0, NULL);
    assert_non_null(pod);
    prune_pod(pod);
    char *g = json_dumps(pod, JSON_SORT_KEYS | JSON_COMPACT);
    assert_string_equal(g, "{\"metadata\":{\"name\":\"p\"},\"status\":{\"conditions\":[{\"lastTransitionTime\":\"t\","
                           "\"message\":\"m\",\"reason\":\"PreemptionByScheduler\",\"status\":\"True\",\"type\":"
                           "\"DisruptionTarget\"}],\"phase\":\"Failed\"}}");
    free(g);
    json_decref(pod);
}

static void test_coalesce(void **state)
{
    (void)state;
    struct workqueue *q = workqueue_new();
    workqueue_add(q, "ns/a");
    workqueue_add(q, "ns/a");
    workqueue_add(q, "ns/b");
    assert_int_equal(workqueue_len(q), 2);
    char *k = workqueue_get(q);
    assert_string_equal(k, "ns/a");
    workqueue_add(q, "ns/a"); /* re-added while processing: waits until done */
    assert_int_equal(workqueue_len(q), 1);
    char *k2 = workqueue_get(q);
    assert_string_equal(k2, "ns/b");
    assert_int_equal(workqueue_len(q), 0);
    workqueue_done(q, k);
    assert_int_equal(workqueue_len(q), 1);
    char *k3 = workqueue_get(q);
    assert_string_equal(k3, "ns/a");
    workqueue_done(q, k2);
    workqueue_done(q, k3);
    free(k);
    free(k2);
    free(k3);
    workqueue_free(q);
}

static void test_delay_and_backoff(void **state)
{
    (void)state;
    struct workqueue *q = workqueue_new();
    int64_t t0 = mono_ms();
    workqueue_add_after(q, "ns/x", 150);
    char *k = workqueue_get(q);
    int64_t waited = mono_ms() - t0;
    assert_string_equal(k, "ns/x");
    assert_true(waited >= 140 && waited < 2000);
    workqueue_done(q, k);
    free(k);
    for (int i = 0; i < 5; i++)
        workqueue_add_rate_limited(q, "ns/y"), free(workqueue_get(q)), workqueue_done(q, "ns/y");
    assert_int_equal(workqueue_retries(q, "ns/y"), 5);
    t0 = mono_ms();
    workqueue_add_rate_limited(q, "ns/y"); /* 6th retry: 5 ms * 2^5 = 160 ms */
    k = workqueue_get(q);
    waited = mono_ms() - t0;
    assert_true(waited >= 150);
    workqueue_done(q, k);
    free(k);
    workqueue_forget(q, "ns/y");
    assert_int_equal(workqueue_retries(q, "ns/y"), 0);
    workqueue_free(q);
}

static void *getter(void *arg) { return workqueue_get(arg); }

/* A key waiting for a far time (a deadline requeue) brought forward by a later add_after (a
 * batched pod event) wakes the worker already waiting for the far time. */
static void test_delay_shortened_wakes(void **state)
{
    (void)state;
    struct workqueue *q = workqueue_new();
    workqueue_add_after(q, "ns/x", 600000);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, getter, q), 0);
    struct timespec ts = { 0, 100 * 1000000L };
    nanosleep(&ts, NULL); /* the getter waits for the 600 s entry */
    int64_t t0 = mono_ms();
    workqueue_add_after(q, "ns/x", 100);
    void *k = NULL;
    while (pthread_tryjoin_np(th, &k) != 0 && mono_ms() - t0 < 3000)
        nanosleep(&(struct timespec){ 0, 10 * 1000000L }, NULL);
    int64_t waited = mono_ms() - t0;
    if (waited >= 3000) { /* still waiting for the 600 s entry: stop it, then fail */
        workqueue_shutdown(q);
        pthread_join(th, &k);
        workqueue_free(q);
        fail_msg("the key brought forward to 100 ms did not wake the waiting worker within 3 s");
    }
    assert_non_null(k);
    assert_string_equal(k, "ns/x");
    if (waited < 90 || waited > 3000)
        fail_msg("the brought-forward key came after %lld ms (want ~100)", (long long)waited);
    workqueue_done(q, k);
    free(k);
    workqueue_free(q);
}

static void test_shutdown_wakes(void **state)
{
    (void)state;
    struct workqueue *q = workqueue_new();
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, getter, q), 0);
    struct timespec ts = { 0, 50 * 1000000L };
    nanosleep(&ts, NULL);
    workqueue_shutdown(q);
    void *r = (void *)1;
    pthread_join(th, &r);
    assert_null(r);
    workqueue_add(q, "ns/late");
    assert_int_equal(workqueue_len(q), 0);
    workqueue_free(q);
}

static void test_metrics_text(void **state)
{
    (void)state;
    struct metrics *m = metrics_new();
    assert_non_null(m);
    metrics_inc(m, M_CREATED);
    metrics_inc(m, M_CREATED);
    metrics_inc(m, M_SUCCEEDED);
    metrics_set_leader(m, 1);
    metrics_job_info(m, "default/pi", "default", "pi-launcher-abcde");
    metrics_job_info(m, "default/gone", "default", "gone-launcher-x");
    metrics_job_info(m, "default/gone", "default", NULL);
    metrics_launch_latency(m, 4.2);
    metrics_launch_phase(m, "workersReady", 2.5);
    for (int i = 1; i <= 100; i++)
        metrics_reconcile(m, i / 1000.0);
    metrics_restart(m, "worker_lost");
    metrics_restart(m, "worker_lost");
    metrics_restart(m, "no such reason");
    char *t = metrics_render(m);
    assert_non_null(t);
    assert_non_null(strstr(t, "\nmpi_operator_job_restarts_total{reason=\"worker_lost\"} 2\n"));
    assert_non_null(strstr(t, "\nmpi_operator_job_restarts_total{reason=\"unknown\"} 1\n"));
    assert_non_null(strstr(t, "\nmpi_operator_job_restarts_total{reason=\"oom\"} 0\n"));
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
    metrics_free(m);
}

static void test_flags(void **state)
{
    (void)state;
    struct options o;
    char *err = NULL;
    char *ok[] = { "mpi-operator",
                   "--namespace",
                   "team",
                   "--threadiness=4",
                   "--monitoring-port",
                   "8080",
                   "--gang-scheduling",
                   "volcano",
                   "--leader-elect=false",
                   "-v",
                   "2",
                   NULL };
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
    /* as upstream, any scheduler name other than volcano means scheduler-plugins' PodGroups */
    char *any[] = { "mpi-operator", "--gang-scheduling=scheduler-plugins-scheduler", NULL };
    assert_int_equal(options_parse(2, any, &o, &err), 0);
    assert_string_equal(o.build.gang, "scheduler-plugins-scheduler");
    char *bad3[] = { "mpi-operator", "--bogus", NULL };
    assert_int_equal(options_parse(2, bad3, &o, &err), -1);
    assert_non_null(strstr(err, "unknown flag --bogus"));
    char *bad4[] = { "mpi-operator", "--lease-duration", "5", "--renew-deadline", "5", NULL };
    assert_int_equal(options_parse(5, bad4, &o, &err), -1);
    assert_non_null(strstr(err, "--renew-deadline"));
    free(err);
    err = NULL;
    /* upstream's Deployment and Go flag syntax: -flag, --flag, -flag=value, -flag value, bools alone */
    char *up[] = { "mpi-operator",
                   "-alsologtostderr",
                   "--kubeConfig",
                   "/k",
                   "-master=https://h:6443/",
                   "--kube-api-qps=7.5",
                   "-kube-api-burst",
                   "20",
                   "--controller-queue-rate-limit",
                   "3",
                   "-controller-queue-burst=30",
                   "-lock-namespace",
                   "ops",
                   "--cluster-domain=cluster.local",
                   "-gang-scheduling=scheduler-plugins",
                   "-monitoring-port",
                   "8081",
                   "-threadiness=3",
                   "-v=2",
                   "-stderrthreshold",
                   "warning",
                   "-logtostderr=false",
                   "-leader-elect",
                   "--",
                   NULL };
    assert_int_equal(options_parse(23, up, &o, &err), 0);
    assert_true(o.alsologtostderr && !o.logtostderr && o.leader_elect);
    assert_string_equal(o.kubeconfig, "/k");
    assert_string_equal(o.master, "https://h:6443/");
    assert_true(o.kube_api_qps == 7.5);
    assert_int_equal(o.kube_api_burst, 20);
    assert_int_equal(o.queue_rate_limit, 3);
    assert_int_equal(o.queue_burst, 30);
    assert_string_equal(o.lock_ns, "ops");
    assert_string_equal(o.build.cluster_domain, "cluster.local");
    assert_string_equal(o.build.gang, "scheduler-plugins");
    assert_int_equal(o.monitoring_port, 8081);
    assert_int_equal(o.threadiness, 3);
    assert_int_equal(o.verbosity, 2);
    assert_int_equal(o.stderrthreshold, 1);
    char *none[] = { "mpi-operator", NULL };
    assert_int_equal(options_parse(1, none, &o, &err), 0); /* upstream's defaults */
    assert_true(o.kube_api_qps == 0 && o.kube_api_burst == 10 && o.queue_rate_limit == 10 && o.queue_burst == 100);
    struct {
        char *argv[4];
        int argc;
        const char *want;
    } bad[] = {
        { { "mpi-operator", "-kube-api-qpss=3" }, 2, "unknown flag -kube-api-qpss (see --help)" },
        { { "mpi-operator", "--nope", "1" }, 3, "unknown flag --nope (see --help)" },
        { { "mpi-operator", "-kube-api-qps", "fast" }, 3, "--kube-api-qps: expected a number" },
        { { "mpi-operator", "-kube-api-burst" }, 2, "--kube-api-burst: missing value" },
        { { "mpi-operator", "-leader-elect=maybe" }, 2, "--leader-elect: expected true or false, got \"maybe\"" },
        { { "mpi-operator", "-stderrthreshold=LOUD" }, 2, "--stderrthreshold: expected INFO, WARNING, ERROR or FATAL" },
        { { "mpi-operator", "-master", "h:6443" }, 3, "--master: expected an http:// or https:// URL" },
        { { "mpi-operator", "---v=1" }, 2, "bad flag syntax: ---v=1" },
        { { "mpi-operator", "-v=1", "extra" }, 3, "unexpected argument \"extra\"" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc = options_parse(bad[i].argc, bad[i].argv, &o, &err);
        if (rc != -1 || !err || !strstr(err, bad[i].want))
            fail_msg("case %zu: rc %d, \"%s\", wanted \"%s\"", i, rc, err ? err : "", bad[i].want);
        free(err);
        err = NULL;
    }
}

/* --controller-queue-rate-limit/-burst: rate-limited adds beyond the burst wait for a token. */
static void test_queue_bucket(void **state)
{
    (void)state;
    struct workqueue *q = workqueue_new();
    workqueue_set_bucket(q, 10, 2); /* 10/s, burst 2 */
    int64_t t0 = mono_ms();
    workqueue_add_rate_limited(q, "ns/a");
    workqueue_add_rate_limited(q, "ns/b");
    workqueue_add_rate_limited(q, "ns/c"); /* no token left: ~100 ms */
    char *got[3];
    int64_t at[3];
    for (int i = 0; i < 3; i++) {
        got[i] = workqueue_get(q);
        at[i] = mono_ms() - t0;
    }
    assert_string_equal(got[2], "ns/c");
    assert_true(at[2] >= 90 && at[2] < 2000);
    for (int i = 0; i < 3; i++) {
        workqueue_done(q, got[i]);
        free(got[i]);
    }
    workqueue_free(q);
}

/* apply_create_maybe_stored: a create whose answer was lost (no reply, a timeout, a server error
 * after it was sent) or whose name exists is read back by name, never POSTed again by the next
 * sync; a refusal, a throttle or a cancel stored nothing, and the sync retries it. */
static void test_create_maybe_stored(void **state)
{
    (void)state;
    static const struct {
        enum kube_reason reason;
        int http, want;
    } cases[] = {
        { KUBE_ALREADY_EXISTS, 409, 1 },
        { KUBE_TIMEOUT, 504, 1 },  /* the server's deadline: it may have committed */
        { KUBE_TIMEOUT, 0, 1 },    /* our request timeout, the request sent */
        { KUBE_TRANSPORT, 0, 1 },  /* connection reset */
        { KUBE_INTERNAL, 500, 1 }, /* e.g. etcd's "request timed out" */
        { KUBE_PROTOCOL, 201, 1 }, /* an answer not understood */
        { KUBE_UNKNOWN, 502, 1 },  /* a proxy's bad gateway */
        { KUBE_UNKNOWN, 0, 1 },
        { KUBE_UNKNOWN, 418, 0 },   /* an unknown refusal */
        { KUBE_FORBIDDEN, 403, 0 }, /* admission, RBAC, Pod Security */
        { KUBE_INVALID, 422, 0 },
        { KUBE_NOT_FOUND, 404, 0 }, /* the namespace is gone */
        { KUBE_CONFLICT, 409, 0 },
        { KUBE_TOO_MANY_REQUESTS, 429, 0 }, /* APF: not processed */
        { KUBE_SERVICE_UNAVAILABLE, 503, 0 },
        { KUBE_CANCELLED, 0, 0 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct kube_error e = KUBE_ERROR_INIT;
        e.reason = cases[i].reason;
        e.http_code = cases[i].http;
        assert_int_equal(apply_create_maybe_stored(&e), cases[i].want);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_coalesce),
        cmocka_unit_test(test_delay_and_backoff),
        cmocka_unit_test(test_shutdown_wakes),
        cmocka_unit_test(test_delay_shortened_wakes),
        cmocka_unit_test(test_metrics_text),
        cmocka_unit_test(test_flags),
        cmocka_unit_test(test_queue_bucket),
        cmocka_unit_test(test_cache_write_through),
        cmocka_unit_test(test_objstore),
        cmocka_unit_test(test_prune_pod_blocked),
        cmocka_unit_test(test_prune_pod_disrupted),
        cmocka_unit_test(test_cache_pruned_pod),
        cmocka_unit_test(test_create_maybe_stored),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
