/* test_controller_cond.c - condition bookkeeping (upstream setCondition
 * semantics the seed's status shows) and the agent termination-message parser. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "../../controller/cond.h"
#include "../../controller/reconcile.h"

static const char *type_at(json_t *st, size_t i)
{
    return json_string_value(json_object_get(json_array_get(json_object_get(st, "conditions"), i), "type"));
}

static void test_seed_sequence(void **state)
{
    (void)state;
    json_t *st = json_object();
    const char *t0 = "2019-07-09T22:15:51Z", *t1 = "2019-07-09T22:15:54Z", *t2 = "2019-07-09T22:17:06Z";
    assert_int_equal(cond_set(st, COND_CREATED, "True", R_CREATED, "MPIJob default/tf is created.", t0), 1);
    assert_int_equal(cond_set(st, COND_CREATED, "True", R_CREATED, "MPIJob default/tf is created.", t1), 0);
    assert_int_equal(cond_set(st, COND_RUNNING, "True", R_RUNNING, "MPIJob default/tf is running.", t1), 1);
    assert_int_equal(cond_set(st, COND_SUCCEEDED, "True", R_SUCCEEDED, "MPIJob default/tf successfully completed.", t2), 1);
    assert_int_equal(json_array_size(json_object_get(st, "conditions")), 3);
    assert_string_equal(type_at(st, 0), "Created");
    assert_string_equal(type_at(st, 1), "Running");
    assert_string_equal(type_at(st, 2), "Succeeded");
    json_t *run = cond_get(st, COND_RUNNING);
    assert_string_equal(json_string_value(json_object_get(run, "status")), "False");
    assert_string_equal(json_string_value(json_object_get(run, "reason")), "MPIJobRunning");
    assert_string_equal(json_string_value(json_object_get(run, "message")), "MPIJob default/tf is running.");
    /* the seed: Running keeps its times when flipped to False */
    assert_string_equal(json_string_value(json_object_get(run, "lastTransitionTime")), t1);
    assert_string_equal(json_string_value(json_object_get(run, "lastUpdateTime")), t1);
    assert_true(cond_finished(st));
    json_decref(st);
}

static void test_running_restarting_exclusive(void **state)
{
    (void)state;
    json_t *st = json_object();
    cond_set(st, COND_CREATED, "True", R_CREATED, "c", "2020-01-01T00:00:00Z");
    cond_set(st, COND_RUNNING, "True", R_RUNNING, "r", "2020-01-01T00:00:01Z");
    assert_int_equal(cond_set(st, COND_RESTARTING, "True", R_RESTARTING, "x", "2020-01-01T00:00:02Z"), 1);
    assert_null(cond_get(st, COND_RUNNING));
    assert_non_null(cond_get(st, COND_RESTARTING));
    assert_int_equal(cond_set(st, COND_RUNNING, "True", R_RUNNING, "r", "2020-01-01T00:00:03Z"), 1);
    assert_null(cond_get(st, COND_RESTARTING));
    json_decref(st);
}

static void test_transition_time_kept(void **state)
{
    (void)state;
    json_t *st = json_object();
    cond_set(st, COND_RUNNING, "False", R_SUSPENDED, "s", "2020-01-01T00:00:00Z");
    assert_int_equal(cond_set(st, COND_RUNNING, "False", R_RUNNING, "r", "2020-01-01T00:00:05Z"), 1);
    json_t *c = cond_get(st, COND_RUNNING);
    assert_string_equal(json_string_value(json_object_get(c, "lastTransitionTime")), "2020-01-01T00:00:00Z");
    assert_string_equal(json_string_value(json_object_get(c, "lastUpdateTime")), "2020-01-01T00:00:05Z");
    assert_int_equal(cond_set(st, COND_RUNNING, "True", R_RUNNING, "r", "2020-01-01T00:00:09Z"), 1);
    c = cond_get(st, COND_RUNNING);
    assert_string_equal(json_string_value(json_object_get(c, "lastTransitionTime")), "2020-01-01T00:00:09Z");
    json_decref(st);
}

static void test_failed_is_final(void **state)
{
    (void)state;
    json_t *st = json_object();
    cond_set(st, COND_RUNNING, "True", R_RUNNING, "r", "2020-01-01T00:00:00Z");
    assert_int_equal(cond_set(st, COND_FAILED, "True", R_FAILED, "f", "2020-01-01T00:00:01Z"), 1);
    assert_false(cond_true(st, COND_RUNNING));
    assert_int_equal(cond_set(st, COND_SUCCEEDED, "True", R_SUCCEEDED, "s", "2020-01-01T00:00:02Z"), 0);
    assert_int_equal(cond_set(st, COND_RUNNING, "True", R_RUNNING, "r", "2020-01-01T00:00:02Z"), 0);
    assert_null(cond_get(st, COND_SUCCEEDED));
    json_decref(st);
}

static void test_termination_parse(void **state)
{
    (void)state;
    char *sum = NULL;
    json_t *ph = NULL;
    assert_int_equal(
        mpik8s_termination_parse(
            "mpirun exited with code 1: rank 0 on pi-worker-1 failed\n"
            "phases: {\"workersReady\":\"2026-11-30T06:00:01.000Z\",\"mpirunStarted\":\"2026-11-30T06:00:02.500Z\"}\n",
            &sum, &ph),
        0);
    assert_string_equal(sum, "mpirun exited with code 1: rank 0 on pi-worker-1 failed");
    assert_string_equal(json_string_value(json_object_get(ph, "mpirunStarted")), "2026-11-30T06:00:02.500Z");
    free(sum);
    json_decref(ph);
    assert_int_equal(mpik8s_termination_parse("just a line", &sum, &ph), 0);
    assert_string_equal(sum, "just a line");
    assert_null(ph);
    free(sum);
    assert_int_equal(mpik8s_termination_parse("x\nphases: {broken", &sum, &ph), -1);
    free(sum);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seed_sequence),        cmocka_unit_test(test_running_restarting_exclusive),
        cmocka_unit_test(test_transition_time_kept), cmocka_unit_test(test_failed_is_final),
        cmocka_unit_test(test_termination_parse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
