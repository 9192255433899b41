/* test_agent_hostfile.c - hostfile parsing (three formats, FQDNs, comments,
 * errors naming file and line, hostile input) and printing per MPI flavour. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "../../agent/hostfile.h"
#include "kube/util.h"

static void parse_ok(const char *text, struct agent_hostlist *l)
{
    char *err = NULL;
    memset(l, 0, sizeof(*l));
    int rc = agent_hostfile_parse(text, "hf", l, &err);
    if (rc != 0)
        fail_msg("parse failed: %s", err ? err : "?");
    free(err);
}

static void parse_err(const char *text, const char *want)
{
    struct agent_hostlist l = { 0 };
    char *err = NULL;
    assert_int_equal(agent_hostfile_parse(text, "hf", &l, &err), -1);
    assert_non_null(err);
    if (!strstr(err, want))
        fail_msg("error \"%s\" lacks \"%s\"", err, want);
    assert_int_equal(l.n, 0);
    free(err);
}

static void test_three_formats(void **state)
{
    (void)state;
    struct agent_hostlist l;
    parse_ok("# comment\n"
             "job-worker-0.job-worker.default.svc slots=2\n"
             "\n  job-worker-1:4  \n"
             "job-worker-2 # trailing comment\n"
             "job-worker-3.job-worker.ns.svc.cluster.local slots=1 max_slots=8\r\n",
             &l);
    assert_int_equal(l.n, 4);
    assert_string_equal(l.v[0].pod, "job-worker-0");
    assert_string_equal(l.v[0].host, "job-worker-0.job-worker.default.svc");
    assert_int_equal(l.v[0].slots, 2);
    assert_string_equal(l.v[1].pod, "job-worker-1");
    assert_string_equal(l.v[1].host, "job-worker-1");
    assert_int_equal(l.v[1].slots, 4);
    assert_string_equal(l.v[2].pod, "job-worker-2");
    assert_int_equal(l.v[2].slots, 0);
    assert_string_equal(l.v[3].pod, "job-worker-3");
    assert_int_equal(l.v[3].slots, 1);
    assert_int_equal(agent_hostlist_find_pod(&l, "job-worker-2"), 2);
    assert_int_equal(agent_hostlist_find_pod(&l, "nope"), -1);
    agent_hostlist_free(&l);
}

static void test_fqdn_colon(void **state)
{
    (void)state;
    struct agent_hostlist l;
    parse_ok("a-worker-0.a-worker.ns.svc:3\n", &l);
    assert_int_equal(l.n, 1);
    assert_string_equal(l.v[0].host, "a-worker-0.a-worker.ns.svc");
    assert_string_equal(l.v[0].pod, "a-worker-0");
    assert_int_equal(l.v[0].slots, 3);
    agent_hostlist_free(&l);
}

static void test_errors(void **state)
{
    (void)state;
    parse_err("w-0 slots=0\n", "hf line 1");
    parse_err("w-0\nw-1 slots=x\n", "hf line 2");
    parse_err("w-0:\n", "expected host:N");
    parse_err("w-0:-1\n", "expected host:N");
    parse_err("w-0 bogus\n", "unexpected \"bogus\"");
    parse_err("10.0.0.1 slots=1\n", "IP addresses");
    parse_err("Worker-0\n", "lower-case");
    parse_err("w-0\nw-0.x.svc\n", "listed twice");
    parse_err(".svc\n", "first label");
    parse_err("-bad\n", "not a pod name");
    parse_err("w-0 slots=99999999999\n", "slots=N");
}

/* Fuzz findings and the FQDN rules: control characters inside a line, bad domain labels,
 * long quoted values cut short; every message stays on one line. */
static void test_hostile(void **state)
{
    (void)state;
    parse_err("w-0\rslots=2\n", "line 1 column 4: unexpected control character 0x0d");
    parse_err("w-0\n\x01w-1\n", "line 2 column 1: unexpected control character 0x01");
    parse_err("w-0.a..svc\n", "expected a DNS name");
    parse_err("w-0.a_b.svc\n", "expected a DNS name");
    parse_err("w-0.-a.svc\n", "expected a DNS name");
    parse_err("w\xc3\xa9\n", "got byte 0xc3");
    char big[600];
    memset(big, 'a', sizeof big - 2);
    big[sizeof big - 2] = '\n';
    big[sizeof big - 1] = '\0';
    struct agent_hostlist l = { 0 };
    char *err = NULL;
    assert_int_equal(agent_hostfile_parse(big, "hf", &l, &err), -1);
    assert_non_null(strstr(err, "aaa...\""));
    assert_true(strlen(err) < 300);
    free(err);
    /* an FQDN with a trailing dot and mixed-case domain labels is fine */
    parse_ok("w-0.J-Worker.ns.svc. slots=2\n", &l);
    assert_string_equal(l.v[0].pod, "w-0");
    agent_hostlist_free(&l);
}

/* 30000 hosts with a duplicate at the very end: found, named by line (the set of seen
 * pods is a hash table, so this stays linear). */
static void test_many_hosts(void **state)
{
    (void)state;
    size_t n = 30000, cap = n * 32 + 64, off = 0;
    char *text = malloc(cap);
    assert_non_null(text);
    for (size_t i = 0; i < n; i++)
        off += (size_t)snprintf(text + off, cap - off, "job-worker-%zu slots=1\n", i);
    struct agent_hostlist l;
    parse_ok(text, &l);
    assert_int_equal(l.n, n);
    assert_int_equal(agent_hostlist_find_pod(&l, "job-worker-29999"), 29999);
    agent_hostlist_free(&l);
    snprintf(text + off, cap - off, "job-worker-17.job-worker.ns.svc:2\n");
    parse_err(text, "hf line 30001: pod \"job-worker-17\" is listed twice");
    free(text);
}

static void test_empty(void **state)
{
    (void)state;
    struct agent_hostlist l;
    parse_ok("\n# nothing\n   \n", &l);
    assert_int_equal(l.n, 0);
    agent_hostlist_free(&l);
}

static void test_drop_launcher(void **state)
{
    (void)state;
    struct agent_hostlist l;
    parse_ok("j-launcher.j.ns.svc slots=1\nj-worker-0 slots=1\nlauncher\n", &l);
    assert_int_equal(agent_hostlist_drop_launcher(&l), 1);
    assert_int_equal(l.n, 2);
    assert_string_equal(l.v[0].pod, "j-worker-0");
    assert_string_equal(l.v[1].pod, "launcher");
    agent_hostlist_free(&l);
}

static void test_format(void **state)
{
    (void)state;
    struct agent_hostlist l;
    parse_ok("a.j.ns.svc slots=2\nb:3\nc\n", &l);
    char *s = agent_hostfile_format(&l, MPIK8S_MPI_OPENMPI, 1);
    assert_string_equal(s, "a.j.ns.svc slots=2\nb slots=3\nc slots=1\n");
    free(s);
    s = agent_hostfile_format(&l, MPIK8S_MPI_MPICH, 1);
    assert_string_equal(s, "a.j.ns.svc:2\nb:3\nc:1\n");
    free(s);
    s = agent_hostfile_format(&l, MPIK8S_MPI_INTEL, 0); /* slots unknown: MPIK8S_DEFAULT_SLOTS */
    assert_string_equal(s, "a.j.ns.svc:2\nb:3\nc:1\n");
    free(s);
    /* round trip through the parser */
    struct agent_hostlist r;
    s = agent_hostfile_format(&l, MPIK8S_MPI_OPENMPI, 4);
    parse_ok(s, &r);
    assert_int_equal(r.n, 3);
    assert_int_equal(r.v[2].slots, 4);
    free(s);
    agent_hostlist_free(&r);
    agent_hostlist_free(&l);
}

static void test_load_missing(void **state)
{
    (void)state;
    struct agent_hostlist l = { 0 };
    char *err = NULL;
    assert_int_equal(agent_hostfile_load("/nonexistent/hostfile", &l, &err), -1);
    assert_non_null(strstr(err, "/nonexistent/hostfile"));
    free(err);
}

/* The hostfile the agent writes for itself never goes through a symlink planted at a name
 * another user could predict ($TMPDIR/mpi-agent-hostfile-<pid>): the planted link's target
 * stays untouched and the hostfile is a new regular file with the text. */
static void test_write_planted_symlink(void **state)
{
    (void)state;
    char dir[] = "/tmp/agent-hostfile-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char *victim = kube_strdup_printf("%s/victim", dir);
    char *trap = kube_strdup_printf("%s/mpi-agent-hostfile-%ld", dir, (long)getpid());
    FILE *f = fopen(victim, "w");
    assert_non_null(f);
    assert_true(fputs("precious", f) >= 0);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(symlink(victim, trap), 0);
    assert_int_equal(setenv("TMPDIR", dir, 1), 0);
    char *path = NULL, *err = NULL, *got = NULL;
    size_t len;
    int rc = agent_hostfile_write("w-0 slots=1\n", &path, &err);
    unsetenv("TMPDIR");
    assert_int_equal(rc, 0);
    assert_int_equal(kube_read_file(victim, 64, &got, &len, &err), 0);
    assert_string_equal(got, "precious");
    free(got);
    struct stat st;
    assert_int_equal(lstat(path, &st), 0);
    assert_true(S_ISREG(st.st_mode));
    assert_int_equal(st.st_mode & 07777, 0644);
    assert_int_equal(kube_read_file(path, 64, &got, &len, &err), 0);
    assert_string_equal(got, "w-0 slots=1\n");
    free(got);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(unlink(trap), 0);
    assert_int_equal(unlink(victim), 0);
    assert_int_equal(rmdir(dir), 0);
    free(path);
    free(trap);
    free(victim);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_three_formats), cmocka_unit_test(test_fqdn_colon),
        cmocka_unit_test(test_errors),        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_drop_launcher), cmocka_unit_test(test_format),
        cmocka_unit_test(test_load_missing),  cmocka_unit_test(test_hostile),
        cmocka_unit_test(test_many_hosts),    cmocka_unit_test(test_write_planted_symlink),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
