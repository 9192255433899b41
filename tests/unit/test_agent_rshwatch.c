/* test_agent_rshwatch.c - the launch watch (agent/rshwatch.h): the verdict as a table of what was
 * seen and when, the stack a program name or mpirun's output shows, the message naming the stack,
 * the variable it did not read (with a user's value) and what to set; the placement check's launch
 * agents, its message, and its /proc scan on a fake launcher family (mpirun, mpi-rsh, a rank). */
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "../../agent/rshwatch.h"

struct verdict_case {
    int64_t bound, launcher_at;
    int rsh_called;
    int64_t now;
    int cmd_done, other;
    enum agent_rshwatch_verdict want;
};

static const struct verdict_case verdicts[] = {
    /* off */
    { 0, 1000, 0, 99000, 0, 0, AGENT_RSHWATCH_OK },
    /* no launcher seen: wait while the command runs, nothing to say once it ended */
    { 20000, 0, 0, 99000, 0, 0, AGENT_RSHWATCH_WAIT },
    { 20000, 0, 0, 99000, 1, 0, AGENT_RSHWATCH_OK },
    /* a launcher within the bound: wait; it called mpi-rsh: done */
    { 20000, 1000, 0, 20999, 0, 0, AGENT_RSHWATCH_WAIT },
    { 20000, 1000, 1, 20999, 0, 0, AGENT_RSHWATCH_OK },
    { 20000, 1000, 1, 90000, 1, 0, AGENT_RSHWATCH_OK },
    /* the bound passed without a call, or the launcher ended without one (issue #36: 0.1 s) */
    { 20000, 1000, 0, 21000, 0, 0, AGENT_RSHWATCH_FAIL },
    { 20000, 1000, 0, 1100, 1, 0, AGENT_RSHWATCH_FAIL },
    /* a process of another launch way (ssh, a rank) decides at once, before the bound */
    { 120000, 1000, 0, 1300, 0, 1, AGENT_RSHWATCH_FAIL },
    { 120000, 1000, 1, 1300, 0, 1, AGENT_RSHWATCH_OK },
};

static void test_verdicts(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(verdicts) / sizeof(verdicts[0]); i++) {
        const struct verdict_case *c = &verdicts[i];
        struct agent_rshwatch w = { c->bound, c->launcher_at, c->rsh_called, AGENT_STACK_OPENMPI, c->other };
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

/* ended: 1 it exited; 0 it started nothing; else the pid of the process it started, named "ssh" */
static void expect_msg(enum agent_stack st, enum mpik8s_mpi mpi, int ended, const char *const *env, const char *const *parts)
{
    struct agent_rshwatch_how how = { ended == 1, ended > 1 ? "ssh" : NULL, ended };
    char *m = agent_rshwatch_message(st, mpi, "/opt/kube/mpi-rsh", 20.0, &how, table_get, (void *)env);
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
               (const char *[]){ "Open MPI 5 (PRRTE) started no daemon through /opt/kube/mpi-rsh, nor any other "
                                 "process, within 20.0 s: it may be stuck before its launch",
                                 "or it did not read PRTE_MCA_plm_ssh_agent ('/opt/kube/mpi-rsh : false')",
                                 "set PRTE_MCA_plm_ssh_agent='/opt/kube/mpi-rsh : false' in the launcher's environment",
                                 NULL });
    expect_msg(AGENT_STACK_OMPI5, MPIK8S_MPI_OPENMPI, 9, ours5,
               (const char *[]){ "Open MPI 5 (PRRTE) started no daemon through /opt/kube/mpi-rsh but started 'ssh' "
                                 "(pid 9) itself 20.0 s after it began: it did not read PRTE_MCA_plm_ssh_agent",
                                 NULL });
    const char *user4[] = { "OMPI_MCA_plm_rsh_agent", "ssh", NULL };
    expect_msg(AGENT_STACK_OMPI4, MPIK8S_MPI_OPENMPI, 1, user4,
               (const char *[]){
                   "Open MPI 4 (ORTE) started no daemon through /opt/kube/mpi-rsh and exited after 20.0 s: it did not read",
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

static void test_agents(void **state)
{
    (void)state;
    const char *yes[] = { "mpi-rsh", "/opt/kube/mpi-rsh", "mpi-rsh-thin", "mpi-rsh-ssh", "ssh", "/usr/bin/ssh", "rsh" };
    const char *no[] = { "mpi-rsh-", "mpi-rshx", "sh", "pi", "hydra_pmi_proxy", "orted", "prted", "sshd", "", NULL };
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++)
        if (!agent_rshwatch_agent_program(yes[i]))
            fail_msg("%s: not a launch agent", yes[i]);
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
        if (agent_rshwatch_agent_program(no[i]))
            fail_msg("%s: a launch agent", no[i] ? no[i] : "NULL");
    /* not ours: what a launcher that ignored our variable runs */
    assert_true(agent_rshwatch_foreign_agent("ssh"));
    assert_true(agent_rshwatch_foreign_agent("/usr/bin/rsh"));
    assert_false(agent_rshwatch_foreign_agent("mpi-rsh"));
    assert_false(agent_rshwatch_foreign_agent("mpi-rsh-ssh"));
    assert_false(agent_rshwatch_foreign_agent(NULL));
}

static void test_bundle(void **state)
{
    (void)state;
    assert_true(agent_rshwatch_bundle_exe("/opt/kube/mpi-rsh", "/opt/kube/lib/ld-linux-x86-64.so.2"));
    assert_false(agent_rshwatch_bundle_exe("/opt/kube/mpi-rsh", "/opt/kube/lib/"));
    assert_false(agent_rshwatch_bundle_exe("/opt/kube/mpi-rsh", "/opt/kubex/lib/ld-linux-x86-64.so.2"));
    assert_false(agent_rshwatch_bundle_exe("/opt/kube/mpi-rsh", "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"));
    assert_false(agent_rshwatch_bundle_exe("/opt/kube/mpi-rsh", "/opt/kube/libexec/mpi-rsh"));
    assert_false(agent_rshwatch_bundle_exe("mpi-rsh", "/lib/ld-linux-x86-64.so.2"));
    assert_false(agent_rshwatch_bundle_exe(NULL, "/opt/kube/lib/x"));
    assert_false(agent_rshwatch_bundle_exe("/opt/kube/mpi-rsh", NULL));
}

static void test_local_message(void **state)
{
    (void)state;
    char *m = agent_rshwatch_local_message(AGENT_STACK_OMPI4, MPIK8S_MPI_OPENMPI, "pi", 42, 1.25);
    assert_non_null(m);
    assert_non_null(strstr(m, "Open MPI 4 (ORTE) started 'pi' (pid 42) on the launcher 1.2 s after it began"));
    assert_non_null(strstr(m, "--host/-H"));
    assert_non_null(strstr(m, "runLauncherAsWorker: true"));
    assert_null(strchr(m, '\n'));
    free(m);
    m = agent_rshwatch_local_message(AGENT_STACK_OPENMPI, MPIK8S_MPI_OPENMPI, "sh", 7, 0);
    assert_non_null(m);
    assert_non_null(strstr(m, "Open MPI started 'sh' (pid 7)"));
    free(m);
    m = agent_rshwatch_local_message(AGENT_STACK_HYDRA, MPIK8S_MPI_MPICH, "hydra_pmi_proxy", 9, 2);
    assert_non_null(m);
    assert_non_null(strstr(m, "MPICH (Hydra) started 'hydra_pmi_proxy' (pid 9)"));
    free(m);
}

/* A child that runs dir/name (a link to sleep: its comm is name), its pid told on rep. */
static pid_t named_child(const char *dir, const char *name, int rep)
{
    pid_t p = fork();
    if (p == 0) {
        char path[128];
        snprintf(path, sizeof path, "%s/%s", dir, name);
        execl(path, name, "60", (char *)NULL);
        _exit(127);
    }
    return p > 0 && write(rep, &p, sizeof p) == sizeof p ? p : -1;
}

/* The fake launcher's body: an agent child at once (mpi-rsh, or ssh for a launcher that ignored our
 * variable), a rank "pi" when a byte comes on cmd, then waits (the rank stays unreaped: a zombie once
 * killed). */
static int fake_launcher_main(const char *dir, int cmd, int rep, const char *agent)
{
    char c;
    if (setpgid(0, 0) != 0 || named_child(dir, agent, rep) < 0 || read(cmd, &c, 1) != 1 || named_child(dir, "pi", rep) < 0 ||
        read(cmd, &c, 1) != 1)
        return 1;
    return 0;
}

/* 1 once pid's comm is name, within 5 s. */
static int await_comm(pid_t pid, const char *name)
{
    char path[64], buf[64];
    size_t nl = strlen(name);
    snprintf(path, sizeof path, "/proc/%d/comm", (int)pid);
    for (int i = 0; i < 500; i++) {
        FILE *f = fopen(path, "r");
        size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
        if (f)
            fclose(f);
        buf[n] = '\0';
        if (n == nl + 1 && strncmp(buf, name, nl) == 0)
            return 1;
        usleep(10000);
    }
    return 0;
}

static const char *self_path; /* argv[0] */

/* dir gets a copy of this test's binary named mpirun (the placement check knows a launcher by its
 * executable, not its comm) and links mpi-rsh, ssh and pi to sleep. */
static void make_bin(const char *dir)
{
    char path[128];
    snprintf(path, sizeof path, "%s/mpirun", dir);
    FILE *in = fopen(self_path, "rb"), *out = fopen(path, "wb");
    assert_non_null(in);
    assert_non_null(out);
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
        assert_int_equal(fwrite(buf, 1, n, out), n);
    fclose(in);
    assert_int_equal(fclose(out), 0);
    assert_int_equal(chmod(path, 0755), 0);
    const char *names[] = { "mpi-rsh", "pi", "ssh" };
    for (size_t i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        assert_int_equal(symlink("/bin/sleep", path), 0);
    }
}

/* The fake launcher: the copy run as "mpirun --fake-launcher DIR CMD REP AGENT". */
static pid_t fake_launcher(const char *dir, int cmd, int rep, const char *agent)
{
    pid_t l = fork();
    if (l != 0)
        return l;
    char exe[128], a[16], b[16];
    snprintf(exe, sizeof exe, "%s/mpirun", dir);
    snprintf(a, sizeof a, "%d", cmd);
    snprintf(b, sizeof b, "%d", rep);
    execl(exe, "mpirun", "--fake-launcher", dir, a, b, agent, (char *)NULL);
    _exit(127);
}

/* Ends the fake launcher's family, removes dir and closes the pipes to it. */
static void end_family(pid_t l, const char *dir, int cmd[2], int rep[2])
{
    const char *names[] = { "mpirun", "mpi-rsh", "pi", "ssh" };
    char path[128];
    kill(-l, SIGKILL);
    kill(l, SIGKILL);
    waitpid(l, NULL, 0);
    for (size_t i = 0; i < 4; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        unlink(path);
    }
    rmdir(dir);
    close(cmd[0]);
    close(cmd[1]);
    close(rep[0]);
    close(rep[1]);
}

/* The /proc half on a live family: nothing while mpirun has only its agent, the rank once it runs,
 * nothing below the rank, the stack by the executable, and nothing once the rank is a zombie. Every
 * check is made before the family ends, the asserts after, so a failure leaves no process. */
static void test_local_child(void **state)
{
    (void)state;
    int cmd[2], rep[2];
    assert_int_equal(pipe(cmd), 0);
    assert_int_equal(pipe(rep), 0);
    char dir[] = "/tmp/test-rshwatch-XXXXXX", name[32] = "", other[32];
    assert_non_null(mkdtemp(dir));
    make_bin(dir);
    pid_t l = fake_launcher(dir, cmd[0], rep[1], "mpi-rsh"), a = 0, r = 0, found = 0;
    assert_true(l > 0);
    int alone = 0, below = 0, gone = 0;
    enum agent_stack st = AGENT_STACK_NONE, lst = AGENT_STACK_NONE;
    int ok = read(rep[0], &a, sizeof a) == sizeof a && await_comm(a, "mpi-rsh") && await_comm(l, "mpirun");
    if (ok) /* our agent is no other launch way either */
        alone = agent_rshwatch_local_child(l, "/opt/kube/mpi-rsh", 0, other, sizeof other, &st) == 0 &&
                agent_rshwatch_local_child(l, "/opt/kube/mpi-rsh", 1, other, sizeof other, &st) == 0;
    ok = ok && write(cmd[1], "r", 1) == 1 && read(rep[0], &r, sizeof r) == sizeof r && await_comm(r, "pi");
    if (ok) {
        found = agent_rshwatch_local_child(l, "/opt/kube/mpi-rsh", 0, name, sizeof name, &st);
        lst = st;
        below = agent_rshwatch_local_child(r, "/opt/kube/mpi-rsh", 0, other, sizeof other, &st) == 0;
    }
    enum agent_stack sl = agent_rshwatch_scan(l), sr = ok ? agent_rshwatch_scan(r) : AGENT_STACK_NONE;
    if (ok && kill(r, SIGKILL) == 0)
        for (int i = 0; i < 500 && !gone; i++) /* a zombie of the fake mpirun once killed */
            if (!(gone = agent_rshwatch_local_child(l, "/opt/kube/mpi-rsh", 0, other, sizeof other, &st) == 0))
                usleep(10000);
    end_family(l, dir, cmd, rep);
    assert_true(ok);
    assert_true(alone);
    assert_int_equal(found, r);
    assert_string_equal(name, "pi");
    assert_int_equal(lst, AGENT_STACK_OPENMPI);
    assert_true(below);
    assert_int_equal(sl, AGENT_STACK_OPENMPI);
    assert_int_equal(sr, AGENT_STACK_NONE);
    assert_true(gone);
}

/* A launcher that ignored our variable runs ssh itself: an agent for the placement check, another
 * launch way before any mpi-rsh call (foreign). */
static void test_foreign_child(void **state)
{
    (void)state;
    int cmd[2], rep[2];
    assert_int_equal(pipe(cmd), 0);
    assert_int_equal(pipe(rep), 0);
    char dir[] = "/tmp/test-rshwatch-XXXXXX", name[32] = "";
    assert_non_null(mkdtemp(dir));
    make_bin(dir);
    pid_t l = fake_launcher(dir, cmd[0], rep[1], "ssh"), a = 0, found = 0, placing = -1;
    assert_true(l > 0);
    enum agent_stack st = AGENT_STACK_NONE;
    int ok = read(rep[0], &a, sizeof a) == sizeof a && await_comm(a, "ssh") && await_comm(l, "mpirun");
    if (ok) {
        placing = agent_rshwatch_local_child(l, "/opt/kube/mpi-rsh", 0, name, sizeof name, &st);
        found = agent_rshwatch_local_child(l, "/opt/kube/mpi-rsh", 1, name, sizeof name, &st);
    }
    end_family(l, dir, cmd, rep);
    assert_true(ok);
    assert_int_equal(placing, 0);
    assert_int_equal(found, a);
    assert_string_equal(name, "ssh");
    assert_int_equal(st, AGENT_STACK_OPENMPI);
}

int main(int argc, char **argv)
{
    self_path = argv[0];
    if (argc == 6 && strcmp(argv[1], "--fake-launcher") == 0)
        return fake_launcher_main(argv[2], atoi(argv[3]), atoi(argv[4]), argv[5]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_verdicts),      cmocka_unit_test(test_programs),      cmocka_unit_test(test_output),
        cmocka_unit_test(test_informational), cmocka_unit_test(test_ended),         cmocka_unit_test(test_messages),
        cmocka_unit_test(test_agents),        cmocka_unit_test(test_local_message), cmocka_unit_test(test_local_child),
        cmocka_unit_test(test_foreign_child), cmocka_unit_test(test_bundle),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
