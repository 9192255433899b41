/* test_mpik8s_launch.c - the launch policy (mpik8s_launch_env) as a table: per stack (Open MPI 4,
 * Open MPI 5, MPICH, Intel MPI) the exact names and values, in order, that the operator writes and
 * mpi-agent sets; and the names no runtime reads, which must never come back. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "mpik8s/launch.h"

#define RSH "/opt/kube/mpi-rsh"
#define HF "/etc/mpi/hostfile"
#define MAXV 10

struct var_want {
    const char *name, *value;
    long long min; /* 0: MPIK8S_LAUNCH_NO_MIN */
};

struct stack_case {
    const char *stack; /* for the failure message */
    enum mpik8s_mpi mpi;
    long long workers, slots;
    const char *prefix; /* the stack's own names start so ("" = every variable of the list) */
    struct var_want want[MAXV];
};

static const struct stack_case cases[] = {
    { "Open MPI 4 (ORTE)",
      MPIK8S_MPI_OPENMPI,
      2,
      4,
      "OMPI_MCA_",
      { { "OMPI_MCA_plm_rsh_agent", RSH " : false", 0 },
        { "OMPI_MCA_orte_default_hostfile", HF, 0 },
        { "OMPI_MCA_plm_rsh_no_tree_spawn", "1", 0 },
        { "OMPI_MCA_orte_leave_session_attached", "1", 0 },
        { "OMPI_MCA_plm_rsh_num_concurrent", "128", 2 },
        { "OMPI_MCA_orte_set_default_slots", "4", 0 },
        { "OMPI_MCA_orte_keep_fqdn_hostnames", "true", 0 } } },
    { "Open MPI 5 (PRRTE 3.0.x)",
      MPIK8S_MPI_OPENMPI,
      2,
      4,
      "PRTE_MCA_",
      { { "PRTE_MCA_plm_ssh_agent", RSH " : false", 0 },
        { "PRTE_MCA_prte_default_hostfile", HF, 0 },
        { "PRTE_MCA_plm_ssh_no_tree_spawn", "1", 0 },
        { "PRTE_MCA_plm_ssh_num_concurrent", "128", 2 },
        { "PRTE_MCA_prte_set_default_slots", "4", 0 },
        { "PRTE_MCA_prte_keep_fqdn_hostnames", "true", 0 } } },
    { "Open MPI 4 and 5", MPIK8S_MPI_OPENMPI, 2, 4, "SHELL", { { "SHELL", "/bin/sh", 0 } } },
    /* more workers than the default concurrency, slots unknown */
    { "Open MPI 4, 300 workers",
      MPIK8S_MPI_OPENMPI,
      300,
      0,
      "OMPI_MCA_",
      { { "OMPI_MCA_plm_rsh_agent", RSH " : false", 0 },
        { "OMPI_MCA_orte_default_hostfile", HF, 0 },
        { "OMPI_MCA_plm_rsh_no_tree_spawn", "1", 0 },
        { "OMPI_MCA_orte_leave_session_attached", "1", 0 },
        { "OMPI_MCA_plm_rsh_num_concurrent", "300", 300 },
        { "OMPI_MCA_orte_keep_fqdn_hostnames", "true", 0 } } },
    { "Open MPI 5, 300 workers",
      MPIK8S_MPI_OPENMPI,
      300,
      0,
      "PRTE_MCA_",
      { { "PRTE_MCA_plm_ssh_agent", RSH " : false", 0 },
        { "PRTE_MCA_prte_default_hostfile", HF, 0 },
        { "PRTE_MCA_plm_ssh_no_tree_spawn", "1", 0 },
        { "PRTE_MCA_plm_ssh_num_concurrent", "300", 300 },
        { "PRTE_MCA_prte_keep_fqdn_hostnames", "true", 0 } } },
    { "MPICH (Hydra)",
      MPIK8S_MPI_MPICH,
      2,
      4,
      "",
      { { "HYDRA_LAUNCHER", "rsh", 0 }, { "HYDRA_LAUNCHER_EXEC", RSH, 0 }, { "HYDRA_HOST_FILE", HF, 0 } } },
    { "Intel MPI (Hydra)",
      MPIK8S_MPI_INTEL,
      2,
      4,
      "",
      { { "I_MPI_HYDRA_BOOTSTRAP", "rsh", 0 },
        { "I_MPI_HYDRA_BOOTSTRAP_EXEC", RSH, 0 },
        { "I_MPI_HYDRA_HOST_FILE", HF, 0 },
        { "I_MPI_PERHOST", "4", 0 } } },
    { "Intel MPI, slots unknown",
      MPIK8S_MPI_INTEL,
      2,
      0,
      "",
      { { "I_MPI_HYDRA_BOOTSTRAP", "rsh", 0 },
        { "I_MPI_HYDRA_BOOTSTRAP_EXEC", RSH, 0 },
        { "I_MPI_HYDRA_HOST_FILE", HF, 0 } } },
};

/* Names a runtime does not read (PRRTE has no plm_rsh_* and no leave_session_attached parameter):
 * the guess issue #36 disproved. */
static const char *const never[] = { "PRTE_MCA_plm_rsh_agent", "PRTE_MCA_plm_rsh_no_tree_spawn",
                                     "PRTE_MCA_plm_rsh_num_concurrent", "PRTE_MCA_prte_leave_session_attached" };

static void check_case(const struct stack_case *c)
{
    struct mpik8s_launch_in in = { c->mpi, RSH, HF, c->workers, c->slots };
    struct mpik8s_launch_env e;
    assert_int_equal(mpik8s_launch_env(&in, &e), 0);
    size_t k = 0;
    for (size_t i = 0; i < e.n; i++) {
        if (strncmp(e.v[i].name, c->prefix, strlen(c->prefix)) != 0)
            continue;
        if (k >= MAXV || !c->want[k].name)
            fail_msg("%s: unexpected %s=%s", c->stack, e.v[i].name, e.v[i].value);
        const struct var_want *w = &c->want[k++];
        if (strcmp(e.v[i].name, w->name) != 0 || strcmp(e.v[i].value, w->value) != 0)
            fail_msg("%s: got %s=%s, want %s=%s", c->stack, e.v[i].name, e.v[i].value, w->name, w->value);
        assert_int_equal(e.v[i].min, w->min ? w->min : MPIK8S_LAUNCH_NO_MIN);
    }
    if (k < MAXV && c->want[k].name)
        fail_msg("%s: %s missing", c->stack, c->want[k].name);
    for (size_t i = 0; i < e.n; i++)
        for (size_t j = 0; j < sizeof(never) / sizeof(never[0]); j++)
            if (strcmp(e.v[i].name, never[j]) == 0)
                fail_msg("%s: sets %s, which no runtime reads", c->stack, never[j]);
    mpik8s_launch_env_free(&e);
    assert_int_equal(e.n, 0);
}

static void test_stacks(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        check_case(&cases[i]);
}

/* Open MPI's list is exactly the three rows above (nothing outside them); Hydra's have no others
 * by construction (prefix ""). */
static void test_openmpi_nothing_else(void **state)
{
    (void)state;
    struct mpik8s_launch_in in = { MPIK8S_MPI_OPENMPI, RSH, HF, 2, 4 };
    struct mpik8s_launch_env e;
    assert_int_equal(mpik8s_launch_env(&in, &e), 0);
    assert_int_equal(e.n, 7 + 6 + 1);
    mpik8s_launch_env_free(&e);
}

/* The agent variables the launch-watch names are the ones the list sets. */
static void test_agent_vars(void **state)
{
    (void)state;
    struct mpik8s_launch_in in = { MPIK8S_MPI_OPENMPI, RSH, HF, 2, 4 };
    struct mpik8s_launch_env e;
    assert_int_equal(mpik8s_launch_env(&in, &e), 0);
    assert_string_equal(e.v[0].name, MPIK8S_OMPI4_AGENT_VAR);
    assert_string_equal(e.v[7].name, MPIK8S_OMPI5_AGENT_VAR);
    mpik8s_launch_env_free(&e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stacks),
        cmocka_unit_test(test_openmpi_nothing_else),
        cmocka_unit_test(test_agent_vars),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
