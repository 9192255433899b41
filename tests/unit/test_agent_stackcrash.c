/* test_agent_stackcrash.c - the line for an Open MPI launcher that crashed on an IPv6-only pod
 * (agent/stackcrash.h): which stacks get it and its words; the IPv4 probe of this host. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../agent/stackcrash.h"

static void test_line(void **st)
{
    (void)st;
    char *l = agent_stackcrash_ipv6_line(AGENT_STACK_OMPI5, SIGSEGV, 0.1);
    assert_string_equal(l, "Open MPI 5's mpirun (PRRTE) was killed by SIGSEGV 0.1 s after it started, before it launched "
                           "any daemon, on a launcher pod with IPv6 addresses only: Open MPI 5.0.x (PRRTE) crashes so on "
                           "an IPv6-only pod network (open-mpi/ompi#12771); run the job with Open MPI 4.1 (IPv6 support) "
                           "or MPICH, or on a cluster whose pods have IPv4 addresses (dual stack)");
    free(l);
    l = agent_stackcrash_ipv6_line(AGENT_STACK_OPENMPI, SIGABRT, 2.25);
    assert_non_null(strstr(l, "Open MPI's mpirun was killed by SIGABRT 2.2 s after it started"));
    free(l);
    /* not Open MPI: another account */
    assert_null(agent_stackcrash_ipv6_line(AGENT_STACK_HYDRA, SIGSEGV, 0.1));
    assert_null(agent_stackcrash_ipv6_line(AGENT_STACK_OMPI4, SIGSEGV, 0.1));
    assert_null(agent_stackcrash_ipv6_line(AGENT_STACK_NONE, SIGSEGV, 0.1));
}

/* Hydra 4.2's text (captured on tests/k8s/k8s up --ip-family ipv6) gets the line; other
 * failures do not */
static void test_hydra_line(void **st)
{
    (void)st;
    const char *out = "[proxy:0@m4] HYDU_sock_connect (lib/utils/sock.c:110): unable to get host address for m4\n"
                      "[proxy:0@m4] main (proxy/pmip.c:99): unable to connect to server m4 at port 46231 (check for "
                      "firewalls!)\n[mpiexec@m4] ui_cmd_cb (mpiexec/pmiserv_pmci.c:51): Launch proxy failed.\n";
    char *l = agent_stackcrash_hydra_ipv6_line(out, strlen(out), 255);
    assert_non_null(l);
    assert_non_null(strstr(l, "MPICH's Hydra (mpiexec exited 255) could not connect its proxies back"));
    free(l);
    const char *other = "[mpiexec@m4] ui_cmd_cb (mpiexec/pmiserv_pmci.c:51): Launch proxy failed.\n";
    assert_null(agent_stackcrash_hydra_ipv6_line(other, strlen(other), 255));
    assert_null(agent_stackcrash_hydra_ipv6_line(NULL, 0, 255));
}

/* In a network namespace of its own (loopback only) the answer is 0; skipped without the
 * privilege to make one. */
static void test_has_ipv4(void **st)
{
    (void)st;
    pid_t p = fork();
    assert_true(p >= 0);
    if (p == 0) {
        if (unshare(CLONE_NEWNET) != 0)
            _exit(77);
        _exit(agent_host_has_ipv4() == 0 ? 0 : 1);
    }
    int status = 0;
    assert_int_equal(waitpid(p, &status, 0), p);
    assert_true(WIFEXITED(status));
    if (WEXITSTATUS(status) == 77)
        skip();
    assert_int_equal(WEXITSTATUS(status), 0);
    int r = agent_host_has_ipv4();
    assert_true(r == 0 || r == 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_line),
        cmocka_unit_test(test_hydra_line),
        cmocka_unit_test(test_has_ipv4),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
