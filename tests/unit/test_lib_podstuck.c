/* test_lib_podstuck.c - the one classifier of stuck containers (lib/podstuck.c): the class of
 * every waiting reason it knows (the union of the agent's and the operator's lists), an unknown
 * one, and the scheduler's refusal read from PodScheduled. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "kube/podstuck.h"

static void test_wait_classes(void **st)
{
    (void)st;
    static const struct {
        const char *reason;
        unsigned cls;
    } want[] = {
        { "ContainerCreating", KUBE_WAIT_STARTING },
        { "PodInitializing", KUBE_WAIT_STARTING },
        { "CrashLoopBackOff", KUBE_WAIT_FATAL },
        { "ErrImagePull", KUBE_WAIT_BLOCKED },
        { "ImagePullBackOff", KUBE_WAIT_BLOCKED },
        { "ErrImageNeverPull", KUBE_WAIT_BLOCKED },
        { "InvalidImageName", KUBE_WAIT_BLOCKED | KUBE_WAIT_FATAL },
        { "CreateContainerConfigError", KUBE_WAIT_BLOCKED | KUBE_WAIT_FATAL },
        { "CreateContainerError", KUBE_WAIT_BLOCKED },
        { "RunContainerError", KUBE_WAIT_BLOCKED | KUBE_WAIT_FATAL },
        { "SomethingNew", 0 },
        { "imagepullbackoff", 0 }, /* the kubelet's spelling only */
        { "", 0 },
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        if (kube_wait_class(want[i].reason) != want[i].cls)
            fail_msg("%s: class %u, want %u", want[i].reason, kube_wait_class(want[i].reason), want[i].cls);
    assert_int_equal(kube_wait_class(NULL), 0);
}

static char *unsched(const char *pod_json, const char **reason)
{
    json_t *pod = json_loads(pod_json, 0, NULL);
    assert_non_null(pod);
    char *s = kube_pod_unschedulable(pod, reason);
    if (*reason) /* borrowed from the pod: copy before it goes */
        *reason = strcmp(*reason, "Unschedulable") == 0 ? "Unschedulable" : "other";
    json_decref(pod);
    return s;
}

static void test_unschedulable(void **st)
{
    (void)st;
    const char *r;
    char *s = unsched("{\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"False\"},{\"type\":\"PodScheduled\","
                      "\"status\":\"False\",\"reason\":\"Unschedulable\",\"message\":\"0/1 nodes are available\"}]}}",
                      &r);
    assert_string_equal(s, "Unschedulable: 0/1 nodes are available");
    assert_string_equal(r, "Unschedulable");
    free(s);
    s = unsched("{\"status\":{\"conditions\":[{\"type\":\"PodScheduled\",\"status\":\"False\",\"reason\":"
                "\"SchedulingGated\"}]}}",
                &r);
    assert_string_equal(s, "SchedulingGated: waiting for the scheduler");
    assert_string_equal(r, "other");
    free(s);
    s = unsched("{\"status\":{\"conditions\":[{\"type\":\"PodScheduled\",\"status\":\"False\"}]}}", &r);
    assert_string_equal(s, "Unschedulable: waiting for the scheduler");
    free(s);
    assert_null(unsched("{\"status\":{\"conditions\":[{\"type\":\"PodScheduled\",\"status\":\"True\"}]}}", &r));
    assert_null(r);
    assert_null(unsched("{\"status\":{}}", &r));
    assert_null(r);
    assert_null(kube_pod_unschedulable(NULL, &r));
}

int main(void)
{
    const struct CMUnitTest tests[] = { cmocka_unit_test(test_wait_classes), cmocka_unit_test(test_unschedulable) };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
