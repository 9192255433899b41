/* test_controller_metrics.c - the series the alerts and the dashboard read: an MPIJob's one
 * state from its conditions (job_state.c), mpi_operator_jobs{state} and the blocked-since
 * gauge (kept per job, removed with it), the reconcile errors, rest_client_requests_total,
 * the work queue's depth, and the process_* metrics parsed from /proc/<pid>/stat. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <jansson.h>

#include "../../controller/job_state.h"
#include "../../controller/metrics.h"
#include "../../controller/metrics_process.h"

/* An MPIJob whose status has the conditions given as "Type=Status" words (Blocked's reason
 * Unschedulable and lastTransitionTime 2026-12-06T10:00:00Z). */
static json_t *job_with(const char *conds)
{
    json_t *list = json_array();
    char *copy = strdup(conds), *save = NULL;
    for (char *w = strtok_r(copy, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
        char *eq = strchr(w, '=');
        *eq = '\0';
        json_array_append_new(list, json_pack("{s:s, s:s, s:s, s:s}", "type", w, "status", eq + 1, "reason",
                                              strcmp(w, "Blocked") == 0 ? "Unschedulable" : "R", "lastTransitionTime",
                                              "2026-12-06T10:00:00Z"));
    }
    free(copy);
    return json_pack("{s:{s:o}}", "status", "conditions", list);
}

static enum job_state state_of(const char *conds, struct job_state_info *st)
{
    json_t *j = job_with(conds);
    job_state_read(j, 5, st);
    json_decref(j);
    return st->state;
}

static void test_job_state(void **s)
{
    (void)s;
    struct job_state_info st;
    assert_int_equal(state_of("", &st), JS_PENDING);
    assert_int_equal(state_of("Created=True", &st), JS_CREATED);
    assert_int_equal(state_of("Created=True Running=True", &st), JS_RUNNING);
    assert_int_equal(state_of("Created=True Running=False Restarting=True", &st), JS_RESTARTING);
    assert_int_equal(state_of("Created=True Running=False Succeeded=True", &st), JS_SUCCEEDED);
    assert_int_equal(state_of("Created=True Running=False Failed=True", &st), JS_FAILED);
    assert_int_equal(state_of("Created=True Suspended=True Running=False", &st), JS_SUSPENDED);
    assert_int_equal(state_of("Blocked=False Created=True", &st), JS_CREATED);
    assert_null(st.reason);
    assert_true(st.blocked_since == 0);
    /* blocked, while created or restarting; its time and reason kept */
    assert_int_equal(state_of("Blocked=True Created=True", &st), JS_BLOCKED);
    assert_true(st.blocked_since == 1796551200.0);
    assert_int_equal(state_of("Blocked=True Created=True Restarting=True", &st), JS_BLOCKED);
    /* a finished job is finished, whatever was blocked */
    assert_int_equal(state_of("Blocked=True Created=True Failed=True", &st), JS_FAILED);
    /* no parsable time: from now */
    json_t *j = job_with("Blocked=True");
    json_object_del(json_array_get(json_object_get(json_object_get(j, "status"), "conditions"), 0), "lastTransitionTime");
    job_state_read(j, 42.5, &st);
    assert_true(st.blocked_since == 42.5);
    assert_string_equal(st.reason, "Unschedulable");
    json_decref(j);
    assert_string_equal(job_state_name(JS_BLOCKED), "blocked");
    assert_string_equal(job_state_name(JS__COUNT), "?");
}

static void expect_line(const char *text, const char *line)
{
    size_t n = strlen(line);
    for (const char *p = text; (p = strstr(p, line)) != NULL; p++)
        if ((p == text || p[-1] == '\n') && (p[n] == '\n' || p[n] == '\0'))
            return;
    fail_msg("no line '%s' in:\n%s", line, text);
}

static void expect_no(const char *text, const char *what)
{
    if (strstr(text, what))
        fail_msg("'%s' should be gone from:\n%s", what, text);
}

static size_t fake_depth(void *ud) { return *(size_t *)ud; }

static void test_render_job_states(void **s)
{
    (void)s;
    struct metrics *m = metrics_new();
    assert_non_null(m);
    struct job_state_info blocked = { JS_BLOCKED, 1796551200.25, "ImagePull\"Back\\Off" };
    struct job_state_info running = { JS_RUNNING, 0, NULL };
    metrics_job_state(m, "default/gpu", &blocked);
    metrics_job_state(m, "team-a/pi", &running);
    metrics_job_state(m, "team-a/pi2", &running);
    char *t = metrics_render(m);
    expect_line(t, "# TYPE mpi_operator_jobs gauge");
    expect_line(t, "mpi_operator_jobs{state=\"running\"} 2");
    expect_line(t, "mpi_operator_jobs{state=\"blocked\"} 1");
    expect_line(t, "mpi_operator_jobs{state=\"failed\"} 0");
    expect_line(t, "mpi_operator_jobs{state=\"pending\"} 0");
    expect_line(t, "# TYPE mpi_operator_job_blocked_since_timestamp_seconds gauge");
    expect_line(t, "mpi_operator_job_blocked_since_timestamp_seconds{mpijob=\"gpu\",namespace=\"default\","
                   "reason=\"ImagePull\\\"Back\\\\Off\"} 1796551200.250");
    free(t);
    /* unblocked: the gauge's series goes, the count moves */
    metrics_job_state(m, "default/gpu", &running);
    t = metrics_render(m);
    expect_line(t, "mpi_operator_jobs{state=\"running\"} 3");
    expect_line(t, "mpi_operator_jobs{state=\"blocked\"} 0");
    expect_no(t, "mpi_operator_job_blocked_since_timestamp_seconds{");
    free(t);
    /* deleted */
    metrics_job_state(m, "default/gpu", &blocked);
    metrics_job_state(m, "default/gpu", NULL);
    metrics_job_state(m, "team-a/pi", NULL);
    t = metrics_render(m);
    expect_line(t, "mpi_operator_jobs{state=\"running\"} 1");
    expect_no(t, "mpi_operator_job_blocked_since_timestamp_seconds{");
    free(t);
    metrics_free(m);
}

static void test_render_errors_requests_queue(void **s)
{
    (void)s;
    struct metrics *m = metrics_new();
    assert_non_null(m);
    char *t = metrics_render(m);
    expect_line(t, "mpi_operator_reconcile_errors_total 0");
    expect_line(t, "# TYPE rest_client_requests_total counter");
    expect_no(t, "mpi_operator_workqueue_depth"); /* no queue: absent, not a made-up 0 */
    free(t);
    metrics_reconcile_error(m);
    metrics_reconcile_error(m);
    metrics_api_request(m, "GET", 200);
    metrics_api_request(m, "GET", 200);
    metrics_api_request(m, "PATCH", 409);
    metrics_api_request(m, "GET", 0);
    size_t depth = 7;
    metrics_set_queue_depth(m, fake_depth, &depth);
    t = metrics_render(m);
    expect_line(t, "mpi_operator_reconcile_errors_total 2");
    expect_line(t, "rest_client_requests_total{code=\"200\",method=\"GET\"} 2");
    expect_line(t, "rest_client_requests_total{code=\"409\",method=\"PATCH\"} 1");
    expect_line(t, "rest_client_requests_total{code=\"<error>\",method=\"GET\"} 1");
    expect_line(t, "# TYPE mpi_operator_workqueue_depth gauge");
    expect_line(t, "mpi_operator_workqueue_depth 7");
    /* this process' own numbers, read from /proc/self */
    expect_line(t, "# TYPE process_resident_memory_bytes gauge");
    expect_line(t, "# TYPE process_cpu_seconds_total counter");
    expect_line(t, "# TYPE process_start_time_seconds gauge");
    free(t);
    metrics_free(m);
}

static void test_process_parse(void **s)
{
    (void)s;
    /* a command name with spaces and parentheses; utime 250, stime 150 ticks, starttime 1000
     * ticks after boot, vsize 123456789, rss 2560 pages */
    const char *stat = "4242 (mpi (op) x) S 1 4242 4242 0 -1 4194560 1000 0 0 0 250 150 0 0 20 0 9 0 1000 123456789 "
                       "2560 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n";
    struct process_stats ps = { 0 };
    assert_int_equal(metrics_process_parse(stat, 100, 4096, 1796000000, &ps), 0);
    assert_true(ps.cpu_seconds == 4.0);
    assert_true(ps.start_time == 1796000010.0);
    assert_true(ps.virtual_bytes == 123456789.0);
    assert_true(ps.resident_bytes == 2560.0 * 4096);
    /* cut short, not a number, no command */
    assert_int_equal(metrics_process_parse("4242 (x) S 1 2 3", 100, 4096, 0, &ps), -1);
    assert_int_equal(
        metrics_process_parse("4242 (x) S 1 2 3 4 5 6 7 8 9 10 x 12 13 14 15 16 17 18 19 20 21", 100, 4096, 0, &ps), -1);
    assert_int_equal(metrics_process_parse("4242 x S 1", 100, 4096, 0, &ps), -1);
    assert_int_equal(metrics_process_parse(stat, 0, 4096, 0, &ps), -1);
    /* the real one */
    char *err = NULL;
    assert_int_equal(metrics_process_read(&ps, &err), 0);
    assert_null(err);
    assert_true(ps.resident_bytes > 0);
    assert_true(ps.open_fds >= 3);
    assert_true(ps.start_time > 1.6e9);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_job_state),
        cmocka_unit_test(test_render_job_states),
        cmocka_unit_test(test_render_errors_requests_queue),
        cmocka_unit_test(test_process_parse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
