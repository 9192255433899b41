/* test_agent_launch_env.c - the per-flavour launch environment: what is set,
 * that the user's values are kept, and that an unsafe num_concurrent is raised. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "../../agent/launch_env.h"

/* A fake environment: NULL-terminated name, value pairs. */
static const char *fake_get(const char *name, void *ud)
{
    const char *const *kv = ud;
    for (; kv && kv[0]; kv += 2)
        if (!strcmp(kv[0], name))
            return kv[1];
    return NULL;
}

static const struct agent_env_item *find(const struct agent_env_plan *p, const char *name)
{
    for (size_t i = 0; i < p->n; i++)
        if (!strcmp(p->v[i].name, name))
            return &p->v[i];
    return NULL;
}

static void expect(const struct agent_env_plan *p, const char *name, const char *value, enum agent_env_action a)
{
    const struct agent_env_item *it = find(p, name);
    if (!it)
        fail_msg("%s not in plan", name);
    assert_string_equal(it->value, value);
    assert_int_equal(it->action, a);
}

static void test_openmpi4(void **s)
{
    (void)s;
    struct mpik8s_launch_in in = { MPIK8S_MPI_OPENMPI, "/opt/kube/mpi-rsh", "/etc/mpi/hostfile", 8, 2 };
    const char *user[] = { "OMPI_MCA_orte_keep_fqdn_hostnames", "false", NULL };
    struct agent_env_plan p;
    assert_int_equal(agent_env_plan(&in, fake_get, (void *)user, &p), 0);
    expect(&p, "OMPI_MCA_plm_rsh_agent", "/opt/kube/mpi-rsh : false", AGENT_ENV_SET);
    expect(&p, "OMPI_MCA_orte_default_hostfile", "/etc/mpi/hostfile", AGENT_ENV_SET);
    expect(&p, "OMPI_MCA_orte_keep_fqdn_hostnames", "false", AGENT_ENV_KEPT);
    expect(&p, "OMPI_MCA_plm_rsh_no_tree_spawn", "1", AGENT_ENV_SET);
    expect(&p, "OMPI_MCA_orte_leave_session_attached", "1", AGENT_ENV_SET);
    expect(&p, "OMPI_MCA_orte_set_default_slots", "2", AGENT_ENV_SET);
    expect(&p, "OMPI_MCA_plm_rsh_num_concurrent", "128", AGENT_ENV_SET);
    expect(&p, "SHELL", "/bin/sh", AGENT_ENV_SET); /* Open MPI's shell probe under a UID without passwd entry */
    agent_env_plan_free(&p);
}

static void test_num_concurrent(void **s)
{
    (void)s;
    struct mpik8s_launch_in in = { MPIK8S_MPI_OPENMPI, "/r", "/h", 300, 0 };
    struct agent_env_plan p;
    assert_int_equal(agent_env_plan(&in, fake_get, NULL, &p), 0);
    expect(&p, "OMPI_MCA_plm_rsh_num_concurrent", "300", AGENT_ENV_SET);
    assert_null(find(&p, "OMPI_MCA_orte_set_default_slots"));
    agent_env_plan_free(&p);
    const char *low[] = { "OMPI_MCA_plm_rsh_num_concurrent", "4", NULL };
    assert_int_equal(agent_env_plan(&in, fake_get, (void *)low, &p), 0);
    expect(&p, "OMPI_MCA_plm_rsh_num_concurrent", "300", AGENT_ENV_RAISED);
    agent_env_plan_free(&p);
    const char *bad[] = { "OMPI_MCA_plm_rsh_num_concurrent", "lots", NULL };
    assert_int_equal(agent_env_plan(&in, fake_get, (void *)bad, &p), 0);
    expect(&p, "OMPI_MCA_plm_rsh_num_concurrent", "300", AGENT_ENV_RAISED);
    agent_env_plan_free(&p);
    const char *high[] = { "OMPI_MCA_plm_rsh_num_concurrent", "512", NULL };
    assert_int_equal(agent_env_plan(&in, fake_get, (void *)high, &p), 0);
    expect(&p, "OMPI_MCA_plm_rsh_num_concurrent", "512", AGENT_ENV_KEPT);
    agent_env_plan_free(&p);
}

/* Open MPI 5 (PRRTE 3.0.x) reads the PRTE_MCA_ names of its plm component ssh, which the same plan
 * carries (the full list per stack: test_mpik8s_launch.c); a user's value wins there too */
static void test_openmpi5(void **s)
{
    (void)s;
    struct mpik8s_launch_in in = { MPIK8S_MPI_OPENMPI, "/r", "/h", 2, 0 };
    struct agent_env_plan p;
    const char *mine[] = { "PRTE_MCA_plm_ssh_agent", "/my/agent", NULL };
    assert_int_equal(agent_env_plan(&in, fake_get, (void *)mine, &p), 0);
    expect(&p, "PRTE_MCA_plm_ssh_agent", "/my/agent", AGENT_ENV_KEPT);
    agent_env_plan_free(&p);
    assert_int_equal(agent_env_plan(&in, fake_get, NULL, &p), 0);
    expect(&p, "PRTE_MCA_plm_ssh_agent", "/r : false", AGENT_ENV_SET);
    expect(&p, "PRTE_MCA_prte_default_hostfile", "/h", AGENT_ENV_SET);
    expect(&p, "PRTE_MCA_plm_ssh_no_tree_spawn", "1", AGENT_ENV_SET);
    assert_null(find(&p, "PRTE_MCA_prte_leave_session_attached")); /* PRRTE has no such parameter */
    expect(&p, "PRTE_MCA_prte_keep_fqdn_hostnames", "true", AGENT_ENV_SET);
    expect(&p, "PRTE_MCA_plm_ssh_num_concurrent", "128", AGENT_ENV_SET);
    assert_null(find(&p, "PRTE_MCA_prte_set_default_slots")); /* slots unknown */
    expect(&p, "SHELL", "/bin/sh", AGENT_ENV_SET);
    agent_env_plan_free(&p);
    const char *user[] = { "SHELL", "/bin/zsh", NULL }; /* the user's SHELL is kept */
    assert_int_equal(agent_env_plan(&in, fake_get, (void *)user, &p), 0);
    expect(&p, "SHELL", "/bin/zsh", AGENT_ENV_KEPT);
    agent_env_plan_free(&p);
}

static void test_hydra(void **s)
{
    (void)s;
    struct mpik8s_launch_in in = { MPIK8S_MPI_MPICH, "/r", "/h", 2, 4 };
    const char *user[] = { "HYDRA_HOST_FILE", "/mine", NULL };
    struct agent_env_plan p;
    assert_int_equal(agent_env_plan(&in, fake_get, (void *)user, &p), 0);
    expect(&p, "HYDRA_LAUNCHER", "rsh", AGENT_ENV_SET);
    expect(&p, "HYDRA_LAUNCHER_EXEC", "/r", AGENT_ENV_SET);
    expect(&p, "HYDRA_HOST_FILE", "/mine", AGENT_ENV_KEPT);
    assert_int_equal(p.n, 3); /* no SHELL: Hydra does not probe the shell */
    agent_env_plan_free(&p);
    in.mpi = MPIK8S_MPI_INTEL;
    assert_int_equal(agent_env_plan(&in, fake_get, NULL, &p), 0);
    expect(&p, "I_MPI_HYDRA_BOOTSTRAP", "rsh", AGENT_ENV_SET);
    expect(&p, "I_MPI_HYDRA_BOOTSTRAP_EXEC", "/r", AGENT_ENV_SET);
    expect(&p, "I_MPI_HYDRA_HOST_FILE", "/h", AGENT_ENV_SET);
    expect(&p, "I_MPI_PERHOST", "4", AGENT_ENV_SET);
    agent_env_plan_free(&p);
}

static void test_apply(void **s)
{
    (void)s;
    setenv("OMPI_MCA_orte_default_hostfile", "/user/hf", 1);
    unsetenv("OMPI_MCA_plm_rsh_agent");
    struct mpik8s_launch_in in = { MPIK8S_MPI_OPENMPI, "/opt/kube/mpi-rsh", "/etc/mpi/hostfile", 2, 0 };
    struct agent_env_plan p;
    char *err = NULL;
    assert_int_equal(agent_env_plan(&in, agent_getenv_process, NULL, &p), 0);
    assert_int_equal(agent_env_apply(&p, &err), 0);
    assert_string_equal(getenv("OMPI_MCA_plm_rsh_agent"), "/opt/kube/mpi-rsh : false");
    assert_string_equal(getenv("OMPI_MCA_orte_default_hostfile"), "/user/hf");
    agent_env_plan_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_openmpi4), cmocka_unit_test(test_num_concurrent), cmocka_unit_test(test_openmpi5),
        cmocka_unit_test(test_hydra),    cmocka_unit_test(test_apply),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
