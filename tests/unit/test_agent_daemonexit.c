/* test_agent_daemonexit.c - the daemon-exit stop (agent/daemonexit.h): the first exit line of a
 * launch mark, as a table; mpi-rsh's own writer (mpik8s_rsh_mark_exit) read back; the clock on a
 * real mark file (seen, not yet due, due once, off). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "../../agent/daemonexit.h"
#include "mpik8s/contract.h"
#include "mpik8s/util.h"

struct first_case {
    const char *mark;
    int found;
    const char *pod;
    int code;
};

static const struct first_case first_cases[] = {
    { "", 0, NULL, 0 },
    { "j-worker-0\nj-worker-1\n", 0, NULL, 0 }, /* launches only */
    { "j-worker-0\n!5 j-worker-0\n", 1, "j-worker-0", 5 },
    { "!127 j-worker-1.j.default.svc\n!5 j-worker-0\n", 1, "j-worker-1", 127 }, /* the first, as a pod */
    { "!255 j-worker-1", 1, "j-worker-1", 255 },                                /* no final newline */
    { "!0 j-worker-0\n!256 j-worker-0\n!1000 j-worker-0\n", 0, NULL, 0 },       /* codes out of range */
    { "!5\n!5 \n!x j-worker-0\n! 5 j-worker-0\n!5  j-worker-0\n", 0, NULL, 0 }, /* malformed */
    { "!5 ?\n!5 10.0.0.1\n!5 fd00::1\n!7 j-worker-2\n", 1, "j-worker-2", 7 },   /* no pod, then one */
    { "!5 J-WORKER-0\n", 0, NULL, 0 },
};

static void test_first(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(first_cases) / sizeof(first_cases[0]); i++) {
        const struct first_case *c = &first_cases[i];
        char *pod = NULL;
        int code = -1;
        int got = agent_daemonexit_first(c->mark, strlen(c->mark), &pod, &code);
        if (got != c->found || (c->pod && (!pod || strcmp(pod, c->pod) != 0 || code != c->code)) || (!c->pod && pod))
            fail_msg("mark %zu: got %d %s %d, want %d %s %d", i, got, pod ? pod : "(null)", code, c->found,
                     c->pod ? c->pod : "(null)", c->code);
        free(pod);
    }
    char *pod = (char *)1;
    int code;
    assert_int_equal(agent_daemonexit_first(NULL, 0, &pod, &code), 0);
    assert_null(pod);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    static char buf[4096];
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = 0;
    return buf;
}

/* mpi-rsh's writer: launch and exit lines, odd codes and hosts, read back by the agent's parser */
static void test_writer(void **state)
{
    (void)state;
    char dir[] = "/tmp/daemonexit-XXXXXX", path[64];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/called", dir);
    assert_int_equal(unsetenv(MPIK8S_RSH_ENV_MARK), 0);
    assert_int_equal(mpik8s_rsh_mark_exit("w-0", 5), 0); /* no variable: nothing to do */
    assert_int_equal(access(path, F_OK), -1);
    assert_int_equal(setenv(MPIK8S_RSH_ENV_MARK, path, 1), 0);
    assert_int_equal(mpik8s_rsh_mark("w-0.j.default.svc"), 0);
    assert_int_equal(mpik8s_rsh_mark_exit("w-0.j.default.svc", 137), 0);
    assert_int_equal(mpik8s_rsh_mark_exit("w-1", 0), 0);    /* no code: 255 */
    assert_int_equal(mpik8s_rsh_mark_exit("!5 w-1", 3), 0); /* a host that reads as an exit line */
    assert_int_equal(mpik8s_rsh_mark("!5 w-1"), 0);
    char longhost[700];
    memset(longhost, 'a', sizeof(longhost) - 1);
    longhost[sizeof(longhost) - 1] = 0;
    assert_int_equal(mpik8s_rsh_mark_exit(longhost, 9), 0);
    assert_string_equal(slurp(path), "w-0.j.default.svc\n!137 w-0.j.default.svc\n!255 w-1\n!3 ?\n?\n!9 ?\n");
    char *pod = NULL;
    int code = 0;
    const char *text = slurp(path);
    assert_int_equal(agent_daemonexit_first(text, strlen(text), &pod, &code), 1);
    assert_string_equal(pod, "w-0");
    assert_int_equal(code, 137);
    free(pod);
    assert_int_equal(unsetenv(MPIK8S_RSH_ENV_MARK), 0);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(rmdir(dir), 0);
}

static void append(const char *path, const char *line)
{
    FILE *f = fopen(path, "a");
    assert_non_null(f);
    assert_int_equal(fputs(line, f) >= 0, 1);
    assert_int_equal(fclose(f), 0);
}

/* the clock: the bound counts from when the agent saw the line; the stop is asked for once */
static void test_step(void **state)
{
    (void)state;
    char dir[] = "/tmp/daemonexit-XXXXXX", path[64];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/called", dir);
    struct agent_daemonexit d = { .bound_ms = 30000 };
    assert_null(agent_daemonexit_step(&d, path, "mpiexec", 1000)); /* no mark yet */
    append(path, "w-0\nw-1\n");
    assert_null(agent_daemonexit_step(&d, path, "mpiexec", 2000));
    append(path, "!5 w-1\n");
    assert_null(agent_daemonexit_step(&d, path, "mpiexec", 2500)); /* looks once a second */
    assert_null(agent_daemonexit_step(&d, path, "mpiexec", 3000)); /* seen at 3000 */
    assert_int_equal(d.seen_ms, 3000);
    append(path, "!7 w-0\n");
    assert_null(agent_daemonexit_step(&d, path, "mpiexec", 32999));
    char *line = agent_daemonexit_step(&d, path, "mpiexec", 33000);
    assert_non_null(line);
    assert_string_equal(line, MPIK8S_AGENT_DAEMON_EXIT_PREFIX "w-1 exited with code 5; mpiexec was still running 30 s "
                                                              "later: stopping it\n");
    free(line);
    assert_null(agent_daemonexit_step(&d, path, "mpiexec", 40000)); /* once */
    agent_daemonexit_free(&d);
    struct agent_daemonexit off = { .bound_ms = 0 };
    assert_null(agent_daemonexit_step(&off, path, "mpiexec", 1000000));
    assert_null(off.pod);
    struct agent_daemonexit nomark = { .bound_ms = 1000 };
    assert_null(agent_daemonexit_step(&nomark, NULL, "mpiexec", 5000));
    assert_int_equal(unlink(path), 0);
    assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_first),
        cmocka_unit_test(test_writer),
        cmocka_unit_test(test_step),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
