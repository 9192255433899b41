/* test_controller_reconcile.c - the sync as a pure function over a small fake
 * cluster: the plan for a new job, steady state (no API call when nothing
 * changed), Running/Succeeded as the seed shows, cleanPodPolicy, launcher
 * failure with the agent's message, worker failure and eviction, suspend and
 * resume, activeDeadlineSeconds, TTL, foreign objects, invalid specs. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../controller/reconcile.h"
#include "../../controller/cond.h"
#include "../../include/kube/json.h"
#include "../../include/kube/util.h"
#include "../../controller/launcher_memory.h"
#include "../../controller/kind.h"
#include "../../controller/status_pruned.h"

#define T0 1780000000000LL /* epoch ms of the job's creation */

struct world {
    struct launcher_memory *lmem; /* as the controller's pod informer feeds it */
    json_t *objs;                 /* "kind/name" -> object */
    json_t *events;               /* [reason...] */
    json_t *event_msgs;           /* [message...], as events */
    int uid;
};

static const char *job_json =
    "{\"apiVersion\":\"kubeflow.org/v2beta1\",\"kind\":\"MPIJob\",\"metadata\":{\"name\":\"pi\",\"namespace\":\"default\","
    "\"uid\":\"u-pi\",\"resourceVersion\":\"1\",\"creationTimestamp\":\"2026-05-28T20:26:40Z\"},"
    "\"spec\":{\"runPolicy\":{\"cleanPodPolicy\":\"Running\"},\"mpiReplicaSpecs\":{"
    "\"Launcher\":{\"replicas\":1,\"template\":{\"spec\":{\"containers\":[{\"name\":\"l\",\"image\":\"i\","
    "\"command\":[\"mpirun\",\"hostname\"]}]}}},"
    "\"Worker\":{\"replicas\":2,\"template\":{\"spec\":{\"containers\":[{\"name\":\"w\",\"image\":\"i\"}]}}}}}}";

static void key(char *buf, size_t n, enum res_kind r, const char *name) { snprintf(buf, n, "%s/%s", kind_name(r), name); }

static json_t *get(struct world *w, enum res_kind r, const char *name)
{
    char k[256];
    key(k, sizeof k, r, name);
    return json_object_get(w->objs, k);
}

static void world_init(struct world *w, const char *job)
{
    json_error_t je;
    w->objs = json_object();
    w->events = json_array();
    w->event_msgs = json_array();
    w->uid = 0;
    w->lmem = launcher_memory_new();
    json_object_set_new(w->objs, "mpijobs/pi", json_loads(job, 0, &je));
}

static void world_free(struct world *w)
{
    json_decref(w->objs);
    json_decref(w->events);
    json_decref(w->event_msgs);
    launcher_memory_free(w->lmem);
}

static void put(struct world *w, enum res_kind r, json_t *o)
{
    char k[256];
    key(k, sizeof k, r, json_string_value(json_object_get(json_object_get(o, "metadata"), "name")));
    if (r == RK_POD)
        launcher_memory_observe(w->lmem, "default/pi", o);
    json_object_set_new(w->objs, k, o);
}

/* JSON merge patch (RFC 7386) of patch onto target: null removes, objects merge. */
static void merge_patch(json_t *target, json_t *patch)
{
    const char *k;
    json_t *v;
    json_object_foreach(patch, k, v) {
        json_t *t = json_object_get(target, k);
        if (json_is_null(v))
            json_object_del(target, k);
        else if (json_is_object(v) && json_is_object(t))
            merge_patch(t, v);
        else
            json_object_set_new(target, k, json_deep_copy(v));
    }
}

/* Applies a plan like an API server would (creates get a uid and creation time). */
static void apply(struct world *w, struct plan *p)
{
    char k[256];
    for (size_t i = 0; i < p->n; i++) {
        struct action *a = &p->a[i];
        switch (a->kind) {
        case ACT_CREATE: {
            json_t *o = json_deep_copy(a->obj);
            json_t *md = json_object_get(o, "metadata");
            json_object_set_new(md, "uid", json_sprintf("uid-%d", ++w->uid));
            json_object_set_new(md, "creationTimestamp", json_string("2026-05-28T20:26:41Z"));
            put(w, a->res, o);
            break;
        }
        case ACT_STATUS: put(w, RK_MPIJOB, json_deep_copy(a->obj)); break;
        case ACT_PATCH: merge_patch(get(w, a->res, a->name), a->obj); break;
        case ACT_DELETE:
            key(k, sizeof k, a->res, a->name);
            json_object_del(w->objs, k);
            break;
        case ACT_EVENT:
            json_array_append_new(w->events, json_string(a->ev_reason));
            json_array_append_new(w->event_msgs, json_string(a->ev_msg));
            break;
        case ACT_SSH_SECRET: {
            json_t *s = json_pack("{s:{s:s, s:[{s:s, s:s, s:b}]}}", "metadata", "name", a->name, "ownerReferences", "kind",
                                  "MPIJob", "uid", "u-pi", "controller", 1);
            put(w, RK_SECRET, s);
            break;
        }
        }
    }
}

static void observe(struct world *w, struct observed *ob)
{
    memset(ob, 0, sizeof *ob);
    ob->job = get(w, RK_MPIJOB, "pi");
    ob->configmap = get(w, RK_CONFIGMAP, "pi-config");
    ob->service = get(w, RK_SERVICE, "pi");
    ob->sa = get(w, RK_SERVICEACCOUNT, "pi-launcher");
    ob->role = get(w, RK_ROLE, "pi-launcher");
    ob->rolebinding = get(w, RK_ROLEBINDING, "pi-launcher");
    ob->secret = get(w, RK_SECRET, "pi-ssh");
    ob->launcher_job = get(w, RK_JOB, "pi-launcher");
    ob->podgroup = get(w, RK_PODGROUP, "pi");
    ob->pods = json_array();
    ob->launcher_seen = launcher_memory_get(w->lmem, "default/pi");
    const char *k;
    json_t *v;
    json_object_foreach(w->objs, k, v) {
        if (strncmp(k, "pods/", 5) == 0)
            json_array_append(ob->pods, v);
    }
}

static const char *g_gang; /* --gang-scheduling of the syncs (NULL: none) */
static int g_no_rbac;      /* access.h's limited mode: no launcher RBAC */

/* One sync at now; returns the number of actions, the plan is kept in *p (caller frees). */
static size_t sync_at(struct world *w, int64_t now, struct plan *p)
{
    struct observed ob;
    struct build_opts o;
    objects_build_opts_default(&o);
    o.gang = g_gang;
    o.no_launcher_rbac = g_no_rbac;
    observe(w, &ob);
    reconcile_plan(&ob, &o, now, p);
    apply(w, p);
    json_decref(ob.pods);
    json_decref(ob.launcher_seen);
    return p->n;
}

static size_t sync1(struct world *w, int64_t now)
{
    struct plan p;
    size_t n = sync_at(w, now, &p);
    plan_free(&p);
    return n;
}

static size_t count(struct plan *p, enum act_kind k, enum res_kind r)
{
    size_t n = 0;
    for (size_t i = 0; i < p->n; i++)
        n += p->a[i].kind == k && p->a[i].res == r;
    return n;
}

static json_t *status(struct world *w) { return json_object_get(get(w, RK_MPIJOB, "pi"), "status"); }

static const char *cond_field(struct world *w, const char *type, const char *f)
{
    return json_string_value(json_object_get(cond_get(status(w), type), f));
}

static void set_pod(struct world *w, const char *name, const char *phase, int ready)
{
    json_t *p = get(w, RK_POD, name);
    assert_non_null(p);
    json_object_set_new(p, "status",
                        json_pack("{s:s, s:s, s:[{s:s, s:s, s:s}, {s:s, s:s, s:s}]}", "phase", phase, "startTime",
                                  "2026-05-28T20:26:43Z", "conditions", "type", "PodScheduled", "status", "True",
                                  "lastTransitionTime", "2026-05-28T20:26:42Z", "type", "Ready", "status",
                                  ready ? "True" : "False", "lastTransitionTime", "2026-05-28T20:26:44Z"));
}

/* A launcher pod as the Job controller would create it. */
static void add_launcher_pod(struct world *w, const char *name, const char *phase, const char *term_msg, int code)
{
    json_t *p = json_pack("{s:{s:s, s:s, s:{s:s, s:s, s:s}}, s:{s:s, s:s}}", "metadata", "name", name, "creationTimestamp",
                          "2026-05-28T20:26:42Z", "labels", "training.kubeflow.org/job-role", "launcher", "mpi_role_type",
                          "launcher", "training.kubeflow.org/job-name", "pi", "status", "phase", phase, "startTime",
                          "2026-05-28T20:26:45Z");
    if (term_msg)
        json_object_set_new(json_object_get(p, "status"), "containerStatuses",
                            json_pack("[{s:s, s:{s:{s:i, s:s, s:s}}}]", "name", "l", "state", "terminated", "exitCode", code,
                                      "reason", code ? "Error" : "Completed", "message", term_msg));
    put(w, RK_POD, p);
}

static void set_job_cond(struct world *w, const char *type, const char *reason, const char *msg, int succeeded, int failed)
{
    json_t *j = get(w, RK_JOB, "pi-launcher");
    assert_non_null(j);
    json_object_set_new(j, "status",
                        json_pack("{s:i, s:i, s:s, s:[{s:s, s:s, s:s, s:s}]}", "succeeded", succeeded, "failed", failed,
                                  "completionTime", "2026-05-28T20:28:00Z", "conditions", "type", type, "status", "True",
                                  "reason", reason, "message", msg));
}

static void test_new_job_plan(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, job_json);
    struct plan p;
    sync_at(&w, T0, &p);
    assert_int_equal(count(&p, ACT_CREATE, RK_CONFIGMAP), 1);
    assert_int_equal(count(&p, ACT_CREATE, RK_SERVICEACCOUNT), 1);
    assert_int_equal(count(&p, ACT_CREATE, RK_ROLE), 1);
    assert_int_equal(count(&p, ACT_CREATE, RK_ROLEBINDING), 1);
    assert_int_equal(count(&p, ACT_CREATE, RK_SERVICE), 1);
    assert_int_equal(count(&p, ACT_SSH_SECRET, RK_SECRET), 1);
    assert_int_equal(count(&p, ACT_CREATE, RK_POD), 2);
    assert_int_equal(count(&p, ACT_CREATE, RK_JOB), 1);
    assert_int_equal(count(&p, ACT_STATUS, RK_MPIJOB), 1);
    assert_int_equal(p.created, 1);
    plan_free(&p);
    assert_string_equal(cond_field(&w, COND_CREATED, "message"), "MPIJob default/pi is created.");
    assert_non_null(json_object_get(status(&w), "startTime"));
    /* level-triggered: nothing changed -> no API call at all */
    assert_int_equal(sync1(&w, T0 + 1000), 0);
    world_free(&w);
}

static void run_to_running(struct world *w)
{
    sync1(w, T0);
    set_pod(w, "pi-worker-0", "Running", 1);
    set_pod(w, "pi-worker-1", "Running", 1);
    add_launcher_pod(w, "pi-launcher-abcde", "Running", NULL, 0);
    struct plan p;
    sync_at(w, T0 + 3000, &p);
    assert_true(p.launch_latency_s > 0);
    assert_non_null(p.new_phases);
    assert_non_null(json_object_get(p.new_phases, "workersReady"));
    assert_string_equal(p.launcher_pod, "pi-launcher-abcde");
    plan_free(&p);
    assert_string_equal(cond_field(w, COND_RUNNING, "status"), "True");
    assert_string_equal(cond_field(w, COND_RUNNING, "message"), "MPIJob default/pi is running.");
    /* the Event's message as upstream's: no period (bench/peer_behaviour.sh's diff) */
    size_t i, seen = 0;
    for (i = 0; i < json_array_size(w->events); i++)
        if (strcmp(json_string_value(json_array_get(w->events, i)), "MPIJobRunning") == 0) {
            assert_string_equal(json_string_value(json_array_get(w->event_msgs, i)), "MPIJob default/pi is running");
            seen++;
        }
    assert_int_equal(seen, 1);
}

/* Under a CRD whose status schema lacks launchPhases (upstream's), the API server drops it
 * from every status update: once an update's answer showed that, a sync whose only
 * difference is that key writes nothing (bench/peer_operator.sh saw a no-op PUT a sync). */
static void test_pruned_status_key_not_rewritten(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, job_json);
    run_to_running(&w);
    json_t *st = json_object_get(get(&w, RK_MPIJOB, "pi"), "status");
    assert_non_null(json_object_get(st, "launchPhases"));
    json_t *sent = json_deep_copy(st);
    json_object_del(st, "launchPhases"); /* as the server stores it */
    struct plan p;
    sync_at(&w, T0 + 4000, &p);
    assert_int_equal(count(&p, ACT_STATUS, RK_MPIJOB), 1); /* not known to be pruned yet */
    plan_free(&p);
    json_object_del(json_object_get(get(&w, RK_MPIJOB, "pi"), "status"), "launchPhases");
    status_pruned_note(sent, json_object_get(get(&w, RK_MPIJOB, "pi"), "status"));
    sync_at(&w, T0 + 4500, &p);
    assert_int_equal(count(&p, ACT_STATUS, RK_MPIJOB), 0);
    plan_free(&p);
    /* a real change is still written, launchPhases with it */
    set_pod(&w, "pi-worker-1", "Failed", 0);
    sync_at(&w, T0 + 5000, &p);
    assert_int_equal(count(&p, ACT_STATUS, RK_MPIJOB), 1);
    plan_free(&p);
    json_decref(sent);
    status_pruned_reset();
    world_free(&w);
}

static void test_running_then_succeeded(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, job_json);
    run_to_running(&w);
    /* hostfile for discover_hosts now lists both running workers: one ConfigMap update */
    assert_non_null(strstr(
        json_string_value(json_object_get(json_object_get(get(&w, RK_CONFIGMAP, "pi-config"), "data"), "discover_hosts.sh")),
        "pi-worker-1.pi.default.svc:1"));
    assert_int_equal(sync1(&w, T0 + 4000), 0);
    add_launcher_pod(&w, "pi-launcher-abcde", "Succeeded",
                     "mpirun finished\nphases: {\"workersReady\":\"2026-05-28T20:26:46.000Z\","
                     "\"mpirunStarted\":\"2026-05-28T20:26:47.250Z\"}",
                     0);
    set_job_cond(&w, "Complete", "", "", 1, 0);
    struct plan p;
    sync_at(&w, T0 + 80000, &p);
    assert_int_equal(p.succeeded, 1);
    assert_non_null(json_object_get(p.new_phases, "mpirunStarted"));
    plan_free(&p);
    assert_string_equal(cond_field(&w, COND_SUCCEEDED, "message"), "MPIJob default/pi successfully completed.");
    assert_string_equal(cond_field(&w, COND_RUNNING, "status"), "False");
    assert_string_equal(json_string_value(json_object_get(status(&w), "completionTime")), "2026-05-28T20:28:00Z");
    assert_string_equal(json_string_value(json_object_get(json_object_get(status(&w), "launchPhases"), "mpirunStarted")),
                        "2026-05-28T20:26:47.250Z");
    /* cleanPodPolicy Running: the running workers go, then Worker: {} */
    sync_at(&w, T0 + 81000, &p);
    assert_int_equal(count(&p, ACT_DELETE, RK_POD), 2);
    plan_free(&p);
    sync1(&w, T0 + 82000);
    json_t *rs = json_object_get(status(&w), "replicaStatuses");
    assert_int_equal(json_object_size(json_object_get(rs, "Worker")), 0);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(rs, "Launcher"), "succeeded")), 1);
    assert_int_equal(sync1(&w, T0 + 90000), 0);
    world_free(&w);
}

static void test_launcher_failed_message(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, job_json);
    run_to_running(&w);
    add_launcher_pod(&w, "pi-launcher-abcde", "Failed", "worker pi-worker-1 is gone (deleted)\nphases: {}", 1);
    set_job_cond(&w, "Failed", "BackoffLimitExceeded", "Job has reached the specified backoff limit", 0, 7);
    struct plan p;
    sync_at(&w, T0 + 5000, &p);
    assert_int_equal(p.failed, 1);
    plan_free(&p);
    assert_string_equal(cond_field(&w, COND_FAILED, "reason"), "BackoffLimitExceeded");
    assert_string_equal(cond_field(&w, COND_FAILED, "message"),
                        "MPIJob default/pi has failed: BackoffLimitExceeded: Job has reached the specified backoff limit; "
                        "launcher pod pi-launcher-abcde: worker pi-worker-1 is gone (deleted)");
    world_free(&w);
}

/* The agent's failure line: status.rankFailure (kept), a RankFailed / RankOOMKilled Event with
 * the last lines after the Failed one, the failure metric's reason; without one: "unknown". */
static void rank_failure_case(const char *failure, const char *ev_reason, const char *metric_reason, const char *ev_text)
{
    struct world w;
    world_init(&w, job_json);
    run_to_running(&w);
    char *msg = NULL;
    assert_true(asprintf(&msg, "rank 1 on pod pi-worker-1 (node n1) failed; command exited 3\nphases: {}\n%s", failure) > 0);
    add_launcher_pod(&w, "pi-launcher-abcde", "Failed", msg, 3);
    free(msg);
    set_job_cond(&w, "Failed", "BackoffLimitExceeded", "Job has reached the specified backoff limit", 0, 1);
    struct plan p;
    sync_at(&w, T0 + 5000, &p);
    assert_int_equal(p.failed, 1);
    assert_string_equal(p.fail_reason, metric_reason);
    const char *found = NULL;
    for (size_t i = 0; i < p.n; i++)
        if (p.a[i].kind == ACT_EVENT && ev_reason && strcmp(p.a[i].ev_reason, ev_reason) == 0)
            found = p.a[i].ev_msg;
    if (ev_reason) {
        assert_non_null(found);
        assert_non_null(strstr(found, ev_text));
        assert_true(strlen(found) <= 1024);
        assert_non_null(json_object_get(status(&w), "rankFailure"));
    } else {
        assert_null(json_object_get(status(&w), "rankFailure"));
    }
    assert_non_null(
        strstr(cond_field(&w, COND_FAILED, "message"), "launcher pod pi-launcher-abcde: rank 1 on pod pi-worker-1"));
    plan_free(&p);
    world_free(&w);
}

static void test_rank_failure(void **state)
{
    (void)state;
    rank_failure_case("failure: {\"reason\":\"exit_code\",\"rank\":1,\"pod\":\"pi-worker-1\",\"node\":\"n1\","
                      "\"exitCode\":3,\"message\":\"rank 1 on pod pi-worker-1 (node n1) exited with code 3\","
                      "\"lastLines\":\"[1,1]<stderr>:bad input\\n\"}",
                      "RankFailed", "exit_code",
                      "rank 1 on pod pi-worker-1 (node n1) exited with code 3; last lines:\n[1,1]<stderr>:bad input\n");
    rank_failure_case("failure: {\"reason\":\"oom\",\"rank\":1,\"pod\":\"pi-worker-1\",\"oomKilled\":true,"
                      "\"memoryLimit\":\"64Mi\",\"message\":\"rank 1 on pod pi-worker-1 (node n1) was killed by SIGKILL: "
                      "OOM-killed (limit 64Mi)\"}",
                      "RankOOMKilled", "oom", "OOM-killed (limit 64Mi)");
    /* a long lastLines: the Event keeps the phrase and the end of the lines, 1 KiB in all */
    char *big = malloc(3000), *f = NULL;
    for (int i = 0; i < 2998; i++) /* JSON-escaped line ends: backslash, n */
        big[i] = i % 50 == 48 ? '\\' : i % 50 == 49 ? 'n' : 'a' + i % 26;
    big[2998] = '\0';
    assert_true(asprintf(&f,
                         "failure: {\"reason\":\"signal\",\"signal\":\"SIGSEGV\",\"message\":\"rank 1 was killed "
                         "by SIGSEGV\",\"lastLines\":\"%sEND\"}",
                         big) > 0);
    rank_failure_case(f, "RankFailed", "signal", "END");
    free(f);
    free(big);
    rank_failure_case("", NULL, "unknown", NULL); /* an agent without the line: unknown */
    rank_failure_case("failure: [1]", NULL, "unknown", NULL);
}

/* A failure the Job does not count (podFailurePolicy Ignore) and a rerun that succeeded, both
 * first seen by the same sync (the rerun ended before the operator looked): the failed attempt's
 * rank stays in status.rankFailure and its detail in launcherFailure; the job Succeeded. */
static void test_rank_failure_of_ignored_attempt(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, job_json);
    run_to_running(&w);
    add_launcher_pod(&w, "pi-launcher-first", "Failed",
                     "rank 0 on pod pi-worker-0 (node n1) failed; command exited 75\nphases: {}\n"
                     "failure: {\"reason\":\"exit_code\",\"rank\":0,\"pod\":\"pi-worker-0\",\"exitCode\":75,"
                     "\"message\":\"rank 0 on pod pi-worker-0 (node n1) exited with code 75\"}",
                     75);
    add_launcher_pod(&w, "pi-launcher-second", "Succeeded", "mpirun finished\nphases: {}", 0);
    json_object_set_new(kube_json_at(get(&w, RK_POD, "pi-launcher-second"), "metadata"), "creationTimestamp",
                        json_string("2026-05-28T20:26:52Z"));
    set_job_cond(&w, "Complete", "", "", 1, 0);
    struct plan p;
    sync_at(&w, T0 + 20000, &p);
    assert_int_equal(p.succeeded, 1);
    plan_free(&p);
    assert_int_equal(json_integer_value(kube_json_at(status(&w), "rankFailure", "exitCode")), 75);
    assert_non_null(strstr(json_string_value(json_object_get(status(&w), "launcherFailure")), "pi-launcher-first"));
    world_free(&w);
}

/* The Job's Failed event may come before the pod watch delivers the launcher's terminated
 * state: the operator waits for that record (a short requeue, at most 3 s after the Job's Failed
 * condition) instead of writing a Failed condition without the agent's reason, which would
 * never be rewritten. */
static void test_launcher_failed_waits_for_record(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, job_json);
    run_to_running(&w); /* the cached launcher pod is still Running */
    char at[40];
    kube_time_format_ms(T0 + 5000, at, sizeof at);
    set_job_cond(&w, "Failed", "BackoffLimitExceeded", "Job has reached the specified backoff limit", 0, 1);
    json_t *cd = json_array_get(kube_json_at(get(&w, RK_JOB, "pi-launcher"), "status", "conditions"), 0);
    json_object_set_new(cd, "lastTransitionTime", json_string(at));
    struct plan p;
    sync_at(&w, T0 + 5100, &p);
    assert_int_equal(p.failed, 0);
    assert_true(p.requeue_after_ms > 0 && p.requeue_after_ms <= 200);
    plan_free(&p);
    assert_null(cond_get(status(&w), COND_FAILED));
    /* the pod event arrives: the Failed condition names the agent's reason */
    add_launcher_pod(&w, "pi-launcher-abcde", "Failed", "worker pi-worker-1 is gone (deleted)\nphases: {}", 1);
    sync_at(&w, T0 + 5300, &p);
    assert_int_equal(p.failed, 1);
    plan_free(&p);
    assert_string_equal(cond_field(&w, COND_FAILED, "message"),
                        "MPIJob default/pi has failed: BackoffLimitExceeded: Job has reached the specified backoff limit; "
                        "launcher pod pi-launcher-abcde: worker pi-worker-1 is gone (deleted)");
    world_free(&w);

    /* no record within the bound: Failed with the Job's reason alone */
    world_init(&w, job_json);
    run_to_running(&w);
    set_job_cond(&w, "Failed", "BackoffLimitExceeded", "Job has reached the specified backoff limit", 0, 1);
    cd = json_array_get(kube_json_at(get(&w, RK_JOB, "pi-launcher"), "status", "conditions"), 0);
    json_object_set_new(cd, "lastTransitionTime", json_string(at));
    sync_at(&w, T0 + 8100, &p);
    assert_int_equal(p.failed, 1);
    plan_free(&p);
    assert_string_equal(cond_field(&w, COND_FAILED, "message"),
                        "MPIJob default/pi has failed: BackoffLimitExceeded: Job has reached the specified backoff limit");
    world_free(&w);
}

/* A launcher pod whose init container (the agent) terminated with code and message; with
 * restarting, it is restarting (OnFailure): the record is in lastState. */
static void add_launcher_init_failed(struct world *w, const char *name, const char *created, int code, const char *msg,
                                     int restarting)
{
    json_t *p = json_pack("{s:{s:s, s:s, s:{s:s, s:s, s:s}}, s:{s:s}}", "metadata", "name", name, "creationTimestamp",
                          created, "labels", "training.kubeflow.org/job-role", "launcher", "mpi_role_type", "launcher",
                          "training.kubeflow.org/job-name", "pi", "status", "phase", "Pending");
    json_t *term = json_pack("{s:i, s:s, s:s}", "exitCode", code, "reason", "Error", "message", msg);
    json_t *st = restarting ? json_pack("{s:s, s:{s:{s:s}}, s:{s:o}, s:i}", "name", "mpi-agent-init", "state", "waiting",
                                        "reason", "CrashLoopBackOff", "lastState", "terminated", term, "restartCount", 1)
                            : json_pack("{s:s, s:{s:o}}", "name", "mpi-agent-init", "state", "terminated", term);
    json_object_set_new(json_object_get(p, "status"), "initContainerStatuses", json_pack("[o]", st));
    put(w, RK_POD, p);
}

/* The launcher's init container failed with the agent's record, the kubelet ran it again
 * (OnFailure) and the Job, giving up, killed that rerun (137, no message): the Failed message
 * keeps the failed run's reason (seen on the real cluster: e2e 18, DNS gone, ssh transport). */
static void test_killed_rerun_keeps_reason(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, job_json);
    run_to_running(&w);
    json_t *p =
        json_pack("{s:{s:s, s:s, s:{s:s, s:s, s:s}}, s:{s:s}}", "metadata", "name", "pi-launcher-abcde", "creationTimestamp",
                  "2026-05-28T20:26:42Z", "labels", "training.kubeflow.org/job-role", "launcher", "mpi_role_type",
                  "launcher", "training.kubeflow.org/job-name", "pi", "status", "phase", "Pending");
    json_t *first = json_pack("{s:i, s:s, s:s}", "exitCode", 1, "reason", "Error", "message",
                              "init failed: ssh DNS: cannot resolve host pi-worker-0\nphases: {}");
    json_t *st = json_pack("{s:s, s:{s:{s:i, s:s}}, s:{s:o}, s:i}", "name", "mpi-agent-init", "state", "terminated",
                           "exitCode", 137, "reason", "Error", "lastState", "terminated", first, "restartCount", 1);
    json_object_set_new(json_object_get(p, "status"), "initContainerStatuses", json_pack("[o]", st));
    put(&w, RK_POD, p);
    set_job_cond(&w, "Failed", "BackoffLimitExceeded", "Job has reached the specified backoff limit", 0, 0);
    sync1(&w, T0 + 5000);
    const char *m = cond_field(&w, COND_FAILED, "message");
    assert_non_null(strstr(m, "ssh DNS: cannot resolve host pi-worker-0"));
    assert_null(strstr(m, "137"));
    world_free(&w);
}

/* F7: the Job deletes the restarting launcher pod when it gives up; the Failed message still
 * carries the agent's reason, remembered from the pod's last state. */
static void test_launcher_gone_keeps_reason(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, job_json);
    run_to_running(&w);
    add_launcher_init_failed(&w, "pi-launcher-abcde", "2026-05-28T20:26:42Z", 1,
                             "init failed: could not list the worker pods\nphases: {}", 1);
    json_object_del(w.objs, "pods/pi-launcher-abcde");
    set_job_cond(&w, "Failed", "BackoffLimitExceeded", "Job has reached the specified backoff limit", 0, 0);
    sync1(&w, T0 + 5000);
    assert_string_equal(cond_field(&w, COND_FAILED, "message"),
                        "MPIJob default/pi has failed: BackoffLimitExceeded: Job has reached the specified backoff limit; "
                        "launcher pod pi-launcher-abcde: init failed: could not list the worker pods");
    world_free(&w);

    /* a remembered pod older than the MPIJob (an earlier job of the same name) is not quoted */
    world_init(&w, job_json);
    run_to_running(&w);
    add_launcher_init_failed(&w, "pi-launcher-old", "2026-05-28T20:00:00Z", 1, "init failed: old\nphases: {}", 0);
    json_object_del(w.objs, "pods/pi-launcher-old");
    json_object_del(w.objs, "pods/pi-launcher-abcde");
    set_job_cond(&w, "Failed", "BackoffLimitExceeded", "Job has reached the specified backoff limit", 0, 1);
    sync1(&w, T0 + 5000);
    assert_null(strstr(cond_field(&w, COND_FAILED, "message"), "old"));
    world_free(&w);
}

/* The launcher's reason is kept in status.launcherFailure as soon as a sync sees it, so an
 * operator restarted before the Job gives up (no pod, no memory of it) still quotes it. */
static void test_launcher_failure_survives_restart(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, job_json);
    run_to_running(&w);
    add_launcher_init_failed(&w, "pi-launcher-abcde", "2026-05-28T20:26:42Z", 1,
                             "init failed: could not list the worker pods\nphases: {}", 1);
    sync1(&w, T0 + 4000);
    assert_string_equal(json_string_value(json_object_get(status(&w), "launcherFailure")),
                        "launcher pod pi-launcher-abcde: init failed: could not list the worker pods");
    assert_null(cond_get(status(&w), COND_FAILED));
    /* the operator restarts (its memory is empty) and the Job deletes the pod as it gives up */
    launcher_memory_free(w.lmem);
    w.lmem = launcher_memory_new();
    json_object_del(w.objs, "pods/pi-launcher-abcde");
    set_job_cond(&w, "Failed", "BackoffLimitExceeded", "Job has reached the specified backoff limit", 0, 0);
    sync1(&w, T0 + 5000);
    assert_string_equal(cond_field(&w, COND_FAILED, "message"),
                        "MPIJob default/pi has failed: BackoffLimitExceeded: Job has reached the specified backoff limit; "
                        "launcher pod pi-launcher-abcde: init failed: could not list the worker pods");
    world_free(&w);

    /* a successful launcher record is not kept */
    world_init(&w, job_json);
    run_to_running(&w);
    add_launcher_pod(&w, "pi-launcher-abcde", "Succeeded", "mpirun exited 0\nphases: {}", 0);
    sync1(&w, T0 + 4000);
    assert_null(json_object_get(status(&w), "launcherFailure"));
    world_free(&w);
}

/* The agent's init exits 3 when the workers decided its wait: the job fails at once (no Job
 * retry can help), naming the agent's reason, and the launcher Job is stopped. */
static void test_workers_not_ready_fails_at_once(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, job_json);
    sync1(&w, T0);
    set_pod(&w, "pi-worker-0", "Running", 1);
    set_pod(&w, "pi-worker-1", "Pending", 0);
    add_launcher_init_failed(&w, "pi-launcher-abcde", "2026-05-28T20:26:42Z", 3,
                             "init failed: timed out after 10 s waiting for workers (1/2 ready): pi-worker-1: phase "
                             "Pending: container w: ImagePullBackOff\nphases: {}",
                             1);
    struct plan p;
    sync_at(&w, T0 + 12000, &p);
    assert_int_equal(p.failed, 1);
    plan_free(&p);
    assert_string_equal(cond_field(&w, COND_FAILED, "reason"), "MPIJobFailed");
    assert_string_equal(cond_field(&w, COND_FAILED, "message"),
                        "MPIJob default/pi has failed: the workers did not become ready; launcher pod pi-launcher-abcde: "
                        "init failed: timed out after 10 s waiting for workers (1/2 ready): pi-worker-1: phase Pending: "
                        "container w: ImagePullBackOff");
    sync_at(&w, T0 + 13000, &p);
    assert_int_equal(count(&p, ACT_PATCH, RK_JOB), 1); /* cleanPodPolicy Running: the Job is suspended */
    plan_free(&p);
    world_free(&w);

    /* any other init failure (exit 1: e.g. an API error) is left to the Job's backoffLimit */
    world_init(&w, job_json);
    sync1(&w, T0);
    add_launcher_init_failed(&w, "pi-launcher-abcde", "2026-05-28T20:26:42Z", 1, "init failed: x\nphases: {}", 1);
    sync1(&w, T0 + 12000);
    assert_null(cond_get(status(&w), COND_FAILED));
    world_free(&w);
}

static void test_restarting(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, job_json);
    run_to_running(&w);
    add_launcher_pod(&w, "pi-launcher-abcde", "Failed", NULL, 1);
    json_object_set_new(get(&w, RK_JOB, "pi-launcher"), "status", json_pack("{s:i}", "failed", 1));
    struct plan p;
    sync_at(&w, T0 + 5000, &p);
    assert_int_equal(p.restarted, 1);
    plan_free(&p);
    assert_string_equal(cond_field(&w, COND_RESTARTING, "reason"), "MPIJobRestarting");
    assert_null(cond_get(status(&w), COND_RUNNING));
    assert_int_equal(sync1(&w, T0 + 6000), 0);
    world_free(&w);
}

/* The launcher pod's status: phase Running, Ready as given, its container "l" restarted in place
 * n times (OnFailure) with the last run's termination message msg in lastState. */
static void set_launcher_restarted(struct world *w, int n, int ready, const char *msg)
{
    json_t *p = get(w, RK_POD, "pi-launcher-abcde");
    assert_non_null(p);
    json_t *last = json_pack("{s:i, s:s, s:s}", "exitCode", 1, "reason", "Error", "message", msg);
    json_object_set_new(p, "status",
                        json_pack("{s:s, s:s, s:[{s:s, s:s, s:s}], s:[{s:s, s:{s:{}}, s:{s:o}, s:i}]}", "phase", "Running",
                                  "startTime", "2026-05-28T20:26:45Z", "conditions", "type", "Ready", "status",
                                  ready ? "True" : "False", "lastTransitionTime", "2026-05-28T20:26:50Z",
                                  "containerStatuses", "name", "l", "state", ready ? "running" : "waiting", "lastState",
                                  "terminated", last, "restartCount", n));
}

static size_t events_named(struct world *w, const char *reason);

/* OnFailure (the seed's default): the launcher container restarted in place is recorded once (also
 * after an operator restart) with the agent's words and the retry budget; Running returns when the
 * container runs again; a job that then Succeeds keeps its restart history. */
static void test_restart_in_place(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, job_json);
    run_to_running(&w);
    set_launcher_restarted(&w, 1, 0,
                           "rank 1 on pod pi-worker-1 (node n1) exited with code 7; command exited 7\nphases: {}\n"
                           "failure: {\"reason\":\"exit_code\",\"rank\":1}");
    struct plan p;
    sync_at(&w, T0 + 5000, &p);
    assert_int_equal(p.restarted, 1);
    assert_int_equal(json_array_size(p.restart_reasons), 1);
    assert_string_equal(json_string_value(json_array_get(p.restart_reasons, 0)), "exit_code");
    plan_free(&p);
    assert_string_equal(cond_field(&w, COND_RESTARTING, "message"),
                        "MPIJob default/pi is restarting (run 2 of 7): launcher pod pi-launcher-abcde: rank 1 on pod "
                        "pi-worker-1 (node n1) exited with code 7; command exited 7");
    assert_null(cond_get(status(&w), COND_RUNNING));
    assert_int_equal(events_named(&w, "MPIJobRestarting"), 1);
    assert_int_equal(json_integer_value(json_object_get(status(&w), "restartCount")), 1);
    assert_int_equal(json_integer_value(json_object_get(status(&w), "retriesLeft")), 5);
    json_t *e = json_array_get(json_object_get(status(&w), "restarts"), 0);
    assert_string_equal(json_string_value(json_object_get(e, "key")), "pi-launcher-abcde@2026-05-28T20:26:42Z#1");
    assert_string_equal(json_string_value(json_object_get(e, "reason")), "exit_code");
    /* once only: a later sync, and an operator restart (its memory empty; the status keeps the key) */
    sync_at(&w, T0 + 6000, &p);
    assert_int_equal(p.restarted, 0);
    plan_free(&p);
    launcher_memory_free(w.lmem);
    w.lmem = launcher_memory_new();
    sync_at(&w, T0 + 7000, &p);
    assert_int_equal(p.restarted, 0);
    plan_free(&p);
    assert_int_equal(events_named(&w, "MPIJobRestarting"), 1);
    /* the next run: Running again */
    set_launcher_restarted(&w, 1, 1, "rank 1 ...");
    sync1(&w, T0 + 8000);
    assert_string_equal(cond_field(&w, COND_RUNNING, "status"), "True");
    assert_string_equal(cond_field(&w, COND_RUNNING, "message"), "MPIJob default/pi is running (run 2 of 7).");
    assert_null(cond_get(status(&w), COND_RESTARTING));
    /* a second restart, a deleted worker this time */
    set_launcher_restarted(&w, 2, 0, "worker pi-worker-1: deleted; command exited 1\nfailure: {\"reason\":\"worker_lost\"}");
    sync1(&w, T0 + 9000);
    assert_non_null(strstr(cond_field(&w, COND_RESTARTING, "message"), "(run 3 of 7): launcher pod pi-launcher-abcde: "
                                                                       "worker pi-worker-1: deleted"));
    assert_int_equal(json_integer_value(json_object_get(status(&w), "restartCount")), 2);
    assert_int_equal(json_array_size(json_object_get(status(&w), "restarts")), 2);
    set_job_cond(&w, "Complete", "CompletionsReached", "done", 1, 0);
    sync1(&w, T0 + 10000);
    assert_string_equal(cond_field(&w, COND_SUCCEEDED, "status"), "True");
    assert_int_equal(json_array_size(json_object_get(status(&w), "restarts")), 2);
    assert_int_equal(json_integer_value(json_object_get(status(&w), "restartCount")), 2);
    world_free(&w);
}

/* An init container of the launcher rerun in place (OnFailure) is a restart too: recorded once,
 * named by its container, its key apart from the main container's restarts. */
static void test_restart_init_container(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, job_json);
    run_to_running(&w);
    json_t *p = get(&w, RK_POD, "pi-launcher-abcde");
    assert_non_null(p);
    json_t *last = json_pack("{s:i, s:s, s:s}", "exitCode", 1, "reason", "Error", "message",
                             "cannot deliver the bundle to /opt/kube: No space left on device\nphases: {}");
    json_object_set_new(p, "status",
                        json_pack("{s:s, s:[{s:s, s:{s:{}}, s:{s:o}, s:i}], s:[{s:s, s:{s:{}}, s:i}]}", "phase", "Pending",
                                  "initContainerStatuses", "name", "mpi-agent-init", "state", "running", "lastState",
                                  "terminated", last, "restartCount", 1, "containerStatuses", "name", "l", "state",
                                  "waiting", "restartCount", 0));
    struct plan pl;
    sync_at(&w, T0 + 5000, &pl);
    assert_int_equal(pl.restarted, 1);
    plan_free(&pl);
    assert_string_equal(cond_field(&w, COND_RESTARTING, "message"),
                        "MPIJob default/pi is restarting (run 2 of 7): launcher pod pi-launcher-abcde (init container "
                        "mpi-agent-init): cannot deliver the bundle to /opt/kube: No space left on device");
    json_t *e = json_array_get(json_object_get(status(&w), "restarts"), 0);
    assert_string_equal(json_string_value(json_object_get(e, "key")),
                        "pi-launcher-abcde (init container mpi-agent-init)@2026-05-28T20:26:42Z#1");
    sync_at(&w, T0 + 6000, &pl);
    assert_int_equal(pl.restarted, 0);
    plan_free(&pl);
    assert_int_equal(events_named(&w, "MPIJobRestarting"), 1);
    assert_int_equal(json_integer_value(json_object_get(status(&w), "restartCount")), 1);
    world_free(&w);
}

/* restartPolicy Never: the launcher pod deleted, the Job counts it failed and makes another: one
 * record naming the deletion, with the budget the Job has left. */
static void test_restart_launcher_deleted(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, job_json);
    run_to_running(&w);
    json_object_set_new(json_object_get(get(&w, RK_POD, "pi-launcher-abcde"), "metadata"), "deletionTimestamp",
                        json_string("2026-05-28T20:26:50Z"));
    json_object_set_new(get(&w, RK_JOB, "pi-launcher"), "status", json_pack("{s:i}", "failed", 1));
    sync1(&w, T0 + 5000);
    assert_string_equal(cond_field(&w, COND_RESTARTING, "message"),
                        "MPIJob default/pi is restarting (run 2 of 7): launcher pod pi-launcher-abcde deleted");
    assert_int_equal(json_integer_value(json_object_get(status(&w), "restartCount")), 1);
    assert_int_equal(json_integer_value(json_object_get(status(&w), "retriesLeft")), 5);
    assert_int_equal(events_named(&w, "MPIJobRestarting"), 1);
    sync1(&w, T0 + 6000);
    assert_int_equal(events_named(&w, "MPIJobRestarting"), 1);
    /* the Job counts the next pod's failure before that pod is seen: recorded all the same */
    json_object_set_new(get(&w, RK_JOB, "pi-launcher"), "status", json_pack("{s:i}", "failed", 2));
    sync1(&w, T0 + 7000);
    assert_int_equal(json_integer_value(json_object_get(status(&w), "restartCount")), 2);
    assert_int_equal(events_named(&w, "MPIJobRestarting"), 2);
    assert_non_null(strstr(cond_field(&w, COND_RESTARTING, "message"), "(run 3 of 7)"));
    world_free(&w);
}

static void test_worker_failed_and_evicted(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, job_json);
    run_to_running(&w);
    set_pod(&w, "pi-worker-1", "Failed", 0);
    json_object_set_new(json_object_get(get(&w, RK_POD, "pi-worker-1"), "status"), "message", json_string("OOMKilled"));
    sync1(&w, T0 + 5000);
    assert_string_equal(cond_field(&w, COND_FAILED, "message"),
                        "MPIJob default/pi has failed: worker pod pi-worker-1 failed: OOMKilled");
    /* cleanPodPolicy Running: the running worker goes and the still-running launcher Job is suspended */
    struct plan p;
    sync_at(&w, T0 + 6000, &p);
    assert_int_equal(count(&p, ACT_DELETE, RK_POD), 1);
    assert_int_equal(count(&p, ACT_PATCH, RK_JOB), 1);
    plan_free(&p);
    world_free(&w);

    world_init(&w, job_json);
    run_to_running(&w);
    set_pod(&w, "pi-worker-0", "Failed", 0);
    json_object_set_new(json_object_get(get(&w, RK_POD, "pi-worker-0"), "status"), "reason", json_string("Evicted"));
    sync1(&w, T0 + 5000);
    assert_string_equal(cond_field(&w, COND_FAILED, "reason"), "MPIJobEvicted");
    assert_string_equal(cond_field(&w, COND_FAILED, "message"), "MPIJob default/pi has failed: 1/2 workers are evicted");
    world_free(&w);
}

/* A worker the scheduler preempted (phase Failed, DisruptionTarget PreemptionByScheduler, as the
 * kubelet leaves it before the pod is gone): while the launcher pod is there, the operator leaves the
 * failure to its agent (which names the preemptor) for DISRUPTED_WAIT_MS (20 s) after the
 * condition; then it fails the job itself, saying the worker was preempted. */
static void test_worker_preempted(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, job_json);
    run_to_running(&w);
    set_pod(&w, "pi-worker-1", "Failed", 0);
    json_array_append_new(json_object_get(json_object_get(get(&w, RK_POD, "pi-worker-1"), "status"), "conditions"),
                          json_pack("{s:s, s:s, s:s, s:s, s:s}", "type", "DisruptionTarget", "status", "True", "reason",
                                    "PreemptionByScheduler", "message",
                                    "default-scheduler: preempting to accommodate a higher priority pod",
                                    "lastTransitionTime", "2026-05-28T20:26:45Z")); /* T0 + 5 s */
    struct plan p;
    sync_at(&w, T0 + 6000, &p);
    assert_null(cond_get(status(&w), COND_FAILED));
    assert_true(p.requeue_after_ms > 0 && p.requeue_after_ms <= 1000);
    plan_free(&p);
    json_object_set_new(json_object_get(get(&w, RK_POD, "pi-launcher-abcde"), "metadata"), "deletionTimestamp",
                        json_string("2026-05-28T20:26:50Z")); /* the Job gave up: still waiting for its record */
    sync_at(&w, T0 + 24000, &p);
    assert_null(cond_get(status(&w), COND_FAILED));
    plan_free(&p);
    sync1(&w, T0 + 25001);
    assert_string_equal(cond_field(&w, COND_FAILED, "message"),
                        "MPIJob default/pi has failed: worker pod pi-worker-1 failed: preempted by the scheduler for a "
                        "higher-priority pod (DisruptionTarget PreemptionByScheduler: default-scheduler: preempting to "
                        "accommodate a higher priority pod)");
    world_free(&w);
}

static size_t events_named(struct world *w, const char *reason);

/* With runPolicy.backoffLimit N, a failed or evicted worker is deleted to be re-created (once
 * per pod, N in all), recorded in status.restarts / workerRestarts with a WorkerRestarted
 * Event; the launcher retries are counted in restartCount with their reasons; past N the
 * job fails as before. */
static void test_worker_restart(void **state)
{
    (void)state;
    char *job = strdup(job_json);
    char *at = strstr(job, "\"cleanPodPolicy\":\"Running\"}");
    assert_non_null(at);
    char *withlimit = NULL;
    assert_true(asprintf(&withlimit, "%.*s\"cleanPodPolicy\":\"Running\",\"backoffLimit\":2}%s", (int)(at - job), job,
                         at + strlen("\"cleanPodPolicy\":\"Running\"}")) > 0);
    struct world w;
    world_init(&w, withlimit);
    run_to_running(&w);
    for (int round = 1; round <= 2; round++) {
        const char *name = round == 1 ? "pi-worker-1" : "pi-worker-0";
        set_pod(&w, name, "Failed", 0);
        if (round == 2)
            json_object_set_new(json_object_get(get(&w, RK_POD, name), "status"), "reason", json_string("Evicted"));
        struct plan p;
        sync_at(&w, T0 + 5000 * round, &p);
        assert_null(cond_get(status(&w), COND_FAILED));
        assert_int_equal(count(&p, ACT_DELETE, RK_POD), 1);
        plan_free(&p);
        assert_int_equal(json_integer_value(json_object_get(status(&w), "workerRestarts")), round);
        json_t *e = json_array_get(json_object_get(status(&w), "restarts"), 0); /* newest first */
        assert_string_equal(json_string_value(json_object_get(e, "pod")), name);
        assert_string_equal(json_string_value(json_object_get(e, "reason")), "worker_lost");
        assert_non_null(strstr(json_string_value(json_object_get(e, "message")), round == 1 ? "failed" : "was evicted"));
        assert_int_equal(events_named(&w, "WorkerRestarted"), (size_t)round);
        sync_at(&w, T0 + 5000 * round + 1000, &p); /* deleted: re-created, not counted again */
        assert_int_equal(count(&p, ACT_CREATE, RK_POD), 1);
        plan_free(&p);
        set_pod(&w, name, "Running", 1);
        json_object_set_new(json_object_get(get(&w, RK_POD, name), "metadata"), "creationTimestamp",
                            json_string(round == 1 ? "2026-05-28T20:27:00Z" : "2026-05-28T20:27:10Z"));
    }
    /* the launcher's Job retried once: counted, with the launcher's reason */
    add_launcher_pod(&w, "pi-launcher-abcde", "Failed", "worker pi-worker-1: deleted; command exited 1\nphases: {}", 1);
    set_job_cond(&w, "Running", "x", "y", 0, 1);
    sync1(&w, T0 + 20000);
    assert_int_equal(json_integer_value(json_object_get(status(&w), "restartCount")), 1);
    json_t *last = json_array_get(json_object_get(status(&w), "restarts"), 0);
    assert_non_null(strstr(json_string_value(json_object_get(last, "message")), "worker pi-worker-1: deleted"));
    /* a worker someone deleted, Failed in its last seconds (killed at its grace period): the
     * deletion is the cause, not a worker failure: neither counted nor recorded */
    set_pod(&w, "pi-worker-0", "Failed", 0);
    json_object_set_new(json_object_get(get(&w, RK_POD, "pi-worker-0"), "metadata"), "deletionTimestamp",
                        json_string("2026-05-28T20:27:30Z"));
    struct plan pd;
    sync_at(&w, T0 + 22000, &pd);
    assert_int_equal(count(&pd, ACT_DELETE, RK_POD), 0);
    plan_free(&pd);
    assert_null(cond_get(status(&w), COND_FAILED));
    assert_int_equal(json_integer_value(json_object_get(status(&w), "workerRestarts")), 2);
    assert_int_equal(events_named(&w, "WorkerRestarted"), 2);
    set_pod(&w, "pi-worker-0", "Running", 1);
    json_object_del(json_object_get(get(&w, RK_POD, "pi-worker-0"), "metadata"), "deletionTimestamp");
    /* the budget (2) is spent: the next lost worker fails the job */
    set_pod(&w, "pi-worker-1", "Failed", 0);
    sync1(&w, T0 + 25000);
    assert_non_null(strstr(cond_field(&w, COND_FAILED, "message"), "worker pod pi-worker-1 failed"));
    assert_int_equal(json_integer_value(json_object_get(status(&w), "workerRestarts")), 2);
    world_free(&w);
    free(withlimit);
    free(job);
    /* without backoffLimit: failing at once, as before (test_worker_failed_and_evicted) */
}

static void test_suspend_resume(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, job_json);
    run_to_running(&w);
    json_object_set_new(json_object_get(get(&w, RK_MPIJOB, "pi"), "spec"), "runPolicy", json_pack("{s:b}", "suspend", 1));
    struct plan p;
    sync_at(&w, T0 + 5000, &p);
    assert_int_equal(count(&p, ACT_DELETE, RK_POD), 2);
    assert_int_equal(count(&p, ACT_PATCH, RK_JOB), 1);
    plan_free(&p);
    assert_string_equal(cond_field(&w, COND_SUSPENDED, "status"), "True");
    assert_string_equal(cond_field(&w, COND_RUNNING, "status"), "False");
    assert_true(json_is_true(json_object_get(json_object_get(get(&w, RK_JOB, "pi-launcher"), "spec"), "suspend")));
    json_object_del(w.objs, "pods/pi-launcher-abcde");
    json_object_set_new(json_object_get(json_object_get(get(&w, RK_MPIJOB, "pi"), "spec"), "runPolicy"), "suspend",
                        json_false());
    sync_at(&w, T0 + 9000, &p);
    assert_int_equal(count(&p, ACT_CREATE, RK_POD), 2);
    assert_int_equal(count(&p, ACT_PATCH, RK_JOB), 1);
    plan_free(&p);
    assert_string_equal(cond_field(&w, COND_SUSPENDED, "reason"), "MPIJobResumed");
    assert_string_equal(cond_field(&w, COND_SUSPENDED, "status"), "False");
    world_free(&w);
}

/* As upstream: suspending deletes the PodGroup with the workers; resuming recreates it
 * and the launcher Job takes the template's current nodeSelector (keys it no longer has
 * go), tolerations and schedulingGates while it is unsuspended. */
static void test_suspend_resume_gang(void **state)
{
    (void)state;
    struct world w;
    g_gang = "scheduler-plugins-scheduler";
    world_init(&w, job_json);
    json_t *lt =
        json_object_get(json_object_get(json_object_get(json_object_get(json_object_get(get(&w, RK_MPIJOB, "pi"), "spec"),
                                                                        "mpiReplicaSpecs"),
                                                        "Launcher"),
                                        "template"),
                        "spec");
    json_object_set_new(lt, "nodeSelector", json_pack("{s:s, s:s}", "pool", "a", "zone", "z1"));
    run_to_running(&w);
    assert_non_null(get(&w, RK_PODGROUP, "pi"));
    json_t *rp = json_object_get(json_object_get(get(&w, RK_MPIJOB, "pi"), "spec"), "runPolicy");
    json_object_set_new(rp, "suspend", json_true());
    struct plan p;
    sync_at(&w, T0 + 5000, &p);
    assert_int_equal(count(&p, ACT_DELETE, RK_PODGROUP), 1);
    for (size_t i = 0; i < p.n; i++) /* the delete names scheduler-plugins' API group */
        if (p.a[i].kind == ACT_DELETE && p.a[i].res == RK_PODGROUP)
            assert_string_equal(json_string_value(json_object_get(p.a[i].obj, "apiVersion")),
                                "scheduling.x-k8s.io/v1alpha1");
    plan_free(&p);
    assert_null(get(&w, RK_PODGROUP, "pi"));
    sync_at(&w, T0 + 6000, &p); /* suspended: no PodGroup again */
    assert_int_equal(count(&p, ACT_CREATE, RK_PODGROUP), 0);
    plan_free(&p);
    json_object_del(w.objs, "pods/pi-launcher-abcde");
    /* (each status update replaced the stored MPIJob: look it up again) */
    lt = json_object_get(json_object_get(json_object_get(json_object_get(json_object_get(get(&w, RK_MPIJOB, "pi"), "spec"),
                                                                         "mpiReplicaSpecs"),
                                                         "Launcher"),
                                         "template"),
                         "spec");
    rp = json_object_get(json_object_get(get(&w, RK_MPIJOB, "pi"), "spec"), "runPolicy");
    json_object_set_new(lt, "nodeSelector", json_pack("{s:s}", "pool", "b"));
    json_object_set_new(lt, "tolerations", json_pack("[{s:s, s:s}]", "key", "pool", "operator", "Exists"));
    json_object_set_new(lt, "schedulingGates", json_pack("[{s:s}]", "name", "kueue.x-k8s.io/admission"));
    json_object_set_new(rp, "suspend", json_false());
    sync_at(&w, T0 + 9000, &p);
    assert_int_equal(count(&p, ACT_CREATE, RK_PODGROUP), 1);
    plan_free(&p);
    json_t *js =
        json_object_get(json_object_get(json_object_get(get(&w, RK_JOB, "pi-launcher"), "spec"), "template"), "spec");
    json_t *want_ns = json_pack("{s:s}", "pool", "b");
    int ns_ok = json_equal(json_object_get(js, "nodeSelector"), want_ns);
    json_decref(want_ns);
    assert_true(ns_ok);
    assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(js, "tolerations"), 0), "key")),
                        "pool");
    assert_int_equal(json_array_size(json_object_get(js, "schedulingGates")), 1);
    assert_false(json_is_true(json_object_get(json_object_get(get(&w, RK_JOB, "pi-launcher"), "spec"), "suspend")));
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(get(&w, RK_JOB, "pi-launcher"), "spec"), "podReplacementPolicy")),
        "Failed");
    g_gang = NULL;
    world_free(&w);
}

/* Created suspended (Kueue): as upstream, the launcher Job at once, suspended; no
 * workers, no PodGroup, even with WaitForWorkersReady. */
static void test_created_suspended(void **state)
{
    (void)state;
    struct world w;
    g_gang = "volcano";
    world_init(&w, job_json);
    json_t *spec = json_object_get(get(&w, RK_MPIJOB, "pi"), "spec");
    json_object_set_new(json_object_get(spec, "runPolicy"), "suspend", json_true());
    json_object_set_new(spec, "launcherCreationPolicy", json_string("WaitForWorkersReady"));
    struct plan p;
    sync_at(&w, T0, &p);
    assert_int_equal(count(&p, ACT_CREATE, RK_JOB), 1);
    assert_int_equal(count(&p, ACT_CREATE, RK_POD), 0);
    assert_int_equal(count(&p, ACT_CREATE, RK_PODGROUP), 0);
    plan_free(&p);
    assert_true(json_is_true(json_object_get(json_object_get(get(&w, RK_JOB, "pi-launcher"), "spec"), "suspend")));
    g_gang = NULL;
    world_free(&w);
}

/* ttlSecondsAfterFinished, as upstream: the launcher Job carries it (the Job controller
 * deletes a finished Job); a launcher Job the operator suspended (the deadline passed while
 * it ran) never finishes, so the operator deletes it TTL after completionTime. The MPIJob
 * itself is never deleted. */
static void test_deadline_and_ttl(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, job_json);
    json_object_set_new(json_object_get(get(&w, RK_MPIJOB, "pi"), "spec"), "runPolicy",
                        json_pack("{s:s, s:i, s:i}", "cleanPodPolicy", "Running", "activeDeadlineSeconds", 10,
                                  "ttlSecondsAfterFinished", 5));
    struct plan p;
    sync_at(&w, T0, &p);
    assert_int_equal(p.requeue_after_ms, 10000);
    plan_free(&p);
    run_to_running(&w);
    assert_int_equal(json_integer_value(kube_json_at(get(&w, RK_JOB, "pi-launcher"), "spec", "ttlSecondsAfterFinished")), 5);
    sync1(&w, T0 + 10500);
    assert_string_equal(cond_field(&w, COND_FAILED, "reason"), "DeadlineExceeded");
    sync1(&w, T0 + 10800); /* cleanPodPolicy Running: the running launcher's Job is suspended */
    assert_true(json_is_true(kube_json_at(get(&w, RK_JOB, "pi-launcher"), "spec", "suspend")));
    sync_at(&w, T0 + 11000, &p);
    assert_true(p.requeue_after_ms > 0 && p.requeue_after_ms <= 5000);
    assert_int_equal(count(&p, ACT_DELETE, RK_JOB), 0);
    plan_free(&p);
    sync_at(&w, T0 + 16000, &p);
    assert_int_equal(count(&p, ACT_DELETE, RK_JOB), 1);
    assert_int_equal(count(&p, ACT_DELETE, RK_MPIJOB), 0);
    apply(&w, &p);
    plan_free(&p);
    sync_at(&w, T0 + 17000, &p); /* gone: not re-created, nothing else to do */
    assert_int_equal(count(&p, ACT_CREATE, RK_JOB), 0);
    assert_int_equal(count(&p, ACT_DELETE, RK_JOB), 0);
    plan_free(&p);
    assert_string_equal(cond_field(&w, COND_FAILED, "reason"), "DeadlineExceeded");
    world_free(&w);
}

/* A finished launcher Job is the Job controller's to delete (its ttlSecondsAfterFinished);
 * once it is gone the MPIJob stays Succeeded with its Launcher counts, and nothing is
 * re-created. */
static void test_ttl_launcher_gone_keeps_status(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, job_json);
    json_object_set_new(json_object_get(get(&w, RK_MPIJOB, "pi"), "spec"), "runPolicy",
                        json_pack("{s:s, s:i}", "cleanPodPolicy", "None", "ttlSecondsAfterFinished", 0));
    run_to_running(&w);
    add_launcher_pod(&w, "pi-launcher-abcde", "Succeeded", "mpirun finished\nphases: {}", 0);
    set_job_cond(&w, "Complete", "", "", 1, 0);
    struct plan p;
    sync_at(&w, T0 + 5000, &p);
    assert_int_equal(count(&p, ACT_DELETE, RK_JOB), 0); /* the Job controller's */
    apply(&w, &p);
    plan_free(&p);
    assert_non_null(cond_field(&w, COND_SUCCEEDED, "reason"));
    char k[256];
    key(k, sizeof k, RK_JOB, "pi-launcher");
    json_object_del(w.objs, k);
    key(k, sizeof k, RK_POD, "pi-launcher-abcde");
    json_object_del(w.objs, k);
    sync_at(&w, T0 + 6000, &p);
    assert_int_equal(p.n, 0);
    plan_free(&p);
    json_t *l = kube_json_at(get(&w, RK_MPIJOB, "pi"), "status", "replicaStatuses", "Launcher");
    assert_int_equal(json_integer_value(json_object_get(l, "succeeded")), 1);
    world_free(&w);
}

/* A hostfile change patches only the ConfigMap's data, at the cached resourceVersion: labels
 * and annotations others added stay, a data key the job no longer has goes. */
static void test_configmap_patch_keeps_foreign_metadata(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, job_json);
    struct plan p;
    sync_at(&w, T0, &p);
    plan_free(&p);
    json_t *cm = get(&w, RK_CONFIGMAP, "pi-config");
    json_t *md = json_object_get(cm, "metadata");
    json_object_set_new(md, "resourceVersion", json_string("41"));
    json_object_set_new(md, "annotations", json_pack("{s:s}", "team", "ml"));
    json_object_set_new(json_object_get(md, "labels"), "cost-center", json_string("42"));
    json_object_set_new(json_object_get(cm, "data"), "stale", json_string("x"));
    sync_at(&w, T0 + 1000, &p);
    assert_int_equal(count(&p, ACT_PATCH, RK_CONFIGMAP), 1);
    for (size_t i = 0; i < p.n; i++)
        if (p.a[i].kind == ACT_PATCH && p.a[i].res == RK_CONFIGMAP) {
            json_t *patch = p.a[i].obj;
            assert_string_equal(json_string_value(kube_json_at(patch, "metadata", "resourceVersion")), "41");
            assert_null(kube_json_at(patch, "metadata", "labels"));
            assert_true(json_is_null(kube_json_at(patch, "data", "stale")));
        }
    plan_free(&p);
    cm = get(&w, RK_CONFIGMAP, "pi-config");
    assert_string_equal(json_string_value(kube_json_at(cm, "metadata", "annotations", "team")), "ml");
    assert_string_equal(json_string_value(kube_json_at(cm, "metadata", "labels", "cost-center")), "42");
    assert_null(kube_json_at(cm, "data", "stale"));
    assert_non_null(kube_json_at(cm, "data", "hostfile"));
    sync_at(&w, T0 + 2000, &p);
    assert_int_equal(count(&p, ACT_PATCH, RK_CONFIGMAP), 0); /* converged */
    plan_free(&p);
    world_free(&w);
}

static void test_foreign_object(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, job_json);
    put(&w, RK_CONFIGMAP, json_pack("{s:{s:s}}", "metadata", "name", "pi-config"));
    struct plan p;
    sync_at(&w, T0, &p);
    assert_true(p.retry);
    assert_int_equal(count(&p, ACT_CREATE, RK_POD), 0);
    plan_free(&p);
    assert_string_equal(json_string_value(json_array_get(w.events, json_array_size(w.events) - 1)), "ErrResourceExists");
    world_free(&w);
}

static void test_invalid_job_once(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, job_json);
    json_object_set_new(json_object_get(get(&w, RK_MPIJOB, "pi"), "spec"), "slotsPerWorker", json_integer(0));
    struct plan p;
    sync_at(&w, T0, &p);
    assert_true(p.invalid);
    assert_int_equal(count(&p, ACT_CREATE, RK_POD), 0);
    assert_int_equal(count(&p, ACT_EVENT, RK_EVENT), 1);
    plan_free(&p);
    assert_string_equal(cond_field(&w, COND_FAILED, "reason"), "ValidationError");
    assert_non_null(strstr(cond_field(&w, COND_FAILED, "message"), "spec.slotsPerWorker: must be from 1"));
    assert_int_equal(sync1(&w, T0 + 1000), 0); /* no retry loop */
    world_free(&w);
}

static void test_wait_for_workers_ready(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, job_json);
    json_object_set_new(json_object_get(get(&w, RK_MPIJOB, "pi"), "spec"), "launcherCreationPolicy",
                        json_string("WaitForWorkersReady"));
    struct plan p;
    sync_at(&w, T0, &p);
    assert_int_equal(count(&p, ACT_CREATE, RK_JOB), 0);
    plan_free(&p);
    set_pod(&w, "pi-worker-0", "Running", 1);
    set_pod(&w, "pi-worker-1", "Running", 1);
    sync_at(&w, T0 + 1000, &p);
    assert_int_equal(count(&p, ACT_CREATE, RK_JOB), 1);
    plan_free(&p);
    world_free(&w);
}

/* Limited RBAC mode (upstream's ClusterRole): no launcher ServiceAccount, Role or RoleBinding;
 * the launcher Job, without our account, only once every worker is Ready. */
static void test_limited_rbac(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, job_json);
    g_no_rbac = 1;
    struct plan p;
    sync_at(&w, T0, &p);
    assert_int_equal(count(&p, ACT_CREATE, RK_SERVICEACCOUNT), 0);
    assert_int_equal(count(&p, ACT_CREATE, RK_ROLE), 0);
    assert_int_equal(count(&p, ACT_CREATE, RK_ROLEBINDING), 0);
    assert_int_equal(count(&p, ACT_CREATE, RK_CONFIGMAP), 1);
    assert_int_equal(count(&p, ACT_CREATE, RK_POD), 2);
    assert_int_equal(count(&p, ACT_CREATE, RK_JOB), 0);
    plan_free(&p);
    set_pod(&w, "pi-worker-0", "Running", 1);
    sync_at(&w, T0 + 1000, &p);
    assert_int_equal(count(&p, ACT_CREATE, RK_JOB), 0);
    plan_free(&p);
    set_pod(&w, "pi-worker-1", "Running", 1);
    sync_at(&w, T0 + 2000, &p);
    assert_int_equal(count(&p, ACT_CREATE, RK_JOB), 1);
    plan_free(&p);
    g_no_rbac = 0;
    json_t *lj = get(&w, RK_JOB, "pi-launcher");
    assert_non_null(lj);
    assert_null(json_object_get(json_object_get(json_object_get(json_object_get(lj, "spec"), "template"), "spec"),
                                "serviceAccountName"));
    world_free(&w);
    /* an exec-transport job cannot run so: Failed once, naming why, nothing created */
    world_init(&w, job_json);
    json_object_set_new(json_object_get(get(&w, RK_MPIJOB, "pi"), "metadata"), "annotations",
                        json_pack("{s:s}", MPIK8S_ANN_TRANSPORT, "exec"));
    g_no_rbac = 1;
    sync_at(&w, T0, &p);
    assert_int_equal(count(&p, ACT_CREATE, RK_POD), 0);
    assert_int_equal(count(&p, ACT_CREATE, RK_CONFIGMAP), 0);
    plan_free(&p);
    assert_string_equal(cond_field(&w, COND_FAILED, "status"), "True");
    assert_non_null(strstr(cond_field(&w, COND_FAILED, "message"), "the exec transport needs API access"));
    assert_int_equal(sync1(&w, T0 + 1000), 0);
    g_no_rbac = 0;
    world_free(&w);
}

static void test_managed_externally(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, job_json);
    json_object_set_new(json_object_get(get(&w, RK_MPIJOB, "pi"), "spec"), "runPolicy",
                        json_pack("{s:s}", "managedBy", "kueue.x-k8s.io/multikueue"));
    assert_int_equal(sync1(&w, T0), 0);
    world_free(&w);
}

/* A pod that cannot start, as the scheduler (msg != NULL) or the kubelet (image) leaves it. */
static void set_blocked(struct world *w, const char *name, const char *sched_msg, const char *image)
{
    json_t *p = get(w, RK_POD, name);
    assert_non_null(p);
    json_t *st = json_pack("{s:s, s:[{s:s, s:s, s:s}]}", "phase", "Pending", "conditions", "type", "PodScheduled", "status",
                           sched_msg ? "False" : "True", "lastTransitionTime", "2026-05-28T20:26:42Z");
    if (sched_msg) {
        json_t *c = json_array_get(json_object_get(st, "conditions"), 0);
        json_object_set_new(c, "reason", json_string("Unschedulable"));
        json_object_set_new(c, "message", json_string(sched_msg));
    } else {
        char m[200];
        snprintf(m, sizeof m, "Back-off pulling image \"%s\"", image);
        json_object_set_new(st, "containerStatuses",
                            json_pack("[{s:s, s:s, s:{s:{s:s, s:s}}}]", "name", "l", "image", image, "state", "waiting",
                                      "reason", "ImagePullBackOff", "message", m));
    }
    json_object_set_new(p, "status", st);
}

/* A Pending, scheduled pod whose container waits for reason. */
static void set_waiting(struct world *w, const char *name, const char *reason)
{
    json_t *p = get(w, RK_POD, name);
    assert_non_null(p);
    json_object_set_new(p, "status",
                        json_pack("{s:s, s:[{s:s, s:s}], s:[{s:s, s:s, s:{s:{s:s}}}]}", "phase", "Pending", "conditions",
                                  "type", "PodScheduled", "status", "True", "containerStatuses", "name", "w", "image",
                                  "example.com/w:1", "state", "waiting", "reason", reason));
}

static size_t events_named(struct world *w, const char *reason)
{
    size_t i, n = 0;
    json_t *e;
    json_array_foreach(w->events, i, e)
        n += strcmp(json_string_value(e), reason) == 0;
    return n;
}

/* Every waiting reason of the shared classifier (lib/podstuck.c): a worker waiting for a blocking
 * one makes the job Blocked (ErrImagePull as ImagePullBackOff, the two alternate), others do not. */
static void test_blocked_each_reason(void **state)
{
    (void)state;
    static const struct {
        const char *reason, *blocked;
    } want[] = {
        { "ContainerCreating", NULL },
        { "PodInitializing", NULL },
        { "CrashLoopBackOff", NULL },
        { "ErrImagePull", "ImagePullBackOff" },
        { "ImagePullBackOff", "ImagePullBackOff" },
        { "ErrImageNeverPull", "ErrImageNeverPull" },
        { "InvalidImageName", "InvalidImageName" },
        { "CreateContainerConfigError", "CreateContainerConfigError" },
        { "CreateContainerError", "CreateContainerError" },
        { "RunContainerError", "RunContainerError" },
        { "SomethingNew", NULL },
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        struct world w;
        world_init(&w, job_json);
        sync1(&w, T0);
        set_pod(&w, "pi-worker-0", "Running", 1);
        set_waiting(&w, "pi-worker-1", want[i].reason);
        sync1(&w, T0 + 2000);
        const char *st = cond_field(&w, COND_BLOCKED, "status"), *r = cond_field(&w, COND_BLOCKED, "reason");
        if (want[i].blocked && (!st || strcmp(st, "True") != 0 || !r || strcmp(r, want[i].blocked) != 0))
            fail_msg("%s: Blocked %s/%s, want True/%s", want[i].reason, st ? st : "-", r ? r : "-", want[i].blocked);
        if (!want[i].blocked && st)
            fail_msg("%s: Blocked %s/%s, want none", want[i].reason, st, r ? r : "-");
        world_free(&w);
    }
}

static void test_blocked_condition(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, job_json);
    sync1(&w, T0);
    set_pod(&w, "pi-worker-0", "Running", 1);
    set_blocked(&w, "pi-worker-1", "0/1 nodes are available: 1 Insufficient nvidia.com/gpu.", NULL);
    struct plan p;
    sync_at(&w, T0 + 2000, &p);
    assert_int_equal(count(&p, ACT_STATUS, RK_MPIJOB), 1);
    plan_free(&p);
    assert_string_equal(cond_field(&w, COND_BLOCKED, "status"), "True");
    assert_string_equal(cond_field(&w, COND_BLOCKED, "reason"), "Unschedulable");
    assert_string_equal(cond_field(&w, COND_BLOCKED, "message"),
                        "MPIJob default/pi is blocked: worker pod pi-worker-1: Unschedulable: 0/1 nodes are "
                        "available: 1 Insufficient nvidia.com/gpu.");
    assert_int_equal(events_named(&w, "Unschedulable"), 1);
    /* the State column (the last condition) still shows the phase */
    json_t *conds = json_object_get(status(&w), "conditions");
    assert_string_equal(json_string_value(json_object_get(json_array_get(conds, json_array_size(conds) - 1), "type")),
                        COND_CREATED);
    /* the scheduler's message changes, the pod and reason do not: no write, no Event */
    set_blocked(&w, "pi-worker-1", "0/2 nodes are available: 2 Insufficient nvidia.com/gpu.", NULL);
    assert_int_equal(sync1(&w, T0 + 3000), 0);
    assert_int_equal(events_named(&w, "Unschedulable"), 1);
    /* the launcher cannot pull its image: it comes first, and fails the job at the worker timeout */
    add_launcher_pod(&w, "pi-launcher-abcde", "Pending", NULL, 0);
    set_blocked(&w, "pi-launcher-abcde", NULL, "example.com/nope:1");
    sync_at(&w, T0 + 4000, &p);
    assert_int_equal(p.failed, 0);
    assert_true(p.requeue_after_ms > 0 && p.requeue_after_ms <= 900 * 1000);
    plan_free(&p);
    assert_string_equal(cond_field(&w, COND_BLOCKED, "reason"), "ImagePullBackOff");
    assert_non_null(strstr(cond_field(&w, COND_BLOCKED, "message"), "launcher pod pi-launcher-abcde: container l: "
                                                                    "ImagePullBackOff: Back-off pulling image "
                                                                    "\"example.com/nope:1\""));
    assert_int_equal(sync1(&w, T0 + 5000), 0);
    sync_at(&w, T0 + 4000 + 900 * 1000, &p);
    assert_int_equal(p.failed, 1);
    plan_free(&p);
    assert_string_equal(cond_field(&w, COND_FAILED, "message"),
                        "MPIJob default/pi has failed: launcher pod pi-launcher-abcde could not start within 900s "
                        "(mpi-k8s.io/worker-timeout): container l: ImagePullBackOff: Back-off pulling image "
                        "\"example.com/nope:1\"");
    world_free(&w);

    /* blocked, then running: Blocked=False once, and a job that never blocked has no Blocked */
    world_init(&w, job_json);
    sync1(&w, T0);
    set_blocked(&w, "pi-worker-0", "0/1 nodes are available: 1 Insufficient cpu.", NULL);
    sync1(&w, T0 + 1000);
    set_pod(&w, "pi-worker-0", "Running", 1);
    set_pod(&w, "pi-worker-1", "Running", 1);
    add_launcher_pod(&w, "pi-launcher-abcde", "Running", NULL, 0);
    sync1(&w, T0 + 2000);
    assert_string_equal(cond_field(&w, COND_BLOCKED, "status"), "False");
    assert_string_equal(cond_field(&w, COND_BLOCKED, "reason"), R_UNBLOCKED);
    assert_string_equal(cond_field(&w, COND_RUNNING, "status"), "True");
    assert_int_equal(sync1(&w, T0 + 3000), 0);
    world_free(&w);
    world_init(&w, job_json);
    run_to_running(&w);
    assert_null(cond_get(status(&w), COND_BLOCKED));
    world_free(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_new_job_plan),
        cmocka_unit_test(test_limited_rbac),
        cmocka_unit_test(test_running_then_succeeded),
        cmocka_unit_test(test_pruned_status_key_not_rewritten),
        cmocka_unit_test(test_launcher_failed_message),
        cmocka_unit_test(test_rank_failure),
        cmocka_unit_test(test_rank_failure_of_ignored_attempt),
        cmocka_unit_test(test_worker_restart),
        cmocka_unit_test(test_restarting),
        cmocka_unit_test(test_restart_in_place),
        cmocka_unit_test(test_restart_init_container),
        cmocka_unit_test(test_restart_launcher_deleted),
        cmocka_unit_test(test_worker_failed_and_evicted),
        cmocka_unit_test(test_worker_preempted),
        cmocka_unit_test(test_suspend_resume),
        cmocka_unit_test(test_suspend_resume_gang),
        cmocka_unit_test(test_created_suspended),
        cmocka_unit_test(test_deadline_and_ttl),
        cmocka_unit_test(test_ttl_launcher_gone_keeps_status),
        cmocka_unit_test(test_configmap_patch_keeps_foreign_metadata),
        cmocka_unit_test(test_foreign_object),
        cmocka_unit_test(test_invalid_job_once),
        cmocka_unit_test(test_wait_for_workers_ready),
        cmocka_unit_test(test_managed_externally),
        cmocka_unit_test(test_launcher_gone_keeps_reason),
        cmocka_unit_test(test_killed_rerun_keeps_reason),
        cmocka_unit_test(test_workers_not_ready_fails_at_once),
        cmocka_unit_test(test_launcher_failure_survives_restart),
        cmocka_unit_test(test_launcher_failed_waits_for_record),
        cmocka_unit_test(test_blocked_condition),
        cmocka_unit_test(test_blocked_each_reason),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
