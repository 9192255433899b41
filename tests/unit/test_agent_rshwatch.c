/* test_agent_rshwatch.c - the launch watch's pure half (agent/rshwatch.h): the verdict as a table of
 * what was seen and when, the stack a program name or mpirun's output shows, and the message naming
 * the stack, the variable it did not read (with a user's value) and what to set. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "../../agent/rshwatch.h"

struct verdict_case {
    int64_t bound, launcher_at;
    int rsh_called;
    int64_t now;
    int cmd_done;
    enum agent_rshwatch_verdict want;
};

static const struct verdict_case verdicts[] = {
    /* off */
    { 0, 1000, 0, 99000, 0, AGENT_RSHWATCH_OK },
    /* no launcher seen: wait while the command runs, nothing to say once it ended */
    { 20000, 0, 0, 99000, 0, AGENT_RSHWATCH_WAIT },
    { 20000, 0, 0, 99000, 1, AGENT_RSHWATCH_OK },
    /* a launcher within the bound: wait; it called mpi-rsh: done */
    { 20000, 1000, 0, 20999, 0, AGENT_RSHWATCH_WAIT },
    { 20000, 1000, 1, 20999, 0, AGENT_RSHWATCH_OK },
    { 20000, 1000, 1, 90000, 1, AGENT_RSHWATCH_OK },
    /* the bound passed without a call, or the launcher ended without one (issue #36: 0.1 s) */
    { 20000, 1000, 0, 21000, 0, AGENT_RSHWATCH_FAIL },
    { 20000, 1000, 0, 1100, 1, AGENT_RSHWATCH_FAIL },
};

static void test_verdicts(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(verdicts) / sizeof(verdicts[0]); i++) {
        const struct verdict_case *c = &verdicts[i];
        struct agent_rshwatch w = { c->bound, c->launcher_at, c->rsh_called, AGENT_STACK_OPENMPI };
        enum agent_rshwatch_verdict v = agent_rshwatch_decide(&w, c->now, c->cmd_done);
        if (v != c->want)
            fail_msg("case %zu: verdict %d, want %d", i, (int)v, (int)c->want);
    }
}

static void test_programs(void **state)
{
    (void)state;
    assert_int_equal(agent_stack_of_program("prterun"), AGENT_STACK_OMPI5);
    assert_int_equal(agent_stack_of_program("/usr/bin/prterun"), AGENT_STACK_OMPI5);
    assert_int_equal(agent_stack_of_program("/usr/bin/orterun"), AGENT_STACK_OMPI4);
    assert_int_equal(agent_stack_of_program("mpiexec.hydra"), AGENT_STACK_HYDRA);
    assert_int_equal(agent_stack_of_program("/usr/bin/mpirun.mpich"), AGENT_STACK_HYDRA);
    assert_int_equal(agent_stack_of_program("mpirun"), AGENT_STACK_OPENMPI);
    assert_int_equal(agent_stack_of_program("/usr/bin/mpirun.openmpi"), AGENT_STACK_OPENMPI);
    assert_int_equal(agent_stack_of_program("sh"), AGENT_STACK_NONE);
    assert_int_equal(agent_stack_of_program("mpirunner"), AGENT_STACK_NONE);
    assert_int_equal(agent_stack_of_program(NULL), AGENT_STACK_NONE);
    /* precision wins, ties keep the first */
    assert_int_equal(agent_stack_better(AGENT_STACK_OPENMPI, AGENT_STACK_OMPI5), AGENT_STACK_OMPI5);
    assert_int_equal(agent_stack_better(AGENT_STACK_OMPI4, AGENT_STACK_OPENMPI), AGENT_STACK_OMPI4);
    assert_int_equal(agent_stack_better(AGENT_STACK_OMPI4, AGENT_STACK_OMPI5), AGENT_STACK_OMPI4);
    assert_int_equal(agent_stack_better(AGENT_STACK_NONE, AGENT_STACK_OPENMPI), AGENT_STACK_OPENMPI);
}

static void test_output(void **state)
{
    (void)state;
    /* issue #36's launcher output */
    const char *o5 = "ssh: connect to host o5exec-worker-0.o5exec.default.svc port 2222: Connection refused\r\n"
                     "PRTE has lost communication with a remote daemon.\n";
    assert_int_equal(agent_stack_of_output(o5, strlen(o5)), AGENT_STACK_OMPI5);
    const char *o4 = "ORTE was unable to reliably start one or more daemons.\n";
    assert_int_equal(agent_stack_of_output(o4, strlen(o4)), AGENT_STACK_OMPI4);
    const char *h = "[mpiexec@l] HYDU_sock_write: write error\n";
    assert_int_equal(agent_stack_of_output(h, strlen(h)), AGENT_STACK_HYDRA);
    assert_int_equal(agent_stack_of_output("pi is 3.14", 10), AGENT_STACK_NONE);
    assert_int_equal(agent_stack_of_output("PRTE", 3), AGENT_STACK_NONE); /* only len bytes count */
    assert_int_equal(agent_stack_of_output(NULL, 0), AGENT_STACK_NONE);
}

static void test_ended(void **state)
{
    (void)state;
    const char *o5 = "ssh: connect to host w-0 port 2222: Connection refused\n";
    const char *lost = "PRTE has lost communication with a remote daemon.\n";
    const char *usage = "mpirun: Error: unknown option \"--bogus\"\n";
    assert_true(agent_rshwatch_ended_badly(0, NULL, 0));               /* ranks ran, not on the workers */
    assert_true(agent_rshwatch_ended_badly(255, o5, strlen(o5)));      /* its own ssh */
    assert_true(agent_rshwatch_ended_badly(1, lost, strlen(lost)));    /* daemons lost */
    assert_false(agent_rshwatch_ended_badly(1, usage, strlen(usage))); /* a usage error stands */
    assert_false(agent_rshwatch_ended_badly(-1, NULL, 0));
}

static void test_informational(void **state)
{
    (void)state;
    char *v[] = { "mpirun", "--version", NULL }, *run[] = { "mpirun", "-np", "2", "./pi", NULL };
    char *h[] = { "mpiexec", "-h", NULL }, *none[] = { NULL };
    assert_true(agent_rshwatch_informational(v));
    assert_true(agent_rshwatch_informational(h));
    assert_false(agent_rshwatch_informational(run));
    assert_false(agent_rshwatch_informational(none));
    assert_false(agent_rshwatch_informational(NULL));
}

/* A getenv over a NULL-terminated name/value list. */
static const char *table_get(const char *name, void *ud)
{
    const char *const *t = ud;
    for (; t && t[0]; t += 2)
        if (strcmp(t[0], name) == 0)
            return t[1];
    return NULL;
}

static void expect_msg(enum agent_stack st, enum mpik8s_mpi mpi, int ended, const char *const *env, const char *const *parts)
{
    char *m = agent_rshwatch_message(st, mpi, "/opt/kube/mpi-rsh", 20.0, ended, table_get, (void *)env);
    assert_non_null(m);
    assert_null(strchr(m, '\n'));
    for (; *parts; parts++)
        if (!strstr(m, *parts))
            fail_msg("message lacks \"%s\": %s", *parts, m);
    free(m);
}

static void test_messages(void **state)
{
    (void)state;
    const char *ours5[] = { "PRTE_MCA_plm_ssh_agent", "/opt/kube/mpi-rsh : false", NULL };
    expect_msg(AGENT_STACK_OMPI5, MPIK8S_MPI_OPENMPI, 0, ours5,
               (const char *[]){ "Open MPI 5 (PRRTE) started no daemon through /opt/kube/mpi-rsh within 20.0 s",
                                 "did not read PRTE_MCA_plm_ssh_agent ('/opt/kube/mpi-rsh : false')",
                                 "set PRTE_MCA_plm_ssh_agent='/opt/kube/mpi-rsh : false' in the launcher's environment",
                                 NULL });
    const char *user4[] = { "OMPI_MCA_plm_rsh_agent", "ssh", NULL };
    expect_msg(AGENT_STACK_OMPI4, MPIK8S_MPI_OPENMPI, 1, user4,
               (const char *[]){ "Open MPI 4 (ORTE)", "and exited after 20.0 s",
                                 "OMPI_MCA_plm_rsh_agent ('ssh', set instead of '/opt/kube/mpi-rsh : false')", NULL });
    const char *none[] = { NULL };
    expect_msg(AGENT_STACK_OPENMPI, MPIK8S_MPI_OPENMPI, 0, none,
               (const char *[]){ "version not seen", "OMPI_MCA_plm_rsh_agent (not set) or PRTE_MCA_plm_ssh_agent (not set)",
                                 "set OMPI_MCA_plm_rsh_agent='/opt/kube/mpi-rsh : false' and "
                                 "PRTE_MCA_plm_ssh_agent='/opt/kube/mpi-rsh : false'",
                                 NULL });
    expect_msg(AGENT_STACK_HYDRA, MPIK8S_MPI_MPICH, 0, none,
               (const char *[]){ "MPICH (Hydra)", "HYDRA_LAUNCHER (not set) or HYDRA_LAUNCHER_EXEC (not set)",
                                 "set HYDRA_LAUNCHER='rsh' and HYDRA_LAUNCHER_EXEC='/opt/kube/mpi-rsh'", NULL });
    expect_msg(AGENT_STACK_OPENMPI, MPIK8S_MPI_INTEL, 0, none,
               (const char *[]){ "Intel MPI (Hydra)", "I_MPI_HYDRA_BOOTSTRAP='rsh' and I_MPI_HYDRA_BOOTSTRAP_EXEC=", NULL });
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_verdicts),      cmocka_unit_test(test_programs), cmocka_unit_test(test_output),
        cmocka_unit_test(test_informational), cmocka_unit_test(test_ended),    cmocka_unit_test(test_messages),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
