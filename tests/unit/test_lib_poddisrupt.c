/* test_lib_poddisrupt.c - a pod's DisruptionTarget condition in words and the preemptor
 * read from the scheduler's Preempted Event (lib/poddisrupt.c), on the shapes a real
 * cluster gave (tests/unit/data/preemption/, README there says where each came from). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <jansson.h>

#include "kube/poddisrupt.h"

static json_t *load(const char *name)
{
    char path[256];
    snprintf(path, sizeof path, "tests/unit/data/preemption/%s", name);
    json_error_t je;
    json_t *v = json_load_file(path, 0, &je);
    if (!v)
        fail_msg("%s: %s", path, je.text);
    return v;
}

static json_t *pod_with(const char *type, const char *status, const char *reason, const char *message)
{
    return json_pack("{s:{s:s, s:s}, s:{s:[{s:s, s:s, s:s*, s:s*}]}}", "metadata", "name", "w-0", "uid", "u-0", "status",
                     "conditions", "type", type, "status", status, "reason", reason, "message", message);
}

static void expect_text(json_t *pod, const char *by, const char *want)
{
    char *t = kube_pod_disruption_text(pod, by);
    if (!want) {
        if (t)
            fail_msg("want no text, got \"%s\"", t);
        return;
    }
    assert_non_null(t);
    assert_string_equal(t, want);
    free(t);
}

/* The observed victim: DisruptionTarget True, PreemptionByScheduler, the scheduler's message. */
static void test_victim(void **s)
{
    (void)s;
    json_t *v = load("victim.json");
    assert_int_equal(kube_pod_preempted(v), 1);
    assert_non_null(kube_pod_disruption_cond(v));
    expect_text(v, NULL,
                "preempted by the scheduler for a higher-priority pod (DisruptionTarget PreemptionByScheduler: "
                "default-scheduler: preempting to accommodate a higher priority pod)");
    expect_text(v, "default/big-a",
                "preempted by default/big-a (DisruptionTarget PreemptionByScheduler: default-scheduler: preempting to "
                "accommodate a higher priority pod)");
    json_decref(v);
}

/* Each reason Kubernetes sets has its own words; an unknown one is shown as it is. */
static void test_each_reason(void **s)
{
    (void)s;
    static const struct {
        const char *reason, *starts;
    } want[] = {
        { "EvictionByEvictionAPI", "evicted through the Eviction API" },
        { "DeletionByTaintManager", "deleted by the taint manager" },
        { "TerminationByKubelet", "terminated by the kubelet" },
        { "DeletionByPodGC", "deleted by the pod garbage collector" },
        { "SomethingNew", "disrupted (DisruptionTarget SomethingNew: m)" },
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        json_t *p = pod_with("DisruptionTarget", "True", want[i].reason, "m");
        char *t = kube_pod_disruption_text(p, "default/x"); /* a name only for preemption */
        assert_non_null(t);
        if (strncmp(t, want[i].starts, strlen(want[i].starts)) != 0 || !strstr(t, want[i].reason))
            fail_msg("%s: \"%s\" does not start with \"%s\"", want[i].reason, t, want[i].starts);
        assert_int_equal(kube_pod_preempted(p), 0);
        free(t);
        json_decref(p);
    }
    /* False, another type, no conditions: nothing to say */
    json_t *p = pod_with("DisruptionTarget", "False", "PreemptionByScheduler", "m");
    expect_text(p, NULL, NULL);
    assert_int_equal(kube_pod_preempted(p), 0);
    json_decref(p);
    p = pod_with("Ready", "True", "PreemptionByScheduler", NULL);
    expect_text(p, NULL, NULL);
    json_decref(p);
    expect_text(NULL, NULL, NULL);
    p = pod_with("DisruptionTarget", "True", NULL, NULL);
    expect_text(p, NULL, "disrupted (DisruptionTarget with no reason)");
    json_decref(p);
}

/* The observed Event (Kubernetes 1.37's scheduler) has no related object: the preemptor is the
 * UID in its message, resolved through a pod list to namespace/name. */
static void test_events_uid(void **s)
{
    (void)s;
    json_t *v = load("victim.json"), *ev = load("events.json");
    json_t *e = json_array_get(json_object_get(ev, "items"), 0);
    char *uid = NULL;
    assert_null(kube_preemptor_from_events(ev, v, &uid));
    assert_non_null(uid);
    const char *want_uid = "2d601687-987d-4403-ae83-a118bba7e2b1";
    assert_string_equal(uid, want_uid);
    json_t *pods = json_pack("{s:[{s:{s:s, s:s, s:s}}, {s:{s:s, s:s, s:s}}]}", "items", "metadata", "name", "a", "namespace",
                             "default", "uid", "x", "metadata", "name", "big-a", "namespace", "default", "uid", want_uid);
    char *by = kube_pod_name_by_uid(pods, uid);
    assert_non_null(by);
    assert_string_equal(by, "default/big-a");
    free(by);
    assert_null(kube_pod_name_by_uid(pods, "nope"));
    free(uid);
    /* an Event about another incarnation of the pod (another uid) is not this one's */
    json_object_set_new(json_object_get(v, "metadata"), "uid", json_string("other"));
    assert_null(kube_preemptor_from_events(ev, v, &uid));
    assert_null(uid);
    json_object_set_new(json_object_get(v, "metadata"), "uid", json_string("f389053a-863d-4fa0-811f-4d18660f95e0"));
    /* a message of another shape: no UID, no name */
    json_object_set_new(e, "message", json_string("something else"));
    assert_null(kube_preemptor_from_events(ev, v, &uid));
    assert_null(uid);
    /* another reason: not a preemption Event */
    json_object_set_new(e, "reason", json_string("Killing"));
    assert_null(kube_preemptor_from_events(ev, v, &uid));
    json_decref(pods);
    json_decref(v);
    json_decref(ev);
}

/* An Event with a related object (events.k8s.io's related, set by a scheduler that passes the
 * preemptor to Eventf) names it directly, in its own namespace. */
static void test_events_related(void **s)
{
    (void)s;
    json_t *v = load("victim.json"), *ev = load("events.json");
    json_t *e = json_array_get(json_object_get(ev, "items"), 0);
    json_object_set_new(e, "related", json_pack("{s:s, s:s, s:s}", "kind", "Pod", "namespace", "team-b", "name", "big"));
    char *uid = (char *)"unset";
    char *by = kube_preemptor_from_events(ev, v, &uid);
    assert_non_null(by);
    assert_string_equal(by, "team-b/big");
    assert_null(uid);
    free(by);
    json_decref(v);
    json_decref(ev);
}

/* Two Preempted Events on the same pod: the newest wins. */
static void test_events_newest(void **s)
{
    (void)s;
    json_t *v = load("victim.json"), *ev = load("events.json");
    json_t *items = json_object_get(ev, "items");
    json_t *newer = json_deep_copy(json_array_get(items, 0));
    json_object_set_new(newer, "eventTime", json_string("2026-12-02T16:31:00.000001Z"));
    json_object_set_new(newer, "related", json_pack("{s:s, s:s}", "namespace", "default", "name", "later"));
    json_array_insert_new(items, 0, newer);
    char *by = kube_preemptor_from_events(ev, v, NULL);
    assert_non_null(by);
    assert_string_equal(by, "default/later");
    free(by);
    json_decref(v);
    json_decref(ev);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_victim),         cmocka_unit_test(test_each_reason),   cmocka_unit_test(test_events_uid),
        cmocka_unit_test(test_events_related), cmocka_unit_test(test_events_newest),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
