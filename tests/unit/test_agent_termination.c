/* test_agent_termination.c - the termination message: summary line, phases
 * JSON line (parseable back), folding, truncation to Kubernetes' 4096 bytes. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "../../agent/termination.h"
#include "kube/util.h"

static void test_format_and_parse(void **s)
{
    (void)s;
    struct agent_phases ph = { { 0 } };
    ph.at_ms[AGENT_PHASE_WORKERS_READY] = 1798675262123LL;
    ph.at_ms[AGENT_PHASE_MPIRUN_STARTED] = 1798675262200LL;
    char *m = agent_termination_format("mpirun exited 0\nafter 2 s", &ph);
    assert_non_null(m);
    char *nl = strchr(m, '\n');
    assert_non_null(nl);
    assert_memory_equal(m, "mpirun exited 0 after 2 s\n", 26);
    assert_non_null(strstr(m, "\"workersReady\":\"2026-12-31T"));
    assert_null(strstr(m, "firstOutput"));
    struct agent_phases back;
    char *line = nl + 1;
    line[strcspn(line, "\n")] = '\0';
    assert_int_equal(agent_phases_parse(line, &back), 0);
    assert_memory_equal(&back, &ph, sizeof(ph));
    free(m);
    assert_int_equal(agent_phases_parse("phases: {\"finished\":3}", &back), -1);
    assert_int_equal(agent_phases_parse("nope", &back), -1);
}

static void test_truncate(void **s)
{
    (void)s;
    struct agent_phases ph = { { 0 } };
    for (int i = 0; i < AGENT_PHASE_COUNT; i++)
        agent_phase_mark(&ph, i);
    size_t big = 10000;
    char *sum = malloc(big + 1);
    memset(sum, 'x', big);
    sum[big] = '\0';
    char *m = agent_termination_format(sum, &ph);
    assert_true(strlen(m) <= AGENT_TERMINATION_MAX);
    assert_non_null(strstr(m, "...\nphases: {\"workersReady\""));
    assert_non_null(strstr(m, "\"finished\""));
    free(m);
    free(sum);
}

static void test_mark_once(void **s)
{
    (void)s;
    struct agent_phases ph = { { 0 } };
    agent_phase_mark(&ph, AGENT_PHASE_FINISHED);
    int64_t t = ph.at_ms[AGENT_PHASE_FINISHED];
    assert_true(t > 0);
    ph.at_ms[AGENT_PHASE_FINISHED] = 5;
    agent_phase_mark(&ph, AGENT_PHASE_FINISHED);
    assert_int_equal(ph.at_ms[AGENT_PHASE_FINISHED], 5);
    assert_string_equal(agent_phase_key(AGENT_PHASE_FIRST_OUTPUT), "firstOutput");
}

static void test_write(void **s)
{
    (void)s;
    char path[] = "/tmp/agent-term-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    struct agent_phases ph = { { 0 } };
    agent_phase_mark(&ph, AGENT_PHASE_WORKERS_READY);
    char *err = NULL;
    assert_int_equal(agent_termination_write(path, "worker w-1 deleted", &ph, NULL, &err), 0);
    char *text = NULL;
    size_t len = 0;
    assert_int_equal(kube_read_file(path, 8192, &text, &len, &err), 0);
    assert_true(strncmp(text, "worker w-1 deleted\nphases: {\"workersReady\":", 43) == 0);
    free(text);
    unlink(path);
    /* no termination log directory: skipped, not an error */
    assert_int_equal(agent_termination_write("/nonexistent-dir/x", "s", &ph, NULL, &err), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_format_and_parse),
        cmocka_unit_test(test_truncate),
        cmocka_unit_test(test_mark_once),
        cmocka_unit_test(test_write),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
