/* test_controller_restart_record.c - the pure parts of the MPIJob's record of its
 * restarts (controller/restart_record.c): the dedupe key, the bounded newest-first
 * list, the cause's words from a termination record and the condition message. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../controller/restart_record.h"

static void test_key(void **state)
{
    (void)state;
    char *k = restart_record_key("pi-launcher-x", "2026-12-06T01:00:00Z", 2);
    assert_string_equal(k, "pi-launcher-x@2026-12-06T01:00:00Z#2");
    free(k);
    k = restart_record_key("pi-launcher-x", "2026-12-06T01:00:00Z", 0);
    assert_string_equal(k, "pi-launcher-x@2026-12-06T01:00:00Z");
    free(k);
    k = restart_record_key("p", NULL, 1);
    assert_string_equal(k, "p@#1");
    free(k);
    assert_null(restart_record_key(NULL, "t", 1));
}

/* An entry {key: KEY, message: MSG}. */
static json_t *entry(const char *key, const char *msg) { return json_pack("{s:s, s:s}", RESTART_KEY, key, "message", msg); }

static void test_seen_and_last(void **state)
{
    (void)state;
    json_t *st = json_object();
    assert_int_equal(restart_record_last(st, "l", "t"), 0);
    assert_int_equal(restart_record_seen(st, "l@t#1"), 0);
    assert_int_equal(restart_record_add(st, entry("l@t#1", "one")), 0);
    assert_int_equal(restart_record_add(st, entry("l@t#3", "three")), 0);
    assert_int_equal(restart_record_add(st, entry("other@t#9", "other pod")), 0);
    assert_int_equal(restart_record_add(st, entry("l@t", "the pod itself")), 0);
    assert_int_equal(restart_record_add(st, json_pack("{s:s}", "message", "a worker's, no key")), 0);
    assert_int_equal(restart_record_seen(st, "l@t#1"), 1);
    assert_int_equal(restart_record_seen(st, "l@t#2"), 0);
    assert_int_equal(restart_record_seen(st, "l@t"), 1);
    assert_int_equal(restart_record_last(st, "l", "t"), 3);
    assert_int_equal(restart_record_last(st, "l", "u"), 0); /* a re-created pod of the same name */
    assert_int_equal(restart_record_last(st, "other", "t"), 9);
    assert_int_equal(restart_record_add(st, NULL), -1);
    json_decref(st);
}

static void test_bounded_newest_first(void **state)
{
    (void)state;
    json_t *st = json_object();
    char key[32];
    for (int i = 1; i <= RESTARTS_KEPT + 5; i++) {
        snprintf(key, sizeof key, "l@t#%d", i);
        assert_int_equal(restart_record_add(st, entry(key, "m")), 0);
    }
    json_t *list = json_object_get(st, "restarts");
    assert_int_equal(json_array_size(list), RESTARTS_KEPT);
    snprintf(key, sizeof key, "l@t#%d", RESTARTS_KEPT + 5);
    assert_string_equal(json_string_value(json_object_get(json_array_get(list, 0), RESTART_KEY)), key);
    assert_string_equal(json_string_value(json_object_get(json_array_get(list, RESTARTS_KEPT - 1), RESTART_KEY)), "l@t#6");
    assert_int_equal(restart_record_seen(st, "l@t#5"), 0); /* dropped */
    assert_int_equal(restart_record_last(st, "l", "t"), RESTARTS_KEPT + 5);
    json_decref(st);
}

static void test_cause(void **state)
{
    (void)state;
    json_t *t = json_pack("{s:i, s:s, s:s}", "exitCode", 7, "reason", "Error", "message",
                          "rank 1 on pod w-1 (node n1) exited with code 7; command exited 7 after 2.0 s\n"
                          "phases: {\"mpirunStarted\":\"2026-12-06T01:00:00Z\"}\n"
                          "failure: {\"reason\":\"exit_code\",\"rank\":1}");
    char *c = restart_record_cause("l-x", t);
    assert_string_equal(c, "launcher pod l-x: rank 1 on pod w-1 (node n1) exited with code 7; command exited 7 after 2.0 s");
    free(c);
    json_decref(t);
    t = json_pack("{s:i, s:s}", "exitCode", 137, "reason", "OOMKilled");
    c = restart_record_cause("l-y", t);
    assert_string_equal(c, "launcher pod l-y: exit code 137 (OOMKilled)");
    free(c);
    json_decref(t);
    t = json_pack("{s:i, s:s}", "exitCode", 1, "message", "worker w-1: deleted\nphases: {broken");
    c = restart_record_cause("l-z", t);
    assert_string_equal(c, "launcher pod l-z: worker w-1: deleted");
    free(c);
    json_decref(t);
    assert_null(restart_record_cause("l", NULL));
}

static void test_message(void **state)
{
    (void)state;
    char *m = restart_record_message(2, 7, "launcher pod l: worker w-1: deleted");
    assert_string_equal(m, "is restarting (run 2 of 7): launcher pod l: worker w-1: deleted");
    free(m);
    m = restart_record_message(3, 0, NULL);
    assert_string_equal(m, "is restarting (run 3): the launcher ended");
    free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_key),   cmocka_unit_test(test_seen_and_last), cmocka_unit_test(test_bounded_newest_first),
        cmocka_unit_test(test_cause), cmocka_unit_test(test_message),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
