/* test_agent_podstate.c - verdicts and reasons read from pod JSON shaped like
 * what the API server returns for each way a worker can fail to come up. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ready),
        cmocka_unit_test(test_unschedulable),
        cmocka_unit_test(test_image_pull),
        cmocka_unit_test(test_crashloop),
        cmocka_unit_test(test_init_failed),
        cmocka_unit_test(test_failed_phase),
        cmocka_unit_test(test_node_lost),
        cmocka_unit_test(test_not_ready_and_deleting),
        cmocka_unit_test(test_missing_and_gpus),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
