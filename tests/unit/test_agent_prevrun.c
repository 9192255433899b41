/* test_agent_prevrun.c - a failed run's record kept in the launcher's emptyDir for a rerun of
 * the same container (agent/prevrun.c): saved, read back, replaced by a newer run, and
 * nothing read from an empty directory or a record of another shape; a rerun's failure leads
 * with the previous run's (agent_prev_run_lead). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <jansson.h>

#include "../../agent/prevrun.h"

static void test_save_load(void **st)
{
    (void)st;
    char dir[] = "/tmp/prevrun.XXXXXX";
    assert_non_null(mkdtemp(dir));
    struct agent_opts o = { 0 };
    o.dest = dir;
    struct agent_session s = { 0 };
    s.o = &o;
    assert_null(agent_prev_run_load(dir)); /* the first run: nothing before it */
    s.failure = json_pack("{s:s, s:s}", "reason", "worker_lost", "message", "worker w-1: being deleted: preempted by d/p");
    agent_prev_run_save(&s, "worker w-1: being deleted: preempted by d/p; command exited 1");
    json_t *r = agent_prev_run_load(dir);
    assert_non_null(r);
    assert_string_equal(json_string_value(json_object_get(r, "summary")),
                        "worker w-1: being deleted: preempted by d/p; command exited 1");
    assert_true(json_equal(json_object_get(r, "failure"), s.failure));
    json_decref(r);
    json_decref(s.failure);
    s.failure = NULL; /* a newer failed run without a failure object replaces the record */
    agent_prev_run_save(&s, "command exited 2");
    r = agent_prev_run_load(dir);
    assert_string_equal(json_string_value(json_object_get(r, "summary")), "command exited 2");
    assert_null(json_object_get(r, "failure"));
    json_decref(r);
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, AGENT_PREV_RUN_FILE);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("{\"summary\": 3}", f);
    assert_int_equal(fclose(f), 0);
    assert_null(agent_prev_run_load(dir)); /* not ours */
    assert_int_equal(unlink(path), 0);
    assert_int_equal(rmdir(dir), 0);
    assert_null(agent_prev_run_load(NULL));
}

/* The e2e 24 case as first run on the real cluster (launcher OnFailure, backoffLimit 0): the
 * first run failed on the partition; the kubelet reran the container and the Job, giving up,
 * stopped the rerun with SIGTERM. The Job's record must lead with the first run's cause. */
static void test_lead(void **st)
{
    (void)st;
    char dir[] = "/tmp/prevrun.XXXXXX";
    assert_non_null(mkdtemp(dir));
    struct agent_opts o = { 0 };
    o.dest = dir;
    struct agent_session s = { 0 };
    s.o = &o;
    /* the first run, as agent_cmd_run does it: load (nothing yet), save its own, lead: unchanged */
    json_t *prev = agent_prev_run_load(dir);
    assert_null(prev);
    s.failure = json_pack("{s:s}", "reason", "network");
    agent_prev_run_save(&s, "worker w-1 (10.0.0.3, node n2): no answer over the pod network for 23 s");
    json_decref(s.failure);
    s.failure = NULL;
    char *first = strdup("worker w-1 (10.0.0.3, node n2): no answer over the pod network for 23 s");
    char *out = agent_prev_run_lead(&s, prev, first);
    assert_ptr_equal(out, first); /* not "X (the previous run ...); then: X" */
    free(out);
    prev = agent_prev_run_load(dir); /* the rerun starts: the first run's record */
    assert_non_null(prev);
    /* the rerun, stopped by the Job: its own failure object (mpirun's SIGTERM) gives way */
    s.failure = json_pack("{s:s}", "reason", "signal");
    s.stopped_by_signal = 1;
    out = agent_prev_run_lead(&s, prev, strdup("received Terminated; command exited 1 after 2.5 s"));
    assert_string_equal(out, "worker w-1 (10.0.0.3, node n2): no answer over the pod network for 23 s (the previous run "
                             "of this launcher container); then: received Terminated; command exited 1 after 2.5 s");
    assert_string_equal(json_string_value(json_object_get(s.failure, "reason")), "network");
    free(out);
    /* a rerun failing on its own (not stopped by us) keeps its own failure object */
    json_decref(s.failure);
    s.failure = json_pack("{s:s}", "reason", "exit");
    s.stopped_by_signal = 0;
    out = agent_prev_run_lead(&s, prev, strdup("rank 1 exited 3"));
    assert_string_equal(json_string_value(json_object_get(s.failure, "reason")), "exit");
    free(out);
    json_decref(s.failure);
    json_decref(prev);
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, AGENT_PREV_RUN_FILE);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = { cmocka_unit_test(test_save_load), cmocka_unit_test(test_lead) };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
