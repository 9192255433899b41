/* test_agent_plugin.c - the pure parts of `kubectl mpijob` (agent/plugin_view.c, plugin_why.c,
 * plugin_logs.c's rank filter, plugin_yaml.c, plugin_table.c) over real objects: the MPIJobs and
 * pods in tests/unit/data/plugin/ were captured from kubesim running our operator
 * (tests/integration/kubectl_mpijob.sh; README there) and a suspended MPIJob with its Workload
 * from the real Kueue (tests/k8s/cases/kueue.sh), and variants made from them by changing one
 * field (a signal, an OOM kill, no status, a Workload admitted or evicted). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <jansson.h>

#include "../../agent/plugin.h"
#include "../../lib/yamljson.h"
#include "kube/json.h"
#include "kube/rfc3339.h"

static json_t *load(const char *name)
{
    char path[256];
    json_error_t je;
    snprintf(path, sizeof path, "tests/unit/data/plugin/%s", name);
    json_t *j = json_load_file(path, 0, &je);
    if (!j)
        fail_msg("%s: %s", path, je.text);
    return j;
}

/* The job's creation time plus ms. */
static int64_t created_plus(const json_t *job, int64_t ms)
{
    int64_t t = 0;
    assert_int_equal(kube_time_parse_ms(kube_json_at_str(job, "metadata", "creationTimestamp"), &t), 0);
    return t + ms;
}

static void test_human_age(void **st)
{
    (void)st;
    static const struct {
        int64_t ms;
        const char *want;
    } cases[] = {
        { -2000, "<invalid>" },
        { -500, "0s" },
        { 0, "0s" },
        { 5000, "5s" },
        { 119999, "119s" },
        { 120000, "2m" },
        { 182000, "3m2s" },
        { 599000, "9m59s" },
        { 600000, "10m" },
        { 10799000, "179m" },
        { 10800000, "3h" },
        { 7500000, "125m" },
        { 11100000, "3h5m" },
        { 28800000, "8h" },
        { 172799000, "47h" },
        { 172800000, "2d" },
        { 183600000, "2d3h" },
        { 691200000, "8d" },
        { 34560000000LL, "400d" },
        { 63072000000LL, "2y" },
        { 64108800000LL, "2y12d" },
        { 252288000000LL, "8y" },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char buf[32];
        const char *got = plugin_human_age(cases[i].ms, buf, sizeof buf);
        if (strcmp(got, cases[i].want))
            fail_msg("%lld ms: \"%s\", want \"%s\"", (long long)cases[i].ms, got, cases[i].want);
    }
    char buf[32];
    assert_string_equal(plugin_age_of("not a time", 0, buf, sizeof buf), "<unknown>");
    assert_string_equal(plugin_age_of(NULL, 0, buf, sizeof buf), "<unknown>");
}

static void test_row_succeeded(void **st)
{
    (void)st;
    json_t *job = load("ok.json"), *pods = load("ok.pods.json");
    struct plugin_row r;
    char *err = NULL;
    assert_int_equal(plugin_row_fill(job, kube_json_at(pods, "items"), created_plus(job, 65000), &r, &err), 0);
    assert_string_equal(r.name, "ok");
    assert_string_equal(r.ns, "default");
    assert_string_equal(r.state, "Succeeded");
    assert_string_equal(r.workers, "2/2");
    assert_string_equal(r.age, "65s");
    /* LAUNCH: created -> mpirunStarted, both in the fixture's status.launchPhases */
    int64_t a, b;
    char want[32];
    assert_int_equal(kube_time_parse_ms(kube_json_at_str(job, "status", "launchPhases", "created"), &a), 0);
    assert_int_equal(kube_time_parse_ms(kube_json_at_str(job, "status", "launchPhases", "mpirunStarted"), &b), 0);
    assert_string_equal(r.launch, plugin_human_age(b - a, want, sizeof want));
    assert_string_equal(r.reason, "");
    /* wide: the launcher pod of the fixture, and the one node both workers and it ran on */
    assert_int_equal(strncmp(r.launcher, "ok-launcher-", 12), 0);
    assert_int_equal(strlen(r.launcher), strlen("ok-launcher-") + 5);
    const char *node = kube_json_at_str(json_array_get(kube_json_at(pods, "items"), 0), "spec", "nodeName");
    assert_non_null(node);
    assert_string_equal(r.nodes, node);
    plugin_row_free(&r);
    /* NODES: each node once, in the pods' order, a name that is a prefix of another kept apart */
    json_t *items = kube_json_at(pods, "items");
    json_object_set_new(kube_json_at(json_array_get(items, 1), "spec"), "nodeName", json_string("n"));
    json_object_set_new(kube_json_at(json_array_get(items, 2), "spec"), "nodeName", json_string("n2"));
    assert_int_equal(plugin_row_fill(job, items, created_plus(job, 0), &r, &err), 0);
    char want_nodes[256];
    snprintf(want_nodes, sizeof want_nodes, "%s,n,n2", node);
    assert_string_equal(r.nodes, want_nodes);
    plugin_row_free(&r);
    json_array_append(items, json_array_get(items, 2));
    assert_int_equal(plugin_row_fill(job, items, created_plus(job, 0), &r, &err), 0);
    assert_string_equal(r.nodes, want_nodes);
    plugin_row_free(&r);
    /* without pods the wide columns say so */
    assert_int_equal(plugin_row_fill(job, NULL, created_plus(job, 0), &r, &err), 0);
    assert_string_equal(r.launcher, "<none>");
    assert_string_equal(r.nodes, "<none>");
    plugin_row_free(&r);
    json_decref(job);
    json_decref(pods);
}

static void test_states_and_reasons(void **st)
{
    (void)st;
    static const struct {
        const char *file, *state, *reason, *workers, *launch;
    } cases[] = {
        { "fexit.json", "Failed", "rank 1 exit code 3", "2/2", NULL },
        { "noimg.json", "Created", "ImagePullBackOff: worker pod noimg-worker-0", "0/2", "-" },
        { "susp.json", "Suspended", "suspended: Kueue queue lq", "0/2", "-" },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        json_t *job = load(cases[i].file);
        struct plugin_row r;
        char *err = NULL;
        assert_int_equal(plugin_row_fill(job, NULL, created_plus(job, 3 * 86400000LL + 3600000), &r, &err), 0);
        assert_string_equal(r.state, cases[i].state);
        assert_string_equal(r.reason, cases[i].reason);
        assert_string_equal(r.workers, cases[i].workers);
        assert_string_equal(r.age, "3d1h");
        if (cases[i].launch)
            assert_string_equal(r.launch, cases[i].launch);
        plugin_row_free(&r);
        json_decref(job);
    }
    json_t *bad = json_pack("{s:{}}", "metadata");
    struct plugin_row r;
    char *err = NULL;
    assert_int_equal(plugin_row_fill(bad, NULL, 0, &r, &err), -1);
    assert_non_null(strstr(err, "metadata.name"));
    free(err);
    json_decref(bad);
}

/* fexit with its rankFailure changed: a signal, an OOM kill, a lost worker */
static void test_rank_reasons(void **st)
{
    (void)st;
    json_t *job = load("fexit.json");
    json_t *f = kube_json_at(job, "status", "rankFailure");
    assert_non_null(f);
    json_object_del(f, "exitCode");
    json_object_set_new(f, "reason", json_string("signal"));
    json_object_set_new(f, "signal", json_string("SIGSEGV"));
    char *s = plugin_short_reason(job);
    assert_string_equal(s, "rank 1 SIGSEGV");
    free(s);
    json_object_set_new(f, "reason", json_string("oom"));
    json_object_set_new(f, "signal", json_string("SIGKILL"));
    s = plugin_short_reason(job);
    assert_string_equal(s, "rank 1 OOMKilled");
    free(s);
    json_object_clear(f);
    json_object_set_new(f, "reason", json_string("worker_lost"));
    json_object_set_new(f, "pod", json_string("fexit-worker-1"));
    s = plugin_short_reason(job);
    assert_string_equal(s, "worker lost: fexit-worker-1");
    free(s);
    json_object_del(kube_json_at(job, "status"), "rankFailure");
    s = plugin_short_reason(job);
    assert_string_equal(s, "BackoffLimitExceeded");
    free(s);
    json_decref(job);
}

static void check_why(const json_t *job, const json_t *pods, const json_t *w, const char *want)
{
    json_t *none = json_array();
    char *got = plugin_why_text(job, pods ? pods : none, w);
    json_decref(none);
    assert_non_null(got);
    if (!strstr(got, want))
        fail_msg("why: \"%s\" lacks \"%s\"", got, want);
    free(got);
}

static void test_why_fixtures(void **st)
{
    (void)st;
    const char *names[] = { "ok", "fexit", "noimg", "susp" };
    const char *want[] = {
        "MPIJob default/ok is not Running: it succeeded.",
        "MPIJob default/fexit failed: rank 1 on pod fexit-worker-1 (node ",
        "MPIJob default/noimg is blocked: worker pod noimg-worker-0: container w: ",
        "MPIJob default/susp is suspended: waiting for Kueue to create its Workload (queue lq).",
    };
    for (size_t i = 0; i < 4; i++) {
        char f[64], p[64];
        snprintf(f, sizeof f, "%s.json", names[i]);
        snprintf(p, sizeof p, "%s.pods.json", names[i]);
        json_t *job = load(f), *pods = load(p);
        check_why(job, kube_json_at(pods, "items"), NULL, want[i]);
        json_decref(job);
        json_decref(pods);
    }
    /* the image is named */
    json_t *job = load("noimg.json"), *pods = load("noimg.pods.json");
    check_why(job, kube_json_at(pods, "items"), NULL, "example.com/does-not-exist:1");
    /* before the operator's Blocked condition: the stuck pod itself (the launcher first) */
    json_t *conds = kube_json_at(job, "status", "conditions");
    for (size_t i = json_array_size(conds); i-- > 0;)
        if (!strcmp(kube_json_at_str(json_array_get(conds, i), "type"), "Blocked"))
            json_array_remove(conds, i);
    check_why(job, kube_json_at(pods, "items"), NULL,
              "MPIJob default/noimg is waiting: worker pod noimg-worker-0 is Pending: container w: ");
    /* a pod on its way is named only when none is stuck: the launcher first */
    json_t *starting = json_array();
    json_array_append(starting, json_array_get(kube_json_at(pods, "items"), 0));
    check_why(job, starting, NULL, "MPIJob default/noimg is waiting: launcher pod noimg-launcher-");
    json_decref(starting);
    /* no conditions at all: the operator has not seen it */
    json_object_del(job, "status");
    check_why(job, NULL, NULL, "has no status yet: waiting for the operator");
    json_decref(job);
    json_decref(pods);
}

static void test_why_suspend_and_kueue(void **st)
{
    (void)st;
    /* k2 and its Workload, from the real Kueue (tests/k8s/cases/kueue.sh): not admitted, no quota */
    json_t *job = load("k2.json"), *w = load("k2.workload.json");
    char want[512];
    snprintf(want, sizeof want,
             "MPIJob default/k2 is not admitted by Kueue (queue lq, workload %s): Pending: couldn't assign flavors to pod "
             "set worker: insufficient unused quota for cpu in flavor pool-a, 500m more needed",
             kube_obj_name(w));
    check_why(job, NULL, w, want);
    char *r = plugin_short_reason(job);
    assert_string_equal(r, "suspended: Kueue queue lq");
    free(r);
    /* admitted, not yet resumed */
    json_t *conds = kube_json_at(w, "status", "conditions");
    json_array_append_new(conds, json_pack("{s:s, s:s, s:s, s:s}", "type", "Admitted", "status", "True", "reason",
                                           "Admitted", "message", "The workload is admitted"));
    check_why(job, NULL, w, "is admitted by Kueue (queue lq, workload mpijob-k2-");
    /* evicted (preempted) */
    json_array_append_new(conds, json_pack("{s:s, s:s, s:s, s:s}", "type", "Evicted", "status", "True", "reason",
                                           "Preempted", "message", "Preempted to accommodate a higher priority Workload"));
    check_why(job, NULL, w, "was evicted by Kueue (queue lq, workload mpijob-k2-");
    check_why(job, NULL, w, "): Preempted: Preempted to accommodate a higher priority Workload");
    json_decref(w);
    json_decref(job);
    /* the kubesim job with the queue label and no Workload yet; then suspended by hand (no label) */
    job = load("susp.json");
    check_why(job, NULL, NULL, "MPIJob default/susp is suspended: waiting for Kueue to create its Workload (queue lq).");
    json_object_del(kube_json_at(job, "metadata", "labels"), "kueue.x-k8s.io/queue-name");
    check_why(job, NULL, NULL, "is suspended (spec.runPolicy.suspend is true): set it to false to run it.");
    json_decref(job);
}

static void test_line_of_rank(void **st)
{
    (void)st;
    static const struct {
        const char *line;
        long rank;
        int want;
    } cases[] = {
        { "[1,2]<stdout>:rank 2 up", 2, 1 },
        { "[1,2]<stderr>:oops", 2, 1 },
        { "[1,2]<stdout>:rank 2 up", 1, 0 },
        { "[1,12]<stdout>:x", 1, 0 },
        { "[3] hello", 3, 1 },
        { "[3] hello", 1, 0 },
        { "[3]hello", 3, 0 },
        { "rank 2 up", 2, 0 },
        { "[a,2]<stdout>:x", 2, 0 },
        { "[1,2]", 2, 0 },
        { "", 0, 0 },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        if (plugin_line_of_rank(cases[i].line, strlen(cases[i].line), cases[i].rank) != cases[i].want)
            fail_msg("\"%s\" rank %ld: want %d", cases[i].line, cases[i].rank, cases[i].want);
}

/* v with every scalar as the string YAML shows (lib/yamljson.c reads scalars as strings) */
static json_t *stringified(const json_t *v)
{
    const char *k;
    json_t *x, *out;
    size_t i;
    char num[64];
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        out = json_object();
        json_object_foreach((json_t *)v, k, x)
            json_object_set_new(out, k, stringified(x));
        return out;
    case JSON_ARRAY:
        out = json_array();
        json_array_foreach(v, i, x)
            json_array_append_new(out, stringified(x));
        return out;
    case JSON_INTEGER: snprintf(num, sizeof num, "%" JSON_INTEGER_FORMAT, json_integer_value(v)); return json_string(num);
    case JSON_TRUE: return json_string("true");
    case JSON_FALSE: return json_string("false");
    case JSON_NULL: return json_string("null");
    default: return json_deep_copy(v);
    }
}

/* -o yaml reads back as the same object; strings that look like numbers or booleans are quoted,
 * numbers and booleans are not */
static void test_yaml_round_trip(void **st)
{
    (void)st;
    json_t *job = load("fexit.json");
    json_object_set_new(kube_json_at(job, "metadata", "annotations"), "x/num", json_string("120"));
    json_object_set_new(kube_json_at(job, "metadata", "annotations"), "x/bool", json_string("true"));
    json_object_set_new(kube_json_at(job, "metadata", "annotations"), "x/empty", json_string(""));
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    char *err = NULL;
    assert_int_equal(plugin_yaml_write(f, job, &err), 0);
    assert_int_equal(fclose(f), 0);
    assert_non_null(strstr(buf, "x/num: \"120\"\n"));
    assert_non_null(strstr(buf, "x/bool: \"true\"\n"));
    assert_non_null(strstr(buf, "x/empty: \"\"\n"));
    assert_non_null(strstr(buf, "\n    suspend: false\n"));
    assert_non_null(strstr(buf, "\n  slotsPerWorker: 1\n"));
    assert_non_null(strstr(buf, "\n    exitCode: 3\n"));
    json_t *back = Kube_yaml_to_json(buf, len, &err), *want = stringified(job);
    if (!back)
        fail_msg("yaml does not parse: %s\n%s", err, buf);
    if (!json_equal(back, want)) {
        char *b = json_dumps(back, JSON_SORT_KEYS | JSON_INDENT(1));
        fprintf(stderr, "yaml:\n%s\nread back as:\n%s\n", buf, b);
        free(b);
        fail_msg("yaml round trip differs (printed above)");
    }
    json_decref(back);
    json_decref(want);
    free(buf);
    json_decref(job);
}

static void test_table(void **st)
{
    (void)st;
    const char *cells[] = { "NAME", "STATE", "REASON", "a-long-name", "Failed", "", "b", NULL, "x y" };
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    plugin_table_print(f, "", cells, 3, 3);
    assert_int_equal(fclose(f), 0);
    assert_string_equal(buf, "NAME          STATE    REASON\n"
                             "a-long-name   Failed   <none>\n"
                             "b             <none>   x y\n");
    free(buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_human_age),
        cmocka_unit_test(test_row_succeeded),
        cmocka_unit_test(test_states_and_reasons),
        cmocka_unit_test(test_rank_reasons),
        cmocka_unit_test(test_why_fixtures),
        cmocka_unit_test(test_why_suspend_and_kueue),
        cmocka_unit_test(test_line_of_rank),
        cmocka_unit_test(test_yaml_round_trip),
        cmocka_unit_test(test_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
