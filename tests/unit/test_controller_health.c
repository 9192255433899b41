/* test_controller_health.c - /healthz's liveness rule: watched loops that beat within their
 * bound are alive; a stalled loop fails it, named with its age and bound; disarmed loops and
 * late beats are handled. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "../../controller/health.h"

static void expect_stalled(int64_t now, const char *want)
{
    char *why = NULL;
    assert_int_equal(health_alive_at(now, &why), 0);
    assert_non_null(why);
    if (!strstr(why, want))
        fail_msg("'%s' lacks '%s'", why, want);
    free(why);
}

static void test_nothing_watched(void **s)
{
    (void)s;
    char *why = NULL;
    assert_int_equal(health_alive_at(1000000000, &why), 1);
    assert_null(why);
}

static void test_stall_and_recover(void **s)
{
    (void)s;
    health_arm_at(H_MAIN, 30000, 1000);
    health_arm_at(H_WORKERS, 120000, 1000);
    assert_int_equal(health_alive_at(30000, NULL), 1);
    health_beat_at(H_MAIN, 25000);
    assert_int_equal(health_alive_at(55000, NULL), 1);
    expect_stalled(56000, "main loop stalled for 31 s (bound 30 s)");
    health_beat_at(H_MAIN, 56000);
    assert_int_equal(health_alive_at(60000, NULL), 1);
    /* the workers' longer bound */
    health_beat_at(H_MAIN, 130000);
    expect_stalled(130000, "workers loop stalled for 129 s (bound 120 s)");
    health_beat_at(H_WORKERS, 130000);
    assert_int_equal(health_alive_at(131000, NULL), 1);
    /* a beat from the past does not move the clock back */
    health_beat_at(H_WORKERS, 10);
    assert_int_equal(health_alive_at(131000, NULL), 1);
    health_disarm(H_MAIN);
    health_disarm(H_WORKERS);
    assert_int_equal(health_alive_at(10000000, NULL), 1);
}

static void test_leader_loop(void **s)
{
    (void)s;
    health_arm_at(H_LEADER, 76000, 0);
    expect_stalled(80000, "leader-election loop stalled for 80 s (bound 76 s)");
    health_disarm(H_LEADER); /* released on purpose */
    assert_int_equal(health_alive_at(80000, NULL), 1);
    assert_string_equal(health_loop_name(H__COUNT), "?");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nothing_watched),
        cmocka_unit_test(test_stall_and_recover),
        cmocka_unit_test(test_leader_loop),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
