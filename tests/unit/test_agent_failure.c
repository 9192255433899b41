/* test_agent_failure.c - the failure parser on real mpirun/Hydra texts
 * (tests/unit/data/mpirun/, README there says where each came from), the cgroup
 * counters, the attribution to a worker pod (hostfile order, mapping options),
 * the OOMKilled state, and the termination message's failure line. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "../../agent/failure.h"
#include "../../agent/termination.h"
#include "mpik8s/contract.h"

static char *slurp(const char *name, size_t *len)
{
    char path[256];
    snprintf(path, sizeof path, "tests/unit/data/mpirun/%s", name);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    char *buf = NULL;
    size_t cap = 0;
    FILE *m = open_memstream(&buf, &cap);
    int c;
    while ((c = fgetc(f)) != EOF)
        fputc(c, m);
    fclose(f);
    fclose(m);
    *len = cap;
    return buf;
}

/* Parses a data file: 1 found (r filled), 0 not. */
static int parse_file(const char *name, struct agent_rank_failure *r)
{
    size_t n;
    char *t = slurp(name, &n);
    int rc = agent_failure_parse(t, n, r);
    if (rc)
        assert_true(r->at < n);
    free(t);
    return rc;
}

static void expect(const char *file, const char *mpi, const char *form, int rank, const char *host, int code, int sig)
{
    struct agent_rank_failure r;
    assert_int_equal(parse_file(file, &r), 1);
    assert_string_equal(r.mpi, mpi);
    assert_string_equal(r.form, form);
    assert_int_equal(r.rank, rank);
    if (host)
        assert_string_equal(r.host, host);
    else
        assert_null(r.host);
    assert_int_equal(r.exit_code, code);
    assert_int_equal(r.signal, sig);
    agent_rank_failure_free(&r);
}

/* Each of the n texts in bad yields no finding (0, no host). */
static void assert_no_finding(const char *const *bad, size_t n)
{
    struct agent_rank_failure r;
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(agent_failure_parse(bad[i], strlen(bad[i]), &r), 0);
        assert_null(r.host);
        agent_rank_failure_free(&r);
    }
}

static void test_open_mpi_4(void **st)
{
    (void)st;
    expect("ompi4-exit3.txt", "openmpi", "ompi-exit", 1, NULL, 3, 0);
    expect("ompi4-segv.txt", "openmpi", "ompi-signal", 1, "vm", -1, 11);
    expect("ompi4-kill.txt", "openmpi", "ompi-signal", 1, "vm", -1, 9);
    expect("ompi4-tag-output-segv.txt", "openmpi", "ompi-signal", 1, "vm", -1, 11);
    expect("ompi4-no-finalize.txt", "openmpi", "ompi-improper-exit", 2, "vm", -1, 0);
    expect("ompi4-oom-cgroup-v1.txt", "openmpi", "ompi-signal", 1, "vm", -1, 9);
    size_t n;
    char *cg = slurp("cgroup-v1-after-oom.txt", &n);
    struct agent_cgroup_mem m;
    assert_int_equal(agent_cgroup_mem_parse(cg, n, &m), 1);
    assert_int_equal(m.oom_kills, 1);
    assert_int_equal(m.limit_bytes, 96LL << 20);
    assert_int_equal(m.failcnt, 2530);
    free(cg);
}

static void test_open_mpi_5(void **st)
{
    (void)st;
    expect("ompi5-signal.txt", "openmpi", "ompi-signal", 2, "job-worker-1", -1, 11);
    /* the real PRRTE 3.0.8 text, wrapped at 80 columns between "exited on" and "signal 11" */
    expect("ompi5-signal-wrapped.txt", "openmpi", "ompi-signal", 1, "o5sig-worker-1", -1, 11);
    expect("ompi5-exit.txt", "openmpi", "ompi-exit", 3, NULL, 7, 0);
}

static void test_mpich(void **st)
{
    (void)st;
    expect("mpich4-segv.txt", "mpich", "hydra-signal", -1, "vm", -1, 11);
    expect("mpich4-kill.txt", "mpich", "hydra-signal", -1, "vm", -1, 9);
    expect("mpich4-prepend-rank-segv.txt", "mpich", "hydra-signal", -1, "vm", -1, 11);
    expect("mpich4-exit3-cleanup-kill.txt", "mpich", "hydra-signal", -1, "vm", -1, 9);
    expect("mpich3-killed.txt", "mpich", "hydra-signal", 1, "job-worker-0", -1, 9);
    expect("mpich4-segv-remote.txt", "mpich", "hydra-signal", -1, "fmpich-worker-1.fmpich.default.svc", -1, 11);
    /* Hydra 4.2: a signal is an "EXIT CODE" with no EXIT STRING line (captured on the real cluster) */
    expect("mpich42-segv-remote.txt", "mpich", "hydra-exit-code", -1, "m42fail-worker-1.m42fail.default.svc", 11, 0);
    struct agent_rank_failure r;
    assert_int_equal(parse_file("mpich4-segv.txt", &r), 1);
    assert_int_equal(r.pid, 11538);
    agent_rank_failure_free(&r);
    assert_int_equal(parse_file("mpich4-segv-remote.txt", &r), 1);
    assert_int_equal(r.pid, 6);
    agent_rank_failure_free(&r);
    /* UCX's line from another PID or with another number does not make the code a signal */
    const char *other = "[w-0:8 :0:8] Caught signal 11 (Segmentation fault)\n[w-0:7 :0:7] Caught signal 6 (Aborted)\n"
                        "=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES\n=   PID 7 RUNNING AT w-0.j.ns.svc\n"
                        "=   EXIT CODE: 11\n";
    assert_int_equal(agent_failure_parse(other, strlen(other), &r), 1);
    assert_string_equal(r.form, "hydra-exit-code");
    assert_int_equal(r.exit_code, 11);
    agent_rank_failure_free(&r);
    /* a banner without its EXIT STRING line: the code stays a code (nothing guessed) */
    const char *t = "=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES\n=   PID 7 RUNNING AT w-0\n"
                    "=   EXIT CODE: 3\n";
    assert_int_equal(agent_failure_parse(t, strlen(t), &r), 1);
    assert_string_equal(r.form, "hydra-exit-code");
    assert_int_equal(r.exit_code, 3);
    agent_rank_failure_free(&r);
}

static void test_unparseable(void **st)
{
    (void)st;
    struct agent_rank_failure r;
    /* ORTE's notice alone names no rank: found as such, but with mpirun's 139 (128 + SIGSEGV,
     * or a code) nothing is attributed (test_notice) */
    assert_int_equal(parse_file("ompi4-nonmpi-segv-unparseable.txt", &r), 1);
    assert_string_equal(r.form, "ompi-notice");
    assert_int_equal(r.rank, -1);
    assert_int_equal(r.exit_code, -1);
    assert_null(r.host);
    agent_rank_failure_free(&r);
    assert_int_equal(parse_file("mpich4-nonmpi-exit3-unparseable.txt", &r), 0);
    const char *bad[] = {
        "mpirun noticed that process rank x with PID 0 on node vm exited on signal 9 (Killed).",
        "mpirun noticed that process rank 1 with PID 0 on node vm exited on signal 99 (?).",
        "mpirun noticed that process rank 99999999999 with PID 0 on node vm exited on signal 9.",
        "mpirun detected that one or more processes exited with non-zero status\n  Process name: [[1,1]]\n"
        "  Exit code: 3\n",
        "mpirun detected that one or more processes exited with non-zero status\n  Process name: [[1,1],2]\n",
        "=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES\n=   EXIT CODE: 9\n",
        "",
    };
    assert_no_finding(bad, sizeof bad / sizeof bad[0]);
    assert_int_equal(agent_failure_parse(NULL, 0, &r), 0);
}

static void test_cgroup(void **st)
{
    (void)st;
    struct agent_cgroup_mem m;
    const char *v2 = "==> memory.events <==\nlow 0\nhigh 0\nmax 41\noom 2\noom_kill 1\noom_group_kill 0\n"
                     "==> memory.max <==\n67108864\n";
    assert_int_equal(agent_cgroup_mem_parse(v2, strlen(v2), &m), 1);
    assert_int_equal(m.version, 2);
    assert_int_equal(m.oom_kills, 1);
    assert_int_equal(m.limit_bytes, 67108864);
    const char *v1 = "==> memory.oom_control <==\noom_kill_disable 0\nunder_oom 0\noom_kill 3\n"
                     "==> memory.limit_in_bytes <==\n9223372036854771712\n==> memory.failcnt <==\n120\n";
    assert_int_equal(agent_cgroup_mem_parse(v1, strlen(v1), &m), 1);
    assert_int_equal(m.version, 1);
    assert_int_equal(m.oom_kills, 3);
    assert_int_equal(m.limit_bytes, -1); /* unlimited */
    assert_int_equal(m.failcnt, 120);
    const char *none = "cat: memory.events: No such file or directory\n==> memory.max <==\nmax\n";
    assert_int_equal(agent_cgroup_mem_parse(none, strlen(none), &m), 0);
    assert_int_equal(m.limit_bytes, -1);
    char q[32];
    assert_string_equal(agent_bytes_quantity(536870912, q, sizeof q), "512Mi");
    assert_string_equal(agent_bytes_quantity(3LL << 30, q, sizeof q), "3Gi");
    assert_string_equal(agent_bytes_quantity(1000, q, sizeof q), "1000");
    assert_string_equal(agent_signal_name(11, q, sizeof q), "SIGSEGV");
    assert_string_equal(agent_signal_name(40, q, sizeof q), "signal 40");
}

static void test_last_lines(void **st)
{
    (void)st;
    char *l = agent_failure_last_lines("a\nb\nc\n", 6);
    assert_string_equal(l, "a\nb\nc\n");
    free(l);
    char text[4000];
    size_t n = 0;
    for (int i = 0; i < 30; i++)
        n += (size_t)snprintf(text + n, sizeof text - n, "[1,%d]<stdout>:line %d \x01\xc3\n", i % 4, i);
    l = agent_failure_last_lines(text, n);
    assert_true(strlen(l) <= AGENT_FAILURE_LAST_BYTES);
    assert_non_null(strstr(l, "[1,1]<stdout>:line 29 ??\n")); /* rank tags kept, bytes made safe */
    assert_null(strstr(l, "line 19 "));                       /* ten lines */
    free(l);
}

static void session(struct agent_session *s, struct agent_opts *o)
{
    memset(s, 0, sizeof *s);
    memset(o, 0, sizeof *o);
    o->slots = 2;
    s->o = o;
    char *err = NULL;
    assert_int_equal(agent_hostlist_add(&s->hosts, "job-worker-0.job.ns.svc", 0, &err), 0);
    assert_int_equal(agent_hostlist_add(&s->hosts, "job-worker-1.job.ns.svc", 0, &err), 0);
}

static void test_explain(void **st)
{
    (void)st;
    struct agent_session s;
    struct agent_opts o;
    session(&s, &o);
    size_t n;
    char *t = slurp("ompi5-exit.txt", &n), *phrase;
    char *plain[] = { "mpirun", "-np", "4", "./a", NULL }, *mapped[] = { "mpirun", "--map-by", "node", "./a", NULL };
    json_t *f = agent_failure_explain(&s, t, n, plain, 7, &phrase);
    assert_non_null(f);
    /* rank 3 with 2 slots each: the second worker, placed by the hostfile's order */
    assert_string_equal(phrase, "rank 3 on pod job-worker-1 (node ?) exited with code 7");
    assert_string_equal(json_string_value(json_object_get(f, MPIK8S_FAIL_SOURCE)), "rankmap");
    assert_string_equal(json_string_value(json_object_get(f, MPIK8S_FAIL_REASON)), MPIK8S_FAIL_R_EXIT_CODE);
    assert_string_equal(json_string_value(json_object_get(f, MPIK8S_FAIL_LAST_LINES)), "rank 3 up\n");
    free(phrase);
    json_decref(f);
    f = agent_failure_explain(&s, t, n, mapped, 7, &phrase);
    assert_string_equal(phrase, "rank 3 exited with code 7"); /* --map-by: not placed */
    assert_null(json_object_get(f, MPIK8S_FAIL_POD));
    free(phrase);
    json_decref(f);
    free(t);
    t = slurp("ompi5-signal.txt", &n);
    f = agent_failure_explain(&s, t, n, mapped, -1, &phrase);
    assert_string_equal(phrase, "rank 2 on pod job-worker-1 (node ?) was killed by SIGSEGV");
    assert_string_equal(json_string_value(json_object_get(f, MPIK8S_FAIL_SIGNAL)), "SIGSEGV");
    assert_string_equal(json_string_value(json_object_get(f, MPIK8S_FAIL_REASON)), MPIK8S_FAIL_R_SIGNAL);
    free(phrase);
    json_decref(f);
    free(t);
    assert_null(agent_failure_explain(&s, "nothing", 7, plain, 1, &phrase));
    assert_null(phrase);
    agent_hostlist_free(&s.hosts);
}

/* Hydra 4.2's code that may be a signal: the pod by the host Hydra printed, and the hint; a
 * plain exit code (3) gets none. */
static void test_explain_hydra_ambiguous(void **st)
{
    (void)st;
    struct agent_session s;
    struct agent_opts o;
    session(&s, &o);
    char *err = NULL;
    assert_int_equal(agent_hostlist_add(&s.hosts, "m42fail-worker-1.m42fail.default.svc", 0, &err), 0);
    size_t n;
    char *t = slurp("mpich42-segv-remote.txt", &n), *phrase;
    char *argv[] = { "mpiexec", "-n", "2", "./pi", NULL };
    json_t *f = agent_failure_explain(&s, t, n, argv, 255, &phrase);
    assert_non_null(f);
    assert_string_equal(phrase, "a process (PID 34) on pod m42fail-worker-1 (node ?) exited with code 11 (or killed by "
                                "SIGSEGV: Hydra reports both as 11)");
    free(phrase);
    json_decref(f);
    free(t);
    const char *plain = "=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES\n=   PID 7 RUNNING AT "
                        "job-worker-0.job.ns.svc\n=   EXIT CODE: 3\n";
    f = agent_failure_explain(&s, plain, strlen(plain), argv, 3, &phrase);
    assert_string_equal(phrase, "a process (PID 7) on pod job-worker-0 (node ?) exited with code 3");
    free(phrase);
    json_decref(f);
    agent_hostlist_free(&s.hosts);
}

/* Open MPI 4's notice without its report (ranks exiting together; seen on the real cluster in
 * tests/k8s/cases/pod_failure_policy.sh): the code is mpirun's own, 1..127 only, no rank. */
static void test_notice(void **st)
{
    (void)st;
    struct agent_session s;
    struct agent_opts o;
    session(&s, &o);
    char *argv[] = { "mpirun", "-np", "2", "sh", "-c", "exit 75", NULL }, *phrase;
    size_t n;
    char *t = slurp("ompi4-nonmpi-exit75-notice.txt", &n);
    expect("ompi4-nonmpi-exit75-notice.txt", "openmpi", "ompi-notice", -1, NULL, -1, 0);
    json_t *f = agent_failure_explain(&s, t, n, argv, 75, &phrase);
    assert_non_null(f);
    assert_string_equal(phrase, "a rank exited with code 75 (mpirun's exit code; Open MPI named no rank)");
    assert_int_equal(json_integer_value(json_object_get(f, MPIK8S_FAIL_EXIT_CODE)), 75);
    assert_null(json_object_get(f, MPIK8S_FAIL_RANK));
    assert_null(json_object_get(f, MPIK8S_FAIL_POD));
    assert_string_equal(json_string_value(json_object_get(f, MPIK8S_FAIL_SOURCE)), "mpirun-exit");
    assert_string_equal(json_string_value(json_object_get(f, MPIK8S_FAIL_REASON)), MPIK8S_FAIL_R_EXIT_CODE);
    assert_string_equal(json_string_value(json_object_get(f, MPIK8S_FAIL_LAST_LINES)), "rank 0 up\n");
    free(phrase);
    json_decref(f);
    /* 128 and up may be a signal; a signal's end (-1) or 0 says nothing: no attribution */
    const int none[] = { 139, 128, 255, 0, -1 };
    for (size_t i = 0; i < sizeof none / sizeof none[0]; i++) {
        assert_null(agent_failure_explain(&s, t, n, argv, none[i], &phrase));
        assert_null(phrase);
    }
    free(t);
    /* a full report after the notice wins over the notice */
    t = slurp("ompi4-exit3.txt", &n);
    f = agent_failure_explain(&s, t, n, argv, 3, &phrase);
    assert_string_equal(json_string_value(json_object_get(f, MPIK8S_FAIL_FORM)), "ompi-exit");
    free(phrase);
    json_decref(f);
    free(t);
    agent_hostlist_free(&s.hosts);
}

/* The stream holder stopped a Hydra launch whose proxies failed to start (captured on kubesim,
 * tests/integration/controller_failures.sh's fproxy): the pod and code from its line, no rank,
 * no MPI; Hydra's own lines after it do not count. Malformed forms of the line are refused. */
static void test_daemon_exit(void **st)
{
    (void)st;
    struct agent_session s;
    struct agent_opts o;
    session(&s, &o);
    char *err = NULL;
    assert_int_equal(agent_hostlist_add(&s.hosts, "fproxy-worker-1.fproxy.default.svc", 0, &err), 0);
    size_t n;
    char *t = slurp("mpich4-proxy-missing-holder.txt", &n), *phrase;
    char *argv[] = { "sh", "-c", "exec /tmp/hx/mpiexec -n 2 hostname", NULL };
    struct agent_rank_failure r;
    assert_int_equal(agent_failure_parse(t, n, &r), 1);
    assert_null(r.mpi);
    assert_string_equal(r.form, "daemon-exit");
    assert_string_equal(r.host, "fproxy-worker-1");
    assert_int_equal(r.exit_code, 127);
    assert_int_equal(r.rank, -1);
    agent_rank_failure_free(&r);
    json_t *f = agent_failure_explain(&s, t, n, argv, 127, &phrase);
    assert_non_null(f);
    assert_string_equal(phrase, "the MPI daemon on pod fproxy-worker-1 (node ?) exited with code 127 and the launch did "
                                "not end on its own (the stream holder stopped it)");
    assert_string_equal(json_string_value(json_object_get(f, MPIK8S_FAIL_SOURCE)), "holder");
    assert_string_equal(json_string_value(json_object_get(f, MPIK8S_FAIL_REASON)), MPIK8S_FAIL_R_EXIT_CODE);
    assert_null(json_object_get(f, MPIK8S_FAIL_MPI));
    assert_string_equal(json_string_value(json_object_get(f, MPIK8S_FAIL_LAST_LINES)),
                        "/bin/sh: 1: /tmp/hx/hydra_pmi_proxy: not found\n/bin/sh: 1: /tmp/hx/hydra_pmi_proxy: not found\n");
    free(phrase);
    json_decref(f);
    free(t);
    static const char *const bad[] = {
        "mpi-rsh-holder: the MPI daemon on pod p exited with code 0; sh was still running 5 s later: stopping it\n",
        "mpi-rsh-holder: the MPI daemon on pod p exited with code 256; sh was still running 5 s later: stopping it\n",
        "mpi-rsh-holder: the MPI daemon on pod p exited with code 3\n",
        "mpi-rsh-holder: the MPI daemon on pod  exited with code 3; x\n",
        "  mpi-rsh-holder: the MPI daemon on pod p exited with code 3; x\n",
    };
    assert_no_finding(bad, sizeof bad / sizeof bad[0]);
    agent_hostlist_free(&s.hosts);
}

/* The same stop by mpi-agent (agent/daemonexit.h), every transport's: its own line, the same
 * finding, source "agent"; its malformed forms are refused too. */
static void test_daemon_exit_agent(void **st)
{
    (void)st;
    struct agent_session s;
    struct agent_opts o;
    session(&s, &o);
    char *err = NULL;
    assert_int_equal(agent_hostlist_add(&s.hosts, "fssh-worker-0.fssh.default.svc", 0, &err), 0);
    const char *t = "/bin/sh: 1: /tmp/hx/hydra_pmi_proxy: not found\n"
                    "mpi-agent: the MPI daemon on pod fssh-worker-0 exited with code 127; mpiexec was still running 30 s "
                    "later: stopping it\n"
                    "[mpiexec@fssh-launcher] HYDU_sock_write (utils/sock/sock.c:254): write error (Bad file descriptor)\n";
    char *argv[] = { "mpiexec", "-n", "2", "hostname", NULL }, *phrase;
    struct agent_rank_failure r;
    assert_int_equal(agent_failure_parse(t, strlen(t), &r), 1);
    assert_string_equal(r.form, "daemon-exit");
    assert_string_equal(r.stopper, "agent");
    assert_string_equal(r.host, "fssh-worker-0");
    assert_int_equal(r.exit_code, 127);
    agent_rank_failure_free(&r);
    json_t *f = agent_failure_explain(&s, t, strlen(t), argv, 143, &phrase);
    assert_non_null(f);
    assert_string_equal(phrase, "the MPI daemon on pod fssh-worker-0 (node ?) exited with code 127 and the launch did "
                                "not end on its own (mpi-agent stopped it)");
    assert_string_equal(json_string_value(json_object_get(f, MPIK8S_FAIL_SOURCE)), "agent");
    assert_string_equal(json_string_value(json_object_get(f, MPIK8S_FAIL_LAST_LINES)),
                        "/bin/sh: 1: /tmp/hx/hydra_pmi_proxy: not found\n");
    free(phrase);
    json_decref(f);
    static const char *const bad[] = {
        "mpi-agent: the MPI daemon on pod p exited with code 0; sh was still running 5 s later: stopping it\n",
        "mpi-agent: the MPI daemon on pod p exited with code 3\n",
        "mpi-agent: the MPI daemon on pod  exited with code 3; x\n",
        "mpi-agent:the MPI daemon on pod p exited with code 3; x\n",
    };
    assert_no_finding(bad, sizeof bad / sizeof bad[0]);
    agent_hostlist_free(&s.hosts);
}

/* PRRTE 3.0 exits 0 after its "lost communication" account (real output, o5lost on the real
 * cluster): the account stands on its own; ORTE's notice alone and plain output do not */
static void test_reported(void **st)
{
    (void)st;
    size_t n;
    char *t = slurp("ompi5-daemon-lost.txt", &n);
    assert_string_equal(agent_failure_reported(t, n), "ompi-daemon-lost");
    struct agent_rank_failure r;
    assert_int_equal(agent_failure_parse(t, n, &r), 1);
    assert_string_equal(r.host, "o5lost-worker-1");
    agent_rank_failure_free(&r);
    free(t);
    t = slurp("ompi5-exit.txt", &n);
    assert_non_null(agent_failure_reported(t, n));
    free(t);
    t = slurp("ompi4-nonmpi-exit75-notice.txt", &n);
    assert_null(agent_failure_reported(t, n));
    free(t);
    const char *plain = "Rank 0 of 2 running on w-0\npi is approximately 3.1416\n";
    assert_null(agent_failure_reported(plain, strlen(plain)));
    assert_null(agent_failure_reported("", 0));
}

/* ORTE lost a daemon (captured on kubesim: rank 1 killed its orted): the node, no rank, no code;
 * the launch mark's exit line for the same pod adds its code, for another pod nothing. Hydra names
 * none: the mark's line alone is the finding. A finding of a rank is left as it is. */
static void test_daemon_lost(void **st)
{
    (void)st;
    struct agent_session s;
    struct agent_opts o;
    session(&s, &o);
    char *err = NULL;
    assert_int_equal(agent_hostlist_add(&s.hosts, "olost-worker-0.olost.default.svc", 0, &err), 0);
    assert_int_equal(agent_hostlist_add(&s.hosts, "olost-worker-1.olost.default.svc", 0, &err), 0);
    size_t n;
    char *t = slurp("ompi4-daemon-lost.txt", &n), *phrase;
    char *argv[] = { "mpirun", "-np", "2", "sh", NULL };
    struct agent_rank_failure r;
    assert_int_equal(agent_failure_parse(t, n, &r), 1);
    assert_string_equal(r.form, "ompi-daemon-lost");
    assert_string_equal(r.mpi, "openmpi");
    assert_string_equal(r.host, "olost-worker-1.olost.default.svc");
    assert_int_equal(r.rank, -1);
    assert_int_equal(r.exit_code, -1);
    assert_int_equal(r.at, 0);
    agent_rank_failure_free(&r);
    json_t *f = agent_failure_explain(&s, t, n, argv, 205, &phrase);
    assert_non_null(f);
    assert_string_equal(phrase,
                        "the MPI daemon on pod olost-worker-1 (node ?) was lost: Open MPI lost communication with it "
                        "(the daemon died, or the pod network to it failed)");
    assert_string_equal(json_string_value(json_object_get(f, MPIK8S_FAIL_REASON)), MPIK8S_FAIL_R_UNKNOWN);
    assert_ptr_equal(agent_failure_daemon_end(&s, f, "olost-worker-0", 137, t, n, &phrase), f); /* another pod */
    assert_null(json_object_get(f, MPIK8S_FAIL_EXIT_CODE));
    assert_ptr_equal(agent_failure_daemon_end(&s, f, "olost-worker-1", 137, t, n, &phrase), f);
    assert_string_equal(phrase, "the MPI daemon on pod olost-worker-1 (node ?) exited with code 137 (Open MPI lost "
                                "communication with it)");
    assert_string_equal(json_string_value(json_object_get(f, MPIK8S_FAIL_MESSAGE)), phrase);
    assert_string_equal(json_string_value(json_object_get(f, MPIK8S_FAIL_REASON)), MPIK8S_FAIL_R_EXIT_CODE);
    free(phrase);
    json_decref(f);
    free(t);
    /* Hydra: nothing in the text; the mark's line is the finding, its pod placed */
    const char *h = "Killed\n[mpiexec@flost-launcher] control_cb (pm/pmiserv/pmiserv_cb.c:206): assert (!closed) failed\n";
    phrase = NULL;
    assert_null(agent_failure_explain(&s, h, strlen(h), argv, 255, &phrase));
    f = agent_failure_daemon_end(&s, NULL, "olost-worker-0", 137, h, strlen(h), &phrase);
    assert_non_null(f);
    assert_string_equal(phrase, "the MPI daemon on pod olost-worker-0 (node ?) exited with code 137 and the launch failed "
                                "(mpirun named no rank)");
    assert_string_equal(json_string_value(json_object_get(f, MPIK8S_FAIL_SOURCE)), "launch-mark");
    assert_string_equal(json_string_value(json_object_get(f, MPIK8S_FAIL_POD)), "olost-worker-0");
    free(phrase);
    json_decref(f);
    /* a rank's own report stays the finding */
    t = slurp("ompi4-exit3.txt", &n);
    json_t *g = agent_failure_explain(&s, t, n, argv, 3, &phrase);
    assert_non_null(g);
    char *kept = strdup(phrase);
    assert_ptr_equal(agent_failure_daemon_end(&s, g, "job-worker-1", 137, t, n, &phrase), g);
    assert_string_equal(phrase, kept);
    free(kept);
    free(phrase);
    json_decref(g);
    free(t);
    agent_hostlist_free(&s.hosts);
}

static void test_oom_state(void **st)
{
    (void)st;
    json_error_t je;
    json_t *pod = json_loads("{\"spec\":{\"containers\":[{\"name\":\"sidecar\"},{\"name\":\"worker\",\"resources\":"
                             "{\"limits\":{\"memory\":\"64Mi\"}}}]},\"status\":{\"containerStatuses\":[{\"name\":"
                             "\"sidecar\",\"state\":{\"running\":{}}},{\"name\":\"worker\",\"state\":{\"running\":{}},"
                             "\"lastState\":{\"terminated\":{\"reason\":\"OOMKilled\",\"exitCode\":137}}}]}}",
                             0, &je);
    assert_non_null(pod);
    const char *limit;
    assert_int_equal(agent_failure_oom_state(pod, "worker", &limit), 1);
    assert_string_equal(limit, "64Mi");
    assert_int_equal(agent_failure_oom_state(pod, "sidecar", &limit), 0);
    assert_null(limit);
    json_decref(pod);
}

static void test_termination_line(void **st)
{
    (void)st;
    struct agent_phases ph = { { 0 } };
    agent_phase_mark(&ph, AGENT_PHASE_FINISHED);
    json_t *f = json_pack("{s:s, s:i, s:s, s:s, s:b, s:s}", MPIK8S_FAIL_REASON, MPIK8S_FAIL_R_OOM, MPIK8S_FAIL_RANK, 1,
                          MPIK8S_FAIL_POD, "j-worker-0", MPIK8S_FAIL_MEMORY_LIMIT, "64Mi", MPIK8S_FAIL_OOM, 1,
                          MPIK8S_FAIL_LAST_LINES, "");
    char big[5000];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    json_object_set_new(f, MPIK8S_FAIL_LAST_LINES, json_string(big + 3000)); /* ~2 KiB: fits */
    char *m = agent_termination_format_failure(big, &ph, f);
    assert_true(strlen(m) <= AGENT_TERMINATION_MAX);
    json_t *back = mpik8s_termination_failure(m);
    assert_non_null(back);
    assert_int_equal(json_integer_value(json_object_get(back, MPIK8S_FAIL_RANK)), 1);
    assert_non_null(json_object_get(back, MPIK8S_FAIL_LAST_LINES));
    json_decref(back);
    free(m);
    json_object_set_new(f, MPIK8S_FAIL_LAST_LINES, json_string(big + 500)); /* 4.5 KiB: lastLines dropped */
    m = agent_termination_format_failure("rank 1 OOM-killed", &ph, f);
    assert_true(strlen(m) <= AGENT_TERMINATION_MAX);
    back = mpik8s_termination_failure(m);
    assert_null(json_object_get(back, MPIK8S_FAIL_LAST_LINES));
    assert_string_equal(json_string_value(json_object_get(back, MPIK8S_FAIL_MEMORY_LIMIT)), "64Mi");
    char *sum = NULL;
    json_t *phases = NULL;
    assert_int_equal(mpik8s_termination_parse(m, &sum, &phases), 0);
    assert_string_equal(sum, "rank 1 OOM-killed");
    assert_non_null(phases);
    free(sum);
    json_decref(phases);
    json_decref(back);
    free(m);
    json_decref(f);
    assert_null(mpik8s_termination_failure("x\nfailure: [1]\n"));
    assert_null(mpik8s_termination_failure("x\nphases: {}\n"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_open_mpi_4),
        cmocka_unit_test(test_open_mpi_5),
        cmocka_unit_test(test_mpich),
        cmocka_unit_test(test_unparseable),
        cmocka_unit_test(test_notice),
        cmocka_unit_test(test_cgroup),
        cmocka_unit_test(test_last_lines),
        cmocka_unit_test(test_explain),
        cmocka_unit_test(test_oom_state),
        cmocka_unit_test(test_termination_line),
        cmocka_unit_test(test_daemon_exit),
        cmocka_unit_test(test_daemon_exit_agent),
        cmocka_unit_test(test_daemon_lost),
        cmocka_unit_test(test_reported),
        cmocka_unit_test(test_explain_hydra_ambiguous),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
