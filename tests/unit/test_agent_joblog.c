/* test_agent_joblog.c - the output ring the launcher log and the failure parser
 * read (bounded, oldest bytes dropped, order kept across the wrap) and the UTF-8
 * cleaning that lets any output be a ConfigMap string. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "../../agent/joblog.h"
#include "../../agent/outbuf.h"

static void test_ring(void **st)
{
    (void)st;
    struct agent_outbuf b;
    assert_int_equal(agent_outbuf_init(&b, 8), 0);
    size_t n;
    uint64_t total;
    char *c = agent_outbuf_copy(&b, &n, &total);
    assert_string_equal(c, "");
    free(c);
    agent_outbuf_append(&b, "abc", 3);
    agent_outbuf_append(&b, "defg", 4);
    c = agent_outbuf_copy(&b, &n, &total);
    assert_string_equal(c, "abcdefg");
    free(c);
    agent_outbuf_append(&b, "hij", 3); /* wraps: the oldest two go */
    c = agent_outbuf_copy(&b, &n, &total);
    assert_string_equal(c, "cdefghij");
    assert_int_equal(n, 8);
    assert_int_equal(total, 10);
    free(c);
    agent_outbuf_append(&b, "0123456789XY", 12); /* larger than the ring: its end */
    c = agent_outbuf_copy(&b, &n, &total);
    assert_string_equal(c, "456789XY");
    free(c);
    for (int i = 0; i < 100; i++)
        agent_outbuf_append(&b, i % 2 ? "[1,3]<stdout>:x\n" : "y", i % 2 ? 16 : 1);
    c = agent_outbuf_copy(&b, &n, &total);
    assert_int_equal(n, 8);
    assert_memory_equal(c + 8 - 3, ":x\n", 3); /* the newest bytes last */
    free(c);
    agent_outbuf_free(&b);
    agent_outbuf_free(&b); /* twice is fine */
}

static void test_ring_big(void **st)
{
    (void)st;
    struct agent_outbuf b;
    assert_int_equal(agent_outbuf_init(&b, AGENT_OUTBUF_MAX), 0);
    char line[64];
    for (int i = 0; i < 20000; i++) {
        int k = snprintf(line, sizeof line, "[1,%d]<stdout>:line %d\n", i % 8, i);
        agent_outbuf_append(&b, line, (size_t)k);
    }
    size_t n;
    uint64_t total;
    char *c = agent_outbuf_copy(&b, &n, &total);
    assert_int_equal(n, AGENT_OUTBUF_MAX);
    assert_true(total > AGENT_OUTBUF_MAX);
    assert_non_null(strstr(c, "[1,7]<stdout>:line 19999\n"));
    assert_null(strstr(c, ":line 100\n"));
    free(c);
    agent_outbuf_free(&b);
}

static void test_utf8(void **st)
{
    (void)st;
    char s[] = "ok \xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 bad:\xff\xc3 \xed\xa0\x80 \xc0\xaf end";
    size_t bad = agent_utf8_sanitize(s, sizeof s - 1);
    assert_string_equal(s, "ok \xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 bad:?? ??? ?? end");
    assert_int_equal(bad, 7);
    char cut[] = "\xa9rest"; /* a ring cut in the middle of a character */
    assert_int_equal(agent_utf8_sanitize(cut, 5), 1);
    assert_string_equal(cut, "?rest");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ring),
        cmocka_unit_test(test_ring_big),
        cmocka_unit_test(test_utf8),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
