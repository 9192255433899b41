/* test_agent_netpeer.c - the pod-network watch's bookkeeping (agent/netpeer.c): probe period
 * and wait from the bound, what a connect's errno says, silence counted from the last answer,
 * and which worker is overdue when (never one the watch did not probe). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <errno.h>
#include <cmocka.h>

#include "../../agent/netpeer.h"

static void test_period(void **state)
{
    (void)state;
    assert_int_equal(agent_net_period_ms(60000), 5000); /* the default: every 5 s */
    assert_int_equal(agent_net_period_ms(20000), 5000);
    assert_int_equal(agent_net_period_ms(12000), 3000);
    assert_int_equal(agent_net_period_ms(2000), 1000); /* never faster than 1 s */
    assert_int_equal(agent_net_period_ms(86400000), 5000);
    assert_int_equal(agent_net_attempt_ms(60000), 3000); /* a wait at most 3 s */
    assert_int_equal(agent_net_attempt_ms(12000), 3000);
    assert_int_equal(agent_net_attempt_ms(8000), 2000);
    assert_int_equal(agent_net_attempt_ms(1000), 1000);
}

static void test_classify(void **state)
{
    (void)state;
    assert_int_equal(agent_net_classify(0), AGENT_NET_ANSWERED);            /* accepted */
    assert_int_equal(agent_net_classify(ECONNREFUSED), AGENT_NET_ANSWERED); /* reset: the worker's kernel */
    assert_int_equal(agent_net_classify(ETIMEDOUT), AGENT_NET_SILENT);
    assert_int_equal(agent_net_classify(EHOSTUNREACH), AGENT_NET_SILENT);
    assert_int_equal(agent_net_classify(ENETUNREACH), AGENT_NET_SILENT);
    assert_int_equal(agent_net_classify(EHOSTDOWN), AGENT_NET_SILENT);
    assert_int_equal(agent_net_classify(EMFILE), AGENT_NET_NOT_PROBED); /* ours, not the path's */
    assert_int_equal(agent_net_classify(EADDRNOTAVAIL), AGENT_NET_NOT_PROBED);
    assert_int_equal(agent_net_classify(EINVAL), AGENT_NET_NOT_PROBED);
}

/* A worker that answers, goes silent at t=10 s: overdue exactly 20 s after its last answer. */
static void test_silence_from_last_answer(void **state)
{
    (void)state;
    struct agent_net_peer p[2];
    agent_net_peer_start(&p[0], 0);
    agent_net_peer_start(&p[1], 0);
    for (int64_t t = 5000; t <= 10000; t += 5000) {
        agent_net_peer_record(&p[0], AGENT_NET_ANSWERED, 0, t);
        agent_net_peer_record(&p[1], AGENT_NET_ANSWERED, 0, t);
    }
    assert_int_equal(p[0].answers, 2);
    for (int64_t t = 15000; t <= 45000; t += 5000) {
        agent_net_peer_record(&p[0], AGENT_NET_ANSWERED, 0, t);
        agent_net_peer_record(&p[1], AGENT_NET_SILENT, ETIMEDOUT, t);
        long want = t - 10000 >= 20000 ? 1 : -1;
        assert_int_equal(agent_net_overdue(p, 2, t, 20000), want);
    }
    assert_int_equal(agent_net_silence_ms(&p[1], 45000), 35000);
    assert_int_equal(agent_net_silence_ms(&p[0], 45000), 0);
    assert_int_equal(p[1].silent, 7);
    assert_int_equal(p[1].last_err, ETIMEDOUT);
    /* off */
    assert_int_equal(agent_net_overdue(p, 2, 45000, 0), -1);
    /* one answer resets it */
    agent_net_peer_record(&p[1], AGENT_NET_ANSWERED, 0, 50000);
    assert_int_equal(agent_net_overdue(p, 2, 50000, 20000), -1);
    assert_int_equal(p[1].silent, 0);
    assert_int_equal(agent_net_silence_ms(&p[1], 50000), 0);
}

/* Never answered since the start: silence counts from the start. */
static void test_never_answered(void **state)
{
    (void)state;
    struct agent_net_peer p;
    agent_net_peer_start(&p, 1000);
    agent_net_peer_record(&p, AGENT_NET_SILENT, EHOSTUNREACH, 6000);
    agent_net_peer_record(&p, AGENT_NET_SILENT, EHOSTUNREACH, 11000);
    assert_int_equal(agent_net_overdue(&p, 1, 11000, 10000), 0);
    assert_int_equal(agent_net_overdue(&p, 1, 10999, 10000), -1);
    assert_int_equal(p.last_err, EHOSTUNREACH);
}

/* A watch that stalled (the agent starved, nothing probed): time alone blames no one; one
 * silent probe is not enough either, and probes that were not made change nothing. */
static void test_stalled_watch_blames_no_one(void **state)
{
    (void)state;
    struct agent_net_peer p;
    agent_net_peer_start(&p, 0);
    assert_int_equal(agent_net_overdue(&p, 1, 600000, 60000), -1);
    agent_net_peer_record(&p, AGENT_NET_SILENT, ETIMEDOUT, 600000);
    assert_int_equal(agent_net_overdue(&p, 1, 600000, 60000), -1);
    agent_net_peer_record(&p, AGENT_NET_NOT_PROBED, EMFILE, 605000);
    assert_int_equal(agent_net_overdue(&p, 1, 605000, 60000), -1);
    assert_int_equal(p.silent, 1);
    agent_net_peer_record(&p, AGENT_NET_SILENT, ETIMEDOUT, 610000);
    assert_int_equal(agent_net_overdue(&p, 1, 610000, 60000), 0);
}

/* The first overdue worker in hostfile order is the one named. */
static void test_first_overdue(void **state)
{
    (void)state;
    struct agent_net_peer p[3];
    for (int i = 0; i < 3; i++)
        agent_net_peer_start(&p[i], 0);
    for (int64_t t = 1000; t <= 3000; t += 1000)
        for (int i = 0; i < 3; i++)
            agent_net_peer_record(&p[i], i == 0 ? AGENT_NET_ANSWERED : AGENT_NET_SILENT, ETIMEDOUT, t);
    assert_int_equal(agent_net_overdue(p, 3, 3000, 3000), 1);
    assert_int_equal(agent_net_overdue(p, 1, 3000, 3000), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_period),
        cmocka_unit_test(test_classify),
        cmocka_unit_test(test_silence_from_last_answer),
        cmocka_unit_test(test_never_answered),
        cmocka_unit_test(test_stalled_watch_blames_no_one),
        cmocka_unit_test(test_first_overdue),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
