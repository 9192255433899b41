/* test_agent_ranksup.c - when a run's ranks are up (agent/ranksup.h): the workers the launch mark
 * names, as a table; the readiness file written, checked (a stale or foreign one reads as not up)
 * and cleared; the start time read from /proc. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "../../agent/hostfile.h"
#include "../../agent/ranksup.h"

struct launched_case {
    const char *mark;
    size_t want;
};

/* the job's workers: j-worker-0 and j-worker-1 */
static const struct launched_case launched_cases[] = {
    { "", 0 },
    { "j-worker-0\n", 1 },
    { "j-worker-0\nj-worker-1\n", 2 },
    { "j-worker-0\nj-worker-0\n", 1 },                                            /* twice: one worker */
    { "j-worker-1.j.default.svc\nj-worker-0.j.default.svc.cluster.local.\n", 2 }, /* FQDNs */
    { "j-worker-0\nj-worker-1", 2 },                                              /* no final newline */
    { "j-worker-2\n?\nJ-WORKER-0\n10.0.0.1\nfd00::1\n", 0 },                      /* no such worker, no pod */
    { "j-launcher\nj-worker-1\n", 1 },                                            /* not a worker */
    { "\n\nj-worker-1\n\n", 1 },
    { "!5 j-worker-0\n!1 j-worker-1\n", 0 }, /* exit lines (mpik8s_rsh_mark_exit) are no launches */
    { "j-worker-1\n!5 j-worker-1\n", 1 },
};

static void test_launched(void **state)
{
    (void)state;
    struct agent_hostlist l = { 0 };
    char *err = NULL;
    assert_int_equal(agent_hostlist_add(&l, "j-worker-0.j.default.svc", 1, &err), 0);
    assert_int_equal(agent_hostlist_add(&l, "j-worker-1.j.default.svc", 1, &err), 0);
    for (size_t i = 0; i < sizeof(launched_cases) / sizeof(launched_cases[0]); i++) {
        const struct launched_case *c = &launched_cases[i];
        size_t got = agent_ranksup_launched(c->mark, strlen(c->mark), &l);
        if (got != c->want)
            fail_msg("mark %zu (\"%s\"): %zu workers, want %zu", i, c->mark, got, c->want);
    }
    struct agent_hostlist none = { 0 };
    assert_int_equal(agent_ranksup_launched("j-worker-0\n", 11, &none), 0);
    agent_hostlist_free(&l);
}

static void test_launched_file(void **state)
{
    (void)state;
    char dir[] = "/tmp/ranksup-XXXXXX", path[64];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/called", dir);
    struct agent_hostlist l = { 0 };
    assert_int_equal(agent_hostlist_add(&l, "w-0", 1, NULL), 0);
    assert_int_equal(agent_ranksup_launched_file(path, &l), 0); /* no mark yet */
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("w-0\n", f);
    fclose(f);
    assert_int_equal(agent_ranksup_launched_file(path, &l), 1);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(rmdir(dir), 0);
    agent_hostlist_free(&l);
}

static void test_file(void **state)
{
    (void)state;
    char dir[] = "/tmp/ranksup-XXXXXX", path[64];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/%s", dir, AGENT_RANKSUP_FILE);
    char *err = NULL;
    assert_int_equal(agent_ranksup_check(dir), 0);       /* none */
    assert_int_equal(agent_ranksup_clear(dir, &err), 0); /* none to remove */
    assert_int_equal(agent_ranksup_write(dir, &err), 0);
    assert_null(err);
    assert_int_equal(agent_ranksup_check(dir), 1);
    /* an earlier run's file: this pid with another start time, or a process that is gone */
    unsigned long long st;
    assert_int_equal(agent_proc_starttime(getpid(), &st), 0);
    const char *stale[] = { "%ld 1\n", "999999999 %llu\n", "garbage\n", "" };
    for (size_t i = 0; i < sizeof(stale) / sizeof(stale[0]); i++) {
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        if (i == 0)
            fprintf(f, stale[i], (long)getpid());
        else if (i == 1)
            fprintf(f, stale[i], st);
        else
            fputs(stale[i], f);
        fclose(f);
        if (agent_ranksup_check(dir) != 0)
            fail_msg("stale file %zu read as up", i);
    }
    assert_int_equal(agent_ranksup_write(dir, &err), 0);
    assert_int_equal(agent_ranksup_check(dir), 1);
    assert_int_equal(agent_ranksup_clear(dir, &err), 0);
    assert_int_equal(agent_ranksup_check(dir), 0);
    assert_int_equal(access(path, F_OK), -1);
    /* a directory that is not there: the message names the file */
    assert_int_equal(agent_ranksup_write("/nonexistent-ranksup", &err), -1);
    assert_non_null(strstr(err, "/nonexistent-ranksup/"));
    free(err);
    assert_int_equal(rmdir(dir), 0);
}

static void test_starttime(void **state)
{
    (void)state;
    unsigned long long a = 0, b = 0;
    assert_int_equal(agent_proc_starttime(getpid(), &a), 0);
    assert_int_equal(agent_proc_starttime(getpid(), &b), 0);
    assert_true(a > 0 && a == b);
    assert_int_equal(agent_proc_starttime(1, &b), 0);
    assert_true(b <= a);
    assert_int_equal(agent_proc_starttime(999999999, &b), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_launched),
        cmocka_unit_test(test_launched_file),
        cmocka_unit_test(test_file),
        cmocka_unit_test(test_starttime),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
