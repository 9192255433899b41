/* test_rsh_args.c - unit tests for mpi-rsh's command line (argv exactly as
 * Open MPI 4.1, Hydra and ssh-style callers pass it), host -> namespace
 * mapping, the remote command line, and the kill script (run for real with
 * /bin/sh against a tagged local process). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "../../rsh/rsh.h"

#define ARGC(a) ((int)(sizeof(a) / sizeof(a[0])))

static void test_openmpi_argv(void **s)
{
    (void)s;
    /* plm_rsh_args "-x -o StrictHostKeyChecking=no" go before HOST */
    char *argv[] = { "mpi-rsh",      "-x",     "-o",           "StrictHostKeyChecking=no",
                     "job-worker-0", " orted", "-mca",         "ess",
                     "\"env\"",      "-mca",   "orte_hnp_uri", "\"2015232000.0;tcp://192.0.2.2:36133\"",
                     "--tree-spawn" };
    struct rsh_opts o;
    char *err = NULL;
    assert_int_equal(rsh_parse_args(ARGC(argv), argv, &o, &err), 0);
    assert_string_equal(o.host, "job-worker-0");
    assert_string_equal(o.command,
                        " orted -mca ess \"env\" -mca orte_hnp_uri \"2015232000.0;tcp://192.0.2.2:36133\" --tree-spawn");
    rsh_opts_free(&o);
}

static void test_hydra_argv(void **s)
{
    (void)s;
    char *argv[] = { "mpi-rsh",
                     "w-1.job-worker.ns.svc",
                     "\"/usr/bin/hydra_pmi_proxy\"",
                     "--control-port",
                     "launcher:41619",
                     "--rmk",
                     "user",
                     "--proxy-id",
                     "0" };
    struct rsh_opts o;
    char *err = NULL;
    assert_int_equal(rsh_parse_args(ARGC(argv), argv, &o, &err), 0);
    assert_string_equal(o.host, "w-1.job-worker.ns.svc");
    assert_string_equal(o.command, "\"/usr/bin/hydra_pmi_proxy\" --control-port launcher:41619 --rmk user --proxy-id 0");
    rsh_opts_free(&o);
}

static void test_ssh_options(void **s)
{
    (void)s;
    char *argv[] = { "mpi-rsh", "-qnTx",
                     "-p2222",  "-l",
                     "mpiuser", "-oConnectionAttempts=10",
                     "-o",      "ConnectTimeout 7",
                     "-i",      "/etc/ssh-key/id",
                     "-F",      "/dev/null",
                     "--",      "root@host-3",
                     "-v",      "echo",
                     "",        "a  b" };
    struct rsh_opts o;
    char *err = NULL;
    assert_int_equal(rsh_parse_args(ARGC(argv), argv, &o, &err), 0);
    assert_int_equal(o.no_stdin, 1);
    assert_int_equal(o.quiet, 1);
    assert_int_equal(o.port, 2222);
    assert_string_equal(o.user, "mpiuser"); /* -l wins over user@ */
    assert_int_equal(o.attempts, 10);
    assert_int_equal(o.connect_timeout_s, 7);
    assert_string_equal(o.identity, "/etc/ssh-key/id");
    assert_string_equal(o.host, "host-3");
    /* after "--" nothing is an option: -v is the first command word; empty words keep their space */
    assert_string_equal(o.command, "-v echo  a  b");
    assert_int_equal(o.verbose, 0);
    rsh_opts_free(&o);

    /* like ssh, options right after HOST are still options */
    char *argv2[] = { "mpi-rsh", "--namespace", "ns2", "--container=main", "--transport", "ssh", "user@h", "-v",
                      "-p",      "22",          "true" };
    assert_int_equal(rsh_parse_args(ARGC(argv2), argv2, &o, &err), 0);
    assert_string_equal(o.namespace, "ns2");
    assert_string_equal(o.container, "main");
    assert_int_equal(o.transport, MPIK8S_TRANSPORT_SSH);
    assert_string_equal(o.user, "user");
    assert_int_equal(o.verbose, 1);
    assert_int_equal(o.port, 22);
    assert_string_equal(o.command, "true");
    rsh_opts_free(&o);
}

static void expect_usage(int argc, char **argv, const char *needle)
{
    struct rsh_opts o;
    char *err = NULL;
    assert_int_equal(rsh_parse_args(argc, argv, &o, &err), -1);
    assert_non_null(err);
    if (!strstr(err, needle))
        fail_msg("'%s' lacks '%s'", err, needle);
    free(err);
    rsh_opts_free(&o);
}

static void test_usage_errors(void **s)
{
    (void)s;
    char *a1[] = { "mpi-rsh" };
    expect_usage(ARGC(a1), a1, "no host given");
    char *a2[] = { "mpi-rsh", "host" };
    expect_usage(ARGC(a2), a2, "no command");
    char *a3[] = { "mpi-rsh", "-p" };
    expect_usage(ARGC(a3), a3, "needs a value");
    char *a4[] = { "mpi-rsh", "-p", "x", "h", "true" };
    expect_usage(ARGC(a4), a4, "port");
    char *a5[] = { "mpi-rsh", "-Z", "h", "true" };
    expect_usage(ARGC(a5), a5, "unknown option -Z");
    char *a6[] = { "mpi-rsh", "--bogus", "h", "true" };
    expect_usage(ARGC(a6), a6, "unknown option --bogus");
    char *a7[] = { "mpi-rsh", "--transport=rsh", "h", "true" };
    expect_usage(ARGC(a7), a7, "exec or ssh");
    char *a8[] = { "mpi-rsh", "-o", "Port=99999", "h", "true" };
    expect_usage(ARGC(a8), a8, "Port");
}

/* Parses argv expecting success with o.info == info (0: a normal command line). */
static void expect_info(int argc, char **argv, int info)
{
    struct rsh_opts o;
    char *err = NULL;
    assert_int_equal(rsh_parse_args(argc, argv, &o, &err), 0);
    assert_null(err);
    assert_int_equal(o.info, info);
    rsh_opts_free(&o);
}

/* Parses argv expecting -1 and whether the usage should follow the message. */
static void expect_usage_flag(int argc, char **argv, int usage_error)
{
    struct rsh_opts o;
    char *err = NULL;
    assert_int_equal(rsh_parse_args(argc, argv, &o, &err), -1);
    assert_int_equal(o.usage_error, usage_error);
    free(err);
    rsh_opts_free(&o);
}

static void test_help_version(void **s)
{
    (void)s;
    char *h[] = { "mpi-rsh", "--help" };
    expect_info(ARGC(h), h, RSH_INFO_HELP);
    char *v[] = { "mpi-rsh", "--version" };
    expect_info(ARGC(v), v, RSH_INFO_VERSION);
    char *hv[] = { "mpi-rsh", "-x", "--namespace", "ns", "--help", "--bogus" }; /* nothing after it is read */
    expect_info(ARGC(hv), hv, RSH_INFO_HELP);
    /* as mpirun calls it: --help/--version after HOST belong to the remote command */
    char *cmd[] = { "mpi-rsh", "-x", "job-worker-0", "orted", "--help", "--version" };
    struct rsh_opts o;
    char *err = NULL;
    assert_int_equal(rsh_parse_args(ARGC(cmd), cmd, &o, &err), 0);
    assert_int_equal(o.info, 0);
    assert_string_equal(o.host, "job-worker-0");
    assert_string_equal(o.command, "orted --help --version");
    rsh_opts_free(&o);
    char *dd[] = { "mpi-rsh", "--", "--help", "true" }; /* after "--": a host named --help */
    expect_info(ARGC(dd), dd, 0);
    /* usage errors (usage printed after the message, as ssh) and others (message only) */
    char *u1[] = { "mpi-rsh", "--bogus", "h", "true" };
    expect_usage_flag(ARGC(u1), u1, 1);
    char *u2[] = { "mpi-rsh", "-Z", "h", "true" };
    expect_usage_flag(ARGC(u2), u2, 1);
    char *u3[] = { "mpi-rsh", "--namespace" };
    expect_usage_flag(ARGC(u3), u3, 1);
    char *u4[] = { "mpi-rsh", "--help=yes" };
    expect_usage_flag(ARGC(u4), u4, 1);
    char *u5[] = { "mpi-rsh", "-p", "x", "h", "true" };
    expect_usage_flag(ARGC(u5), u5, 0);
}

static void test_usage_text(void **s)
{
    (void)s;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    rsh_usage(f, "mpi-rsh-ssh");
    assert_int_equal(fclose(f), 0);
    assert_non_null(strstr(buf, "usage: mpi-rsh-ssh [ssh options]"));
    assert_non_null(strstr(buf, "[user@]HOST COMMAND..."));
    assert_non_null(strstr(buf, "--version"));
    free(buf);
}

/* The namespace an FQDN names (the pod: mpik8s_host_to_pod, tests/unit/test_mpik8s_host.c). */
static void test_host_namespace(void **s)
{
    (void)s;
    char *ns = rsh_host_namespace("w-0.job-worker.team-a.svc");
    assert_string_equal(ns, "team-a");
    free(ns);
    ns = rsh_host_namespace("w-0.job-worker.team-a.svc.cluster.local");
    assert_string_equal(ns, "team-a");
    free(ns);
    assert_null(rsh_host_namespace("w-0"));
    assert_null(rsh_host_namespace("w-0.job-worker"));
    assert_null(rsh_host_namespace("w-0.a.b.example.com"));
}

static void test_env(void **s)
{
    (void)s;
    struct rsh_opts o;
    char *err = NULL;
    char *argv[] = { "mpi-rsh", "--namespace", "flagns", "h", "true" };
    assert_int_equal(rsh_parse_args(ARGC(argv), argv, &o, &err), 0);
    setenv("MPI_JOB_NAMESPACE", "envns", 1);
    setenv("MPI_JOB_WORKER_CONTAINER", "worker", 1);
    setenv("MPI_JOB_TRANSPORT", "ssh", 1);
    setenv("MPI_JOB_SSH_PORT", "2200", 1);
    assert_int_equal(rsh_apply_env(&o, &err), 0);
    assert_string_equal(o.namespace, "flagns");
    assert_string_equal(o.container, "worker");
    assert_int_equal(o.transport, MPIK8S_TRANSPORT_SSH);
    assert_int_equal(o.port, 2200);
    rsh_opts_free(&o);
    setenv("MPI_JOB_TRANSPORT", "carrier-pigeon", 1);
    assert_int_equal(rsh_parse_args(ARGC(argv), argv, &o, &err), 0);
    assert_int_equal(rsh_apply_env(&o, &err), -1);
    assert_non_null(strstr(err, "MPI_JOB_TRANSPORT"));
    free(err);
    rsh_opts_free(&o);
    unsetenv("MPI_JOB_NAMESPACE");
    unsetenv("MPI_JOB_WORKER_CONTAINER");
    unsetenv("MPI_JOB_TRANSPORT");
    unsetenv("MPI_JOB_SSH_PORT");
}

/* The remote command with its tag behaves as the bare command under sh -c. */
static void test_remote_command(void **s)
{
    (void)s;
    char tag[17];
    assert_int_equal(rsh_session_tag(tag), 0);
    assert_int_equal(strlen(tag), 16);
    char *c = rsh_remote_command("echo $MPI_RSH_SESSION; exit 3", tag);
    assert_non_null(c);
    pid_t p = fork();
    assert_true(p >= 0);
    if (p == 0) {
        int fd = open("/dev/null", O_WRONLY);
        dup2(fd, 1);
        execl("/bin/sh", "sh", "-c", c, (char *)NULL);
        _exit(127);
    }
    int st;
    assert_int_equal(waitpid(p, &st, 0), p);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 3);
    free(c);
    c = rsh_remote_command("true", NULL);
    assert_string_equal(c, "true");
    free(c);
}

/* The kill script finds and kills a tagged process (and only it). */
static void test_kill_script(void **s)
{
    (void)s;
    char tag[17];
    assert_int_equal(rsh_session_tag(tag), 0);
    char *line = rsh_remote_command("sleep 30; exit 0", tag);
    pid_t victim = fork();
    if (victim == 0) {
        execl("/bin/sh", "sh", "-c", line, (char *)NULL);
        _exit(127);
    }
    pid_t bystander = fork();
    if (bystander == 0) {
        execl("/bin/sleep", "sleep", "30", (char *)NULL);
        _exit(127);
    }
    usleep(200000);
    char *script = rsh_kill_script(tag, 1);
    pid_t k = fork();
    if (k == 0) {
        execl("/bin/sh", "sh", "-c", script, (char *)NULL);
        _exit(127);
    }
    int st;
    assert_int_equal(waitpid(k, &st, 0), k);
    assert_int_equal(WEXITSTATUS(st), 0);
    assert_int_equal(waitpid(victim, &st, 0), victim);
    assert_true(WIFSIGNALED(st));
    assert_int_equal(WTERMSIG(st), SIGTERM);
    pid_t w = waitpid(bystander, &st, WNOHANG);
    if (w != 0)
        fail_msg("bystander ended: %s %d", WIFSIGNALED(st) ? "signal" : "exit",
                 WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
    kill(bystander, SIGKILL);
    waitpid(bystander, &st, 0);
    free(script);
    free(line);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_openmpi_argv),   cmocka_unit_test(test_hydra_argv),   cmocka_unit_test(test_ssh_options),
        cmocka_unit_test(test_usage_errors),   cmocka_unit_test(test_help_version), cmocka_unit_test(test_usage_text),
        cmocka_unit_test(test_host_namespace), cmocka_unit_test(test_env),          cmocka_unit_test(test_remote_command),
        cmocka_unit_test(test_kill_script),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
