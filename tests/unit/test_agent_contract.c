/* test_agent_contract.c - the contract between operator, agent and mpi-rsh: docs/agent.md's
 * table of the variables the operator sets names exactly the MPIK8S_ENV_* variables of
 * include/mpik8s/contract.h (both files parsed as text, run from the repository root or
 * with SRCDIR set); the transport, hostfile line and termination message helpers. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "mpik8s/contract.h"
#include "../../agent/termination.h"
#include "kube/util.h"

#define MAX_NAMES 64

struct names {
    char *v[MAX_NAMES];
    size_t n;
};

static char *read_src(const char *rel)
{
    const char *dir = getenv("SRCDIR");
    char *path = kube_strdup_printf("%s/%s", dir && *dir ? dir : ".", rel);
    char *text = NULL, *err = NULL;
    assert_non_null(path);
    if (kube_read_file(path, 1 << 20, &text, NULL, &err) < 0)
        fail_msg("%s", err);
    free(path);
    return text;
}

static void add_name(struct names *ns, const char *s, size_t len)
{
    assert_true(ns->n < MAX_NAMES);
    ns->v[ns->n] = strndup(s, len);
    assert_non_null(ns->v[ns->n]);
    ns->n++;
}

/* The quoted values of `#define MPIK8S_ENV_X "NAME"` lines. */
static void header_names(const char *text, struct names *ns)
{
    for (const char *p = text; (p = strstr(p, "#define MPIK8S_ENV_")) != NULL; p++) {
        const char *q = strchr(p, '"');
        const char *eol = strchr(p, '\n');
        assert_non_null(q);
        assert_true(!eol || q < eol);
        const char *e = strchr(q + 1, '"');
        assert_non_null(e);
        add_name(ns, q + 1, (size_t)(e - q - 1));
    }
}

/* The first-column names of the table under "## Environment the operator sets". */
static void doc_names(const char *text, struct names *ns)
{
    const char *p = strstr(text, "\n## Environment the operator sets\n");
    assert_non_null(p);
    const char *end = strstr(p + 1, "\n## ");
    for (p = strstr(p, "\n| `"); p && (!end || p < end); p = strstr(p + 1, "\n| `")) {
        const char *e = strchr(p + 4, '`');
        assert_non_null(e);
        add_name(ns, p + 4, (size_t)(e - p - 4));
    }
}

static int has(const struct names *ns, const char *s)
{
    for (size_t i = 0; i < ns->n; i++)
        if (strcmp(ns->v[i], s) == 0)
            return 1;
    return 0;
}

static void free_names(struct names *ns)
{
    for (size_t i = 0; i < ns->n; i++)
        free(ns->v[i]);
}

static void test_doc_table_matches_header(void **st)
{
    (void)st;
    char *h = read_src("include/mpik8s/contract.h"), *d = read_src("docs/agent.md");
    struct names hn = { { 0 }, 0 }, dn = { { 0 }, 0 };
    header_names(h, &hn);
    doc_names(d, &dn);
    int bad = 0;
    for (size_t i = 0; i < hn.n; i++)
        if (!has(&dn, hn.v[i]))
            bad = fprintf(stderr, "%s: in contract.h, missing from docs/agent.md's table\n", hn.v[i]);
    for (size_t i = 0; i < dn.n; i++)
        if (!has(&hn, dn.v[i]))
            bad = fprintf(stderr, "%s: in docs/agent.md's table, not in contract.h\n", dn.v[i]);
    assert_true(hn.n >= 10);
    assert_int_equal(hn.n, dn.n);
    assert_int_equal(bad, 0);
    free_names(&hn);
    free_names(&dn);
    free(h);
    free(d);
}

static void test_transport(void **st)
{
    (void)st;
    enum mpik8s_transport t = MPIK8S_TRANSPORT_EXEC;
    assert_int_equal(mpik8s_transport_parse("ssh", &t), 0);
    assert_int_equal(t, MPIK8S_TRANSPORT_SSH);
    assert_string_equal(mpik8s_transport_name(t), "ssh");
    assert_int_equal(mpik8s_transport_parse("SSH", &t), -1);
    assert_int_equal(mpik8s_transport_parse(NULL, &t), -1);
    assert_int_equal(t, MPIK8S_TRANSPORT_SSH);
    assert_int_equal(mpik8s_transport_parse("exec", &t), 0);
    assert_string_equal(mpik8s_transport_name(t), "exec");
}

static void test_hostfile_line(void **st)
{
    (void)st;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    mpik8s_hostfile_line(f, MPIK8S_HOSTFILE_SLOTS_EQ, "a-worker-0.a.ns.svc", 4);
    mpik8s_hostfile_line(f, MPIK8S_HOSTFILE_COLON, "b", 2);
    mpik8s_hostfile_line(f, MPIK8S_HOSTFILE_COLON, "c", 0);
    assert_int_equal(fclose(f), 0);
    assert_string_equal(buf, "a-worker-0.a.ns.svc slots=4\nb:2\nc\n");
    free(buf);
}

/* What the agent writes, the operator's parser reads: one format, one parser. */
static void test_termination_round_trip(void **st)
{
    (void)st;
    struct agent_phases ph = { { 0 } };
    ph.at_ms[AGENT_PHASE_WORKERS_READY] = 1764568862123;
    ph.at_ms[AGENT_PHASE_FINISHED] = 1764568870000;
    char *msg = agent_termination_format("command exited 0 after 7.9 s", &ph);
    assert_non_null(msg);
    char *summary = NULL;
    json_t *phases = NULL;
    assert_int_equal(mpik8s_termination_parse(msg, &summary, &phases), 0);
    assert_string_equal(summary, "command exited 0 after 7.9 s");
    assert_string_equal(json_string_value(json_object_get(phases, MPIK8S_PHASE_WORKERS_READY)), "2025-12-01T06:01:02.123Z");
    assert_string_equal(json_string_value(json_object_get(phases, MPIK8S_PHASE_FINISHED)), "2025-12-01T06:01:10.000Z");
    assert_int_equal(json_object_size(phases), 2);
    struct agent_phases back;
    assert_int_equal(agent_phases_parse(msg, &back), 0);
    assert_memory_equal(&back, &ph, sizeof ph);
    json_decref(phases);
    free(summary);
    free(msg);
    assert_int_equal(mpik8s_termination_parse("x\nphases: [1]", &summary, &phases), -1);
    assert_null(phases);
    free(summary);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_doc_table_matches_header),
        cmocka_unit_test(test_transport),
        cmocka_unit_test(test_hostfile_line),
        cmocka_unit_test(test_termination_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
