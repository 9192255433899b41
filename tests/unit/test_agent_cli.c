/* test_agent_cli.c - option parsing: flags over the controller's environment
 * over defaults, durations, flavours, bad values rejected, run's CMD kept intact. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "../../agent/agent.h"

/* agent_opts_parse refuses argv (with the environment as set) with a message that holds want. */
static void parse_fails(const char *cmd, int argc, char **argv, const char *want)
{
    struct agent_opts o;
    char *errmsg = NULL;
    assert_int_equal(agent_opts_parse(&o, cmd, argc, argv, &errmsg), -1);
    assert_non_null(errmsg);
    if (!strstr(errmsg, want))
        fail_msg("message \"%s\" lacks \"%s\"", errmsg, want);
    free(errmsg);
    agent_opts_free(&o);
}

static void clear_env(void)
{
    static const char *const vars[] = { "MPI_JOB_NAME",
                                        "MPI_JOB_NAMESPACE",
                                        "MPI_JOB_TRANSPORT",
                                        "MPI_JOB_WORKER_CONTAINER",
                                        "MPI_JOB_SSH_DIR",
                                        "MPI_JOB_SSH_PORT",
                                        "MPI_JOB_WORKERS",
                                        "MPI_JOB_SLOTS",
                                        "MPI_AGENT_TIMEOUT",
                                        "MPI_AGENT_PROGRESS_TIMEOUT",
                                        "MPI_AGENT_NETWORK_TIMEOUT",
                                        "MPI_JOB_IP_FAMILY",
                                        "MPI_AGENT_RSH_TIMEOUT",
                                        "MPI_JOB_MPI_IMPLEMENTATION",
                                        "MPI_AGENT_TERMINATION_LOG",
                                        "MPI_JOB_LAUNCHER_UID",
                                        NULL };
    for (int i = 0; vars[i]; i++)
        unsetenv(vars[i]);
    setenv("KUBE_SA_DIR", "/nonexistent", 1);
}

static void test_durations(void **s)
{
    (void)s;
    double d;
    assert_int_equal(agent_duration_parse("90", &d), 0);
    assert_true(d == 90);
    assert_int_equal(agent_duration_parse("15m", &d), 0);
    assert_true(d == 900);
    assert_int_equal(agent_duration_parse("250ms", &d), 0);
    assert_true(d > 0.249 && d < 0.251);
    assert_int_equal(agent_duration_parse("1.5s", &d), 0);
    assert_true(d == 1.5);
    assert_int_equal(agent_duration_parse("2h", &d), 0);
    assert_true(d == 7200);
    assert_int_equal(agent_duration_parse("", &d), -1);
    assert_int_equal(agent_duration_parse("-1", &d), -1);
    assert_int_equal(agent_duration_parse("5x", &d), -1);
    assert_int_equal(agent_duration_parse("nan", &d), -1);
}

static void test_flavours(void **s)
{
    (void)s;
    enum mpik8s_mpi m = MPIK8S_MPI_MPICH;
    assert_int_equal(mpik8s_mpi_parse("OpenMPI", &m), 0);
    assert_int_equal(m, MPIK8S_MPI_OPENMPI);
    m = MPIK8S_MPI_MPICH;
    assert_int_equal(mpik8s_mpi_parse("prrte", &m), 0); /* Open MPI 5: the same implementation */
    assert_int_equal(m, MPIK8S_MPI_OPENMPI);
    assert_int_equal(mpik8s_mpi_parse("MPICH", &m), 0);
    assert_int_equal(m, MPIK8S_MPI_MPICH);
    assert_int_equal(mpik8s_mpi_parse("intel", &m), 0);
    assert_string_equal(mpik8s_mpi_flag(m), "intel");
    assert_string_equal(mpik8s_mpi_name(m), "Intel");
    assert_int_equal(mpik8s_mpi_parse("lam", &m), -1);
    assert_int_equal(mpik8s_mpi_parse(NULL, &m), -1);
    assert_int_equal(m, MPIK8S_MPI_INTEL);
}

static void test_env_then_flags(void **s)
{
    (void)s;
    clear_env();
    setenv("MPI_JOB_NAME", "pi", 1);
    setenv("MPI_JOB_NAMESPACE", "envns", 1);
    setenv("MPI_JOB_TRANSPORT", "ssh", 1);
    setenv("MPI_JOB_WORKERS", "8", 1);
    setenv("MPI_AGENT_TIMEOUT", "2m", 1);
    setenv("MPI_AGENT_PROGRESS_TIMEOUT", "30", 1);
    char *argv[] = { "run", "-n", "flagns", "--timeout", "5s", "-v", "--", "mpirun", "-np", "2", "--timeout", "x", NULL };
    struct agent_opts o;
    assert_int_equal(agent_opts_parse(&o, "run", 12, argv, NULL), 0);
    assert_string_equal(o.namespace, "flagns");
    assert_string_equal(o.job, "pi");
    assert_int_equal(o.transport, MPIK8S_TRANSPORT_SSH);
    assert_int_equal(o.workers, 8);
    assert_true(o.timeout_s == 5);
    assert_true(o.progress_timeout_s == 30);
    assert_int_equal(o.verbose, 1);
    assert_string_equal(o.hostfile, "/etc/mpi/hostfile");
    assert_int_equal(o.hostfile_given, 0);
    assert_string_equal(o.dest, "/opt/kube");
    assert_int_equal(o.argc, 5);
    assert_string_equal(o.argv[0], "mpirun");
    assert_string_equal(o.argv[3], "--timeout");
    assert_null(o.context);
    agent_opts_free(&o);
    /* --context and --kubeconfig: what mpi-agent status/logs and the plugin connect with */
    char *argv2[] = { "status", "--context", "kind-b", "--kubeconfig", "/k/config", "job1", NULL };
    assert_int_equal(agent_opts_parse(&o, "status", 6, argv2, NULL), 0);
    assert_string_equal(o.context, "kind-b");
    assert_string_equal(o.kubeconfig, "/k/config");
    assert_int_equal(o.argc, 1);
    assert_string_equal(o.argv[0], "job1");
    agent_opts_free(&o);
    clear_env();
}

static void test_bad_values(void **s)
{
    (void)s;
    clear_env();
    char *a1[] = { "init", "--timeout", "soon", NULL };
    parse_fails("init", 3, a1, "--timeout: expected a duration like 90, 90s, 15m or 250ms, got \"soon\"");
    char *a2[] = { "init", "--transport", "rsh", NULL };
    parse_fails("init", 3, a2, "--transport: expected exec or ssh, got \"rsh\"");
    char *a3[] = { "init", "--bogus", NULL };
    parse_fails("init", 2, a3, "bad option \"--bogus\" (see mpi-agent init --help)");
    setenv("MPI_JOB_WORKERS", "many", 1);
    char *a4[] = { "init", NULL };
    parse_fails("init", 1, a4, "MPI_JOB_WORKERS: expected a whole number >= 0, got \"many\"");
    clear_env();
}

/* The network timeout: 60 s by default, the operator's variable (0 = off), the flag over both;
 * a bad value names the variable. */
/* MPI_JOB_IP_FAMILY: Kubernetes' spelling only, named when wrong */
static void test_ip_family(void **s)
{
    (void)s;
    clear_env();
    struct agent_opts o;
    char *a[] = { "run", "--", "true", NULL };
    assert_int_equal(agent_opts_parse(&o, "run", 3, a, NULL), 0);
    assert_int_equal(o.ip_family, 0);
    agent_opts_free(&o);
    setenv("MPI_JOB_IP_FAMILY", "IPv6", 1);
    assert_int_equal(agent_opts_parse(&o, "run", 3, a, NULL), 0);
    assert_int_equal(o.ip_family, 6);
    agent_opts_free(&o);
    setenv("MPI_JOB_IP_FAMILY", "IPv4", 1);
    assert_int_equal(agent_opts_parse(&o, "run", 3, a, NULL), 0);
    assert_int_equal(o.ip_family, 4);
    agent_opts_free(&o);
    setenv("MPI_JOB_IP_FAMILY", "v6", 1);
    parse_fails("run", 3, a, "MPI_JOB_IP_FAMILY: expected IPv4 or IPv6, got \"v6\"");
    clear_env();
}

static void test_network_timeout(void **s)
{
    (void)s;
    clear_env();
    struct agent_opts o;
    char *a[] = { "run", "--", "true", NULL };
    assert_int_equal(agent_opts_parse(&o, "run", 3, a, NULL), 0);
    assert_true(o.network_timeout_s == 60);
    agent_opts_free(&o);
    setenv("MPI_AGENT_NETWORK_TIMEOUT", "0", 1);
    assert_int_equal(agent_opts_parse(&o, "run", 3, a, NULL), 0);
    assert_true(o.network_timeout_s == 0);
    agent_opts_free(&o);
    setenv("MPI_AGENT_NETWORK_TIMEOUT", "20", 1);
    char *b[] = { "run", "--network-timeout", "2m", "--", "true", NULL };
    assert_int_equal(agent_opts_parse(&o, "run", 5, b, NULL), 0);
    assert_true(o.network_timeout_s == 120);
    agent_opts_free(&o);
    setenv("MPI_AGENT_NETWORK_TIMEOUT", "soon", 1);
    parse_fails("run", 3, a, "MPI_AGENT_NETWORK_TIMEOUT: expected a duration");
    clear_env();
}

/* The launch watch's bound (docs/agent.md "No rsh call"): 120 s by default, the variable (0 = off),
 * the flag over both; a bad value names the variable. */
static void test_rsh_timeout(void **s)
{
    (void)s;
    clear_env();
    struct agent_opts o;
    char *a[] = { "run", "--", "true", NULL };
    assert_int_equal(agent_opts_parse(&o, "run", 3, a, NULL), 0);
    assert_true(o.rsh_timeout_s == 120);
    agent_opts_free(&o);
    setenv("MPI_AGENT_RSH_TIMEOUT", "0", 1);
    assert_int_equal(agent_opts_parse(&o, "run", 3, a, NULL), 0);
    assert_true(o.rsh_timeout_s == 0);
    agent_opts_free(&o);
    char *b[] = { "run", "--rsh-timeout", "1m", "--", "true", NULL };
    assert_int_equal(agent_opts_parse(&o, "run", 5, b, NULL), 0);
    assert_true(o.rsh_timeout_s == 60);
    agent_opts_free(&o);
    setenv("MPI_AGENT_RSH_TIMEOUT", "soon", 1);
    parse_fails("run", 3, a, "MPI_AGENT_RSH_TIMEOUT: expected a duration");
    clear_env();
}

/* MPI_JOB_LAUNCHER_UID takes any uid Kubernetes allows, e.g. OpenShift's 1000870000 */
static void test_launcher_uid(void **s)
{
    (void)s;
    clear_env();
    struct agent_opts o;
    char *a[] = { "init", NULL };
    assert_int_equal(agent_opts_parse(&o, "init", 1, a, NULL), 0);
    assert_int_equal(o.launcher_uid, -1);
    agent_opts_free(&o);
    setenv("MPI_JOB_LAUNCHER_UID", "1000870000", 1);
    assert_int_equal(agent_opts_parse(&o, "init", 1, a, NULL), 0);
    assert_int_equal(o.launcher_uid, 1000870000);
    agent_opts_free(&o);
    setenv("MPI_JOB_LAUNCHER_UID", "2147483647", 1);
    assert_int_equal(agent_opts_parse(&o, "init", 1, a, NULL), 0);
    assert_int_equal(o.launcher_uid, 2147483647);
    agent_opts_free(&o);
    const char *bad[] = { "2147483648", "-1", "1000x", NULL };
    for (int i = 0; bad[i]; i++) {
        setenv("MPI_JOB_LAUNCHER_UID", bad[i], 1);
        parse_fails("init", 1, a, "MPI_JOB_LAUNCHER_UID: expected a uid 0-2147483647, got");
    }
    clear_env();
}

static void test_status_positional(void **s)
{
    (void)s;
    clear_env();
    char *argv[] = { "status", "-n", "ns1", "myjob", "--hostfile", "/tmp/h", NULL };
    struct agent_opts o;
    assert_int_equal(agent_opts_parse(&o, "status", 6, argv, NULL), 0);
    /* options after the positional JOB are still options */
    assert_int_equal(o.argc, 1);
    assert_string_equal(o.argv[0], "myjob");
    assert_string_equal(o.namespace, "ns1");
    assert_string_equal(o.hostfile, "/tmp/h");
    assert_int_equal(o.hostfile_given, 1);
    agent_opts_free(&o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_durations),         cmocka_unit_test(test_flavours),
        cmocka_unit_test(test_env_then_flags),    cmocka_unit_test(test_bad_values),
        cmocka_unit_test(test_status_positional), cmocka_unit_test(test_launcher_uid),
        cmocka_unit_test(test_network_timeout),   cmocka_unit_test(test_ip_family),
        cmocka_unit_test(test_rsh_timeout),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
