/* test_agent_podstate.c - verdicts and reasons read from pod JSON shaped like
 * what the API server returns for each way a worker can fail to come up. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <jansson.h>

#include "../../agent/podstate.h"

static void check(const char *json, enum agent_pod_verdict want, const char *reason_part)
{
    json_error_t je;
    json_t *pod = json_loads(json, 0, &je);
    if (!pod)
        fail_msg("bad fixture: %s", je.text);
    struct agent_pod_view v;
    assert_int_equal(agent_pod_assess(pod, &v), 0);
    if (v.verdict != want)
        fail_msg("verdict %s, want %s (reason %s)", agent_pod_verdict_name(v.verdict), agent_pod_verdict_name(want),
                 v.reason);
    if (!strstr(v.reason, reason_part))
        fail_msg("reason \"%s\" lacks \"%s\"", v.reason, reason_part);
    agent_pod_view_free(&v);
    json_decref(pod);
}

static void test_ready(void **s)
{
    (void)s;
    check("{\"metadata\":{\"name\":\"w-0\"},\"spec\":{\"nodeName\":\"node-1\"},"
          "\"status\":{\"phase\":\"Running\",\"podIP\":\"10.250.1.2\",\"conditions\":["
          "{\"type\":\"Ready\",\"status\":\"True\"}]}}",
          AGENT_POD_READY, "");
}

static void test_unschedulable(void **s)
{
    (void)s;
    check("{\"metadata\":{\"name\":\"w-0\"},\"spec\":{},\"status\":{\"phase\":\"Pending\","
          "\"conditions\":[{\"type\":\"PodScheduled\",\"status\":\"False\",\"reason\":"
          "\"Unschedulable\",\"message\":\"0/1 nodes are available: 1 Insufficient "
          "nvidia.com/gpu.\"}]}}",
          AGENT_POD_PENDING, "Unschedulable: 0/1 nodes are available: 1 Insufficient nvidia.com/gpu.");
}

static void test_image_pull(void **s)
{
    (void)s;
    check("{\"spec\":{\"nodeName\":\"n\"},\"status\":{\"phase\":\"Pending\",\"containerStatuses\":"
          "[{\"name\":\"worker\",\"restartCount\":0,\"state\":{\"waiting\":{\"reason\":"
          "\"ImagePullBackOff\",\"message\":\"Back-off pulling image \\\"nope:1\\\"\"}}}]}}",
          AGENT_POD_PENDING, "container worker: ImagePullBackOff: Back-off pulling image");
    check("{\"spec\":{\"nodeName\":\"n\"},\"status\":{\"phase\":\"Pending\",\"containerStatuses\":"
          "[{\"name\":\"worker\",\"state\":{\"waiting\":{\"reason\":\"ErrImagePull\"}}}]}}",
          AGENT_POD_PENDING, "container worker: ErrImagePull");
}

/* Every waiting reason of the shared classifier (lib/podstuck.c): fatal ones fail the wait at
 * once, the starting ones say nothing, the rest keep waiting with the reason shown. */
static void test_each_wait_reason(void **s)
{
    (void)s;
    static const struct {
        const char *reason;
        enum agent_pod_verdict verdict;
        const char *shown;
    } want[] = {
        { "ContainerCreating", AGENT_POD_PENDING, "Pending: containers starting" },
        { "PodInitializing", AGENT_POD_PENDING, "Pending: containers starting" },
        { "CrashLoopBackOff", AGENT_POD_FAILED, "container worker: CrashLoopBackOff (restarted 0 times" },
        { "ErrImagePull", AGENT_POD_PENDING, "container worker: ErrImagePull" },
        { "ImagePullBackOff", AGENT_POD_PENDING, "container worker: ImagePullBackOff" },
        { "ErrImageNeverPull", AGENT_POD_PENDING, "container worker: ErrImageNeverPull" },
        { "InvalidImageName", AGENT_POD_FAILED, "container worker: InvalidImageName" },
        { "CreateContainerConfigError", AGENT_POD_FAILED, "container worker: CreateContainerConfigError" },
        { "CreateContainerError", AGENT_POD_PENDING, "container worker: CreateContainerError" },
        { "RunContainerError", AGENT_POD_FAILED, "container worker: RunContainerError" },
        { "SomethingNew", AGENT_POD_PENDING, "container worker: SomethingNew" },
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        char json[512];
        snprintf(json, sizeof json,
                 "{\"spec\":{\"nodeName\":\"n\"},\"status\":{\"phase\":\"Pending\",\"containerStatuses\":"
                 "[{\"name\":\"worker\",\"state\":{\"waiting\":{\"reason\":\"%s\"}}}]}}",
                 want[i].reason);
        check(json, want[i].verdict, want[i].shown);
    }
}

static void test_crashloop(void **s)
{
    (void)s;
    check("{\"spec\":{\"nodeName\":\"n\"},\"status\":{\"phase\":\"Running\",\"conditions\":["
          "{\"type\":\"Ready\",\"status\":\"False\",\"reason\":\"ContainersNotReady\"}],"
          "\"containerStatuses\":[{\"name\":\"worker\",\"restartCount\":3,\"state\":{\"waiting\":"
          "{\"reason\":\"CrashLoopBackOff\"}},\"lastState\":{\"terminated\":{\"exitCode\":3}}}]}}",
          AGENT_POD_FAILED, "CrashLoopBackOff (restarted 3 times, last exit code 3)");
    /* restarting without the back-off reason yet */
    check("{\"spec\":{\"nodeName\":\"n\"},\"status\":{\"phase\":\"Running\",\"containerStatuses\":"
          "[{\"name\":\"worker\",\"restartCount\":2,\"state\":{\"running\":{}}}]}}",
          AGENT_POD_FAILED, "restarting in a loop (2 restarts)");
}

static void test_init_failed(void **s)
{
    (void)s;
    check("{\"spec\":{\"nodeName\":\"n\"},\"status\":{\"phase\":\"Pending\","
          "\"initContainerStatuses\":[{\"name\":\"setup\",\"state\":{\"terminated\":"
          "{\"exitCode\":2,\"reason\":\"Error\"}}}],\"containerStatuses\":[{\"name\":\"worker\","
          "\"state\":{\"waiting\":{\"reason\":\"PodInitializing\"}}}]}}",
          AGENT_POD_FAILED, "init container setup failed: Error, exit code 2");
    /* a completed init container is no problem */
    check("{\"spec\":{\"nodeName\":\"n\"},\"status\":{\"phase\":\"Pending\","
          "\"initContainerStatuses\":[{\"name\":\"setup\",\"state\":{\"terminated\":"
          "{\"exitCode\":0,\"reason\":\"Completed\"}}}]}}",
          AGENT_POD_PENDING, "Pending: containers starting");
}

static void test_failed_phase(void **s)
{
    (void)s;
    check("{\"spec\":{\"nodeName\":\"n\"},\"status\":{\"phase\":\"Failed\",\"reason\":\"Evicted\","
          "\"message\":\"low on memory\"}}",
          AGENT_POD_FAILED, "Failed: Evicted: low on memory");
    check("{\"spec\":{\"nodeName\":\"n\"},\"status\":{\"phase\":\"Failed\",\"containerStatuses\":"
          "[{\"name\":\"worker\",\"state\":{\"terminated\":{\"exitCode\":137,\"reason\":"
          "\"Error\"}}}]}}",
          AGENT_POD_FAILED, "container worker terminated: Error, exit code 137");
    check("{\"spec\":{\"nodeName\":\"n\"},\"status\":{\"phase\":\"Succeeded\"}}", AGENT_POD_FAILED, "Succeeded");
}

static void test_node_lost(void **s)
{
    (void)s;
    check("{\"spec\":{\"nodeName\":\"n\"},\"status\":{\"phase\":\"Unknown\"}}", AGENT_POD_FAILED, "node lost");
    check("{\"spec\":{\"nodeName\":\"n\"},\"status\":{\"phase\":\"Running\",\"conditions\":["
          "{\"type\":\"Ready\",\"status\":\"False\",\"reason\":\"NodeLost\",\"message\":"
          "\"Kubelet stopped posting node status.\"}]}}",
          AGENT_POD_PENDING, "node lost: Kubelet stopped posting node status.");
}

static void test_not_ready_and_deleting(void **s)
{
    (void)s;
    check("{\"spec\":{\"nodeName\":\"n\"},\"status\":{\"phase\":\"Running\",\"conditions\":["
          "{\"type\":\"Ready\",\"status\":\"False\",\"reason\":\"ContainersNotReady\","
          "\"message\":\"containers with unready status: [worker]\"}]}}",
          AGENT_POD_PENDING, "Running but not Ready: ContainersNotReady: containers with unready status");
    check("{\"metadata\":{\"deletionTimestamp\":\"2026-01-01T00:00:00Z\"},\"spec\":{\"nodeName\":"
          "\"n\"},\"status\":{\"phase\":\"Running\",\"conditions\":[{\"type\":\"Ready\","
          "\"status\":\"True\"}]}}",
          AGENT_POD_FAILED, "being deleted");
    check("{\"spec\":{},\"status\":{}}", AGENT_POD_PENDING, "waiting for the scheduler");
}

/* A worker Kubernetes takes away says who: the observed preempted victim
 * (tests/unit/data/preemption/victim.json) being deleted, with and without its preemptor's
 * name; a kubelet eviction (phase Failed, TerminationByKubelet) keeps the pod's own reason. */
static void test_disrupted(void **s)
{
    (void)s;
    json_error_t je;
    json_t *pod = json_load_file("tests/unit/data/preemption/victim.json", 0, &je);
    if (!pod)
        fail_msg("victim.json: %s", je.text);
    struct agent_pod_view v;
    assert_int_equal(agent_pod_assess(pod, &v), 0);
    assert_int_equal(v.verdict, AGENT_POD_FAILED);
    assert_string_equal(v.reason,
                        "being deleted: preempted by the scheduler for a higher-priority pod (DisruptionTarget "
                        "PreemptionByScheduler: default-scheduler: preempting to accommodate a higher priority pod)");
    agent_pod_view_free(&v);
    assert_int_equal(agent_pod_assess_by(pod, "default/j25-big", &v), 0);
    assert_int_equal(v.verdict, AGENT_POD_FAILED);
    assert_non_null(strstr(v.reason, "being deleted: preempted by default/j25-big (DisruptionTarget PreemptionByScheduler"));
    assert_string_equal(v.node, "k8s-node-1");
    agent_pod_view_free(&v);
    json_decref(pod);
    check("{\"spec\":{\"nodeName\":\"n\"},\"status\":{\"phase\":\"Failed\",\"reason\":\"Evicted\",\"message\":"
          "\"The node was low on resource: memory.\",\"conditions\":[{\"type\":\"DisruptionTarget\",\"status\":\"True\","
          "\"reason\":\"TerminationByKubelet\",\"message\":\"The node was low on resource: memory.\"}]}}",
          AGENT_POD_FAILED,
          "terminated by the kubelet (node-pressure eviction or node shutdown) (DisruptionTarget TerminationByKubelet: "
          "The node was low on resource: memory.): Failed: Evicted: The node was low on resource: memory.");
}

/* A pod being deleted is going away normally until its deletionTimestamp (which includes
 * the grace period) plus AGENT_DELETION_SLACK_MS; after that its deletion is stuck. */
static void test_deletion_in_progress(void **s)
{
    (void)s;
    json_t *p = json_loads("{\"metadata\":{\"deletionTimestamp\":\"2026-01-01T00:00:30Z\"}}", 0, NULL);
    int64_t at = 1767225630000; /* 2026-01-01T00:00:30Z */
    assert_int_equal(agent_pod_deletion_in_progress(p, at - 30000), 1);
    assert_int_equal(agent_pod_deletion_in_progress(p, at + AGENT_DELETION_SLACK_MS), 1);
    assert_int_equal(agent_pod_deletion_in_progress(p, at + AGENT_DELETION_SLACK_MS + 1), 0);
    json_decref(p);
    p = json_loads("{\"metadata\":{}}", 0, NULL);
    assert_int_equal(agent_pod_deletion_in_progress(p, at), 0);
    assert_int_equal(agent_pod_deletion_in_progress(NULL, at), 0);
    json_decref(p);
}

static void test_missing_and_gpus(void **s)
{
    (void)s;
    struct agent_pod_view v;
    assert_int_equal(agent_pod_assess(NULL, &v), 0);
    assert_int_equal(v.verdict, AGENT_POD_MISSING);
    assert_string_equal(v.reason, "pod not found");
    agent_pod_view_free(&v);
    json_t *p = json_loads("{\"spec\":{\"containers\":[{\"env\":[{\"name\":\"NVIDIA_VISIBLE_"
                           "DEVICES\",\"value\":\"0,1\"}]}]}}",
                           0, NULL);
    char *g = agent_pod_gpus(p);
    assert_string_equal(g, "0,1");
    free(g);
    json_decref(p);
    p = json_loads("{\"spec\":{\"containers\":[{\"resources\":{\"limits\":{\"nvidia.com/gpu\":"
                   "\"2\"}}}]}}",
                   0, NULL);
    g = agent_pod_gpus(p);
    assert_string_equal(g, "2 GPU");
    free(g);
    json_decref(p);
    p = json_loads("{\"spec\":{\"containers\":[{}]}}", 0, NULL);
    assert_null(agent_pod_gpus(p));
    json_decref(p);
}

/* The pod IP of a family: dual stack (IPv4 primary), single stack, none of the family */
static void test_pod_ip(void **s)
{
    (void)s;
    json_t *p = json_loads("{\"status\":{\"podIP\":\"10.244.0.5\",\"podIPs\":[{\"ip\":\"10.244.0.5\"},"
                           "{\"ip\":\"fd00:10:244::5\"}]}}",
                           0, NULL);
    assert_string_equal(agent_pod_ip(p, 0), "10.244.0.5");
    assert_string_equal(agent_pod_ip(p, 4), "10.244.0.5");
    assert_string_equal(agent_pod_ip(p, 6), "fd00:10:244::5");
    json_decref(p);
    p = json_loads("{\"status\":{\"podIP\":\"fd00:10:244::7\",\"podIPs\":[{\"ip\":\"fd00:10:244::7\"}]}}", 0, NULL);
    assert_string_equal(agent_pod_ip(p, 0), "fd00:10:244::7");
    assert_string_equal(agent_pod_ip(p, 6), "fd00:10:244::7");
    assert_null(agent_pod_ip(p, 4));
    json_decref(p);
    p = json_loads("{\"status\":{}}", 0, NULL);
    assert_null(agent_pod_ip(p, 0));
    assert_null(agent_pod_ip(p, 6));
    json_decref(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ready),
        cmocka_unit_test(test_unschedulable),
        cmocka_unit_test(test_image_pull),
        cmocka_unit_test(test_each_wait_reason),
        cmocka_unit_test(test_crashloop),
        cmocka_unit_test(test_init_failed),
        cmocka_unit_test(test_failed_phase),
        cmocka_unit_test(test_node_lost),
        cmocka_unit_test(test_not_ready_and_deleting),
        cmocka_unit_test(test_disrupted),
        cmocka_unit_test(test_deletion_in_progress),
        cmocka_unit_test(test_missing_and_gpus),
        cmocka_unit_test(test_pod_ip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
