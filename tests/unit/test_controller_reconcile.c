/* test_controller_reconcile.c - the sync as a pure function over a small fake cluster, one table
 * of cases: the plan for a new job, steady state (no API call when nothing changed),
 * Running/Succeeded as the seed shows, cleanPodPolicy, launcher failure with the agent's message,
 * worker failure and eviction, suspend and resume, activeDeadlineSeconds, TTL, foreign objects,
 * invalid specs. A case is a world, a setup, one sync checked against the row's expect, and, for
 * the multi-step ones, a story whose further syncs are checked the same way (step). */
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

/* setup: the MPIJob merge-patched with arg (JSON text), as a user's edit would change it. */
static void patch_job(struct world *w, const char *arg)
{
    json_t *p = json_loads(arg, 0, NULL);
    assert_non_null(p);
    merge_patch(get(w, RK_MPIJOB, "pi"), p);
    json_decref(p);
}

/* The seed job with patch (may be NULL) merged, nothing else yet. */
static void world_init(struct world *w, const char *patch)
{
    w->objs = json_object();
    w->events = json_array();
    w->event_msgs = json_array();
    w->uid = 0;
    w->lmem = launcher_memory_new();
    json_object_set_new(w->objs, "mpijobs/pi", json_loads(job_json, 0, NULL));
    if (patch)
        patch_job(w, patch);
}

/* The operator restarts: its memory of launcher pods is empty. */
static void forget_launchers(struct world *w)
{
    launcher_memory_free(w->lmem);
    w->lmem = launcher_memory_new();
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

/* The value at path below v, a JSON Pointer without its leading "/" ("restarts/0/key"), NULL if none. */
static json_t *at_path(json_t *v, const char *path)
{
    char *copy = strdup(path), *save = NULL;
    assert_non_null(copy);
    for (char *seg = strtok_r(copy, "/", &save); seg && v; seg = strtok_r(NULL, "/", &save))
        v = json_is_array(v) ? json_array_get(v, strtoul(seg, NULL, 10)) : json_object_get(v, seg);
    free(copy);
    return v;
}

/* One check of the world after a sync. what: a condition type of the MPIJob's status, an object's
 * "kind/name" (it has a '/'), or NULL: the status itself; path (may be NULL: what itself) leads
 * from there to the value. how: '=' the string v, '~' a string containing v, '!' a string without
 * v, 'J' equal to the JSON text v, 'N' an array or object of v members, '+' present, '-' absent;
 * 'E' v Events named path, 'M' the last Event named path has a message with v, at most 1 KiB. */
struct want {
    char how;
    const char *what, *path, *v;
};

/* One action count: n actions of kind k on resource r (CNT marks the entry as set). */
struct count {
    enum act_kind k;
    enum res_kind r;
    size_t n;
    int set;
};
#define CNT(k, r, n)                                                                                                        \
    {                                                                                                                       \
        k, r, n, 1                                                                                                          \
    }

/* What one sync plans and leaves. The plan's counters are always checked (0 unless given); the
 * rest when set: requeue within [rq_lo, rq_hi], no action at all, the failure metric's reason, a
 * phase first recorded, the one restart reason recorded, action counts, world checks, and quiet:
 * a further sync at T0 + quiet plans nothing. */
struct expect {
    int created, succeeded, failed, restarted, retry, invalid;
    int64_t rq_lo, rq_hi;
    int none;
    const char *fail_reason, *phase, *restart_reason;
    struct count n[10];
    struct want s[9];
    int64_t quiet;
};

static const char *const act_names[] = { "create", "patch", "delete", "status", "event", "ssh-secret" };

static void check_want(struct world *w, const struct want *s)
{
    json_t *base = !s->what               ? status(w)
                   : strchr(s->what, '/') ? json_object_get(w->objs, s->what)
                                          : cond_get(status(w), s->what);
    json_t *v = s->path && base ? at_path(base, s->path) : base;
    const char *str = json_string_value(v);
    json_t *j = s->how == 'J' ? json_loads(s->v, JSON_DECODE_ANY, NULL) : NULL;
    size_t i, n = 0;
    int ok = 0;
    switch (s->how) {
    case '=': ok = str && strcmp(str, s->v) == 0; break;
    case '~': ok = str && strstr(str, s->v); break;
    case '!': ok = str && !strstr(str, s->v); break;
    case 'J': ok = j && v && json_equal(j, v); break;
    case 'N': ok = (json_is_array(v) ? json_array_size(v) : json_object_size(v)) == strtoul(s->v, NULL, 10); break;
    case '+': ok = v != NULL; break;
    case '-': ok = v == NULL; break;
    case 'E': ok = events_named(w, s->path) == strtoul(s->v, NULL, 10); break;
    case 'M':
        for (i = 0; i < json_array_size(w->events); i++)
            if (strcmp(json_string_value(json_array_get(w->events, i)), s->path) == 0) {
                str = json_string_value(json_array_get(w->event_msgs, i));
                n++;
            }
        ok = n && strstr(str, s->v) && strlen(str) <= 1024;
        break;
    }
    json_decref(j);
    if (!ok && s->how == 'E')
        fail_msg("E %s: %zu Events, want %s", s->path, events_named(w, s->path), s->v);
    if (!ok)
        fail_msg("%c %s %s %s: found %s", s->how, s->what ? s->what : "status", s->path ? s->path : "", s->v ? s->v : "",
                 v     ? json_dumps(v, JSON_ENCODE_ANY)
                 : str ? str
                       : "nothing");
}

/* Checks a list of wants ended by one with how 0. */
static void wants(struct world *w, const struct want *s)
{
    for (; s->how; s++)
        check_want(w, s);
}

static void check(struct world *w, struct plan *p, const struct expect *x)
{
    assert_int_equal(p->created, x->created);
    assert_int_equal(p->succeeded, x->succeeded);
    assert_int_equal(p->failed, x->failed);
    assert_int_equal(p->restarted, x->restarted);
    assert_int_equal(p->retry, x->retry);
    assert_int_equal(p->invalid, x->invalid);
    if (x->rq_hi)
        assert_in_range(p->requeue_after_ms, x->rq_lo, x->rq_hi);
    if (x->none)
        assert_int_equal(p->n, 0);
    if (x->fail_reason)
        assert_string_equal(p->fail_reason, x->fail_reason);
    if (x->phase)
        assert_non_null(json_object_get(p->new_phases, x->phase));
    if (x->restart_reason) {
        assert_int_equal(json_array_size(p->restart_reasons), 1);
        assert_string_equal(json_string_value(json_array_get(p->restart_reasons, 0)), x->restart_reason);
    }
    for (const struct count *c = x->n; c->set; c++)
        if (count(p, c->k, c->r) != c->n)
            fail_msg("%s %s: %zu, want %zu", act_names[c->k], kind_name(c->r), count(p, c->k, c->r), c->n);
    wants(w, x->s);
    if (x->quiet)
        assert_int_equal(sync1(w, T0 + x->quiet), 0);
}

/* One sync at T0 + at, checked against x. */
static void step(struct world *w, int64_t at, const struct expect *x)
{
    struct plan p;
    sync_at(w, T0 + at, &p);
    check(w, &p, x);
    plan_free(&p);
}

#define BACKOFF_FAILED "MPIJob default/pi has failed: BackoffLimitExceeded: Job has reached the specified backoff limit"
#define LIST_FAILED "launcher pod pi-launcher-abcde: init failed: could not list the worker pods"

/* ---- setups: the state a case's sync sees (arg: the row's) ---- */

static void launcher_pod_succeeded(struct world *w, const char *arg)
{
    add_launcher_pod(w, "pi-launcher-abcde", "Succeeded", arg, 0);
}

static void launcher_succeeded(struct world *w, const char *arg)
{
    launcher_pod_succeeded(w, arg);
    set_job_cond(w, "Complete", "", "", 1, 0);
}

/* Steady once running (the hostfile lists both workers, a sync changes nothing), then the
 * launcher succeeds with the termination message arg. */
static void steady_then_succeeded(struct world *w, const char *arg)
{
    wants(w, (const struct want[]){
                 { '~', "configmaps/pi-config", "data/discover_hosts.sh", "pi-worker-1.pi.default.svc:1" }, { 0 } });
    assert_int_equal(sync1(w, T0 + 4000), 0);
    launcher_succeeded(w, arg);
}

static void launcher_failed(struct world *w, const char *arg)
{
    add_launcher_pod(w, "pi-launcher-abcde", "Failed", arg, 1);
    set_job_cond(w, "Failed", "BackoffLimitExceeded", "Job has reached the specified backoff limit", 0, 7);
}

/* The agent's failure line arg after a rank's failure: status.rankFailure (kept), a RankFailed /
 * RankOOMKilled Event with the last lines after the Failed one, the failure metric's reason. */
static void rank_failed(struct world *w, const char *arg)
{
    char *msg = NULL;
    assert_true(asprintf(&msg, "rank 1 on pod pi-worker-1 (node n1) failed; command exited 3\nphases: {}\n%s", arg) > 0);
    add_launcher_pod(w, "pi-launcher-abcde", "Failed", msg, 3);
    free(msg);
    set_job_cond(w, "Failed", "BackoffLimitExceeded", "Job has reached the specified backoff limit", 0, 1);
}

/* A long lastLines: the Event keeps the phrase and the end of the lines, 1 KiB in all. */
static void rank_failed_long(struct world *w, const char *arg)
{
    (void)arg;
    char *big = malloc(3000), *f = NULL;
    assert_non_null(big);
    for (int i = 0; i < 2998; i++) /* JSON-escaped line ends: backslash, n */
        big[i] = i % 50 == 48 ? '\\' : i % 50 == 49 ? 'n' : 'a' + i % 26;
    big[2998] = '\0';
    assert_true(asprintf(&f,
                         "failure: {\"reason\":\"signal\",\"signal\":\"SIGSEGV\",\"message\":\"rank 1 was killed "
                         "by SIGSEGV\",\"lastLines\":\"%sEND\"}",
                         big) > 0);
    rank_failed(w, f);
    free(f);
    free(big);
}

/* A failure the Job does not count (podFailurePolicy Ignore) and a rerun that succeeded, both
 * first seen by the same sync (the rerun ended before the operator looked). */
static void ignored_then_succeeded(struct world *w, const char *arg)
{
    (void)arg;
    add_launcher_pod(w, "pi-launcher-first", "Failed",
                     "rank 0 on pod pi-worker-0 (node n1) failed; command exited 75\nphases: {}\n"
                     "failure: {\"reason\":\"exit_code\",\"rank\":0,\"pod\":\"pi-worker-0\",\"exitCode\":75,"
                     "\"message\":\"rank 0 on pod pi-worker-0 (node n1) exited with code 75\"}",
                     75);
    add_launcher_pod(w, "pi-launcher-second", "Succeeded", "mpirun finished\nphases: {}", 0);
    json_object_set_new(kube_json_at(get(w, RK_POD, "pi-launcher-second"), "metadata"), "creationTimestamp",
                        json_string("2026-05-28T20:26:52Z"));
    set_job_cond(w, "Complete", "", "", 1, 0);
}

/* The Job's Failed condition at T0 + 5 s, the cached launcher pod still Running (the pod watch
 * has not delivered its terminated state yet). */
static void job_failed_first(struct world *w, const char *arg)
{
    (void)arg;
    char at[40];
    kube_time_format_ms(T0 + 5000, at, sizeof at);
    set_job_cond(w, "Failed", "BackoffLimitExceeded", "Job has reached the specified backoff limit", 0, 1);
    json_t *cd = json_array_get(kube_json_at(get(w, RK_JOB, "pi-launcher"), "status", "conditions"), 0);
    json_object_set_new(cd, "lastTransitionTime", json_string(at));
}

/* The launcher's init container failed with the agent's record arg (exit 1), restarting. */
static void launcher_init_failed(struct world *w, const char *arg)
{
    add_launcher_init_failed(w, "pi-launcher-abcde", "2026-05-28T20:26:42Z", 1, arg, 1);
}

/* The Job gives up: it deletes the launcher pod. */
static void launcher_gave_up(struct world *w, const char *arg)
{
    (void)arg;
    json_object_del(w->objs, "pods/pi-launcher-abcde");
    set_job_cond(w, "Failed", "BackoffLimitExceeded", "Job has reached the specified backoff limit", 0, 0);
}

static void launcher_init_failed_gone(struct world *w, const char *arg)
{
    launcher_init_failed(w, arg);
    launcher_gave_up(w, NULL);
}

/* A remembered launcher pod older than the MPIJob (an earlier job of the same name). */
static void old_launcher_gone(struct world *w, const char *arg)
{
    (void)arg;
    add_launcher_init_failed(w, "pi-launcher-old", "2026-05-28T20:00:00Z", 1, "init failed: old\nphases: {}", 0);
    json_object_del(w->objs, "pods/pi-launcher-old");
    json_object_del(w->objs, "pods/pi-launcher-abcde");
    set_job_cond(w, "Failed", "BackoffLimitExceeded", "Job has reached the specified backoff limit", 0, 1);
}

/* The init container failed with the agent's record, the kubelet ran it again (OnFailure) and the
 * Job, giving up, killed that rerun (137, no message); seen on the real cluster: e2e 18. */
static void killed_rerun(struct world *w, const char *arg)
{
    (void)arg;
    json_t *p =
        json_pack("{s:{s:s, s:s, s:{s:s, s:s, s:s}}, s:{s:s}}", "metadata", "name", "pi-launcher-abcde", "creationTimestamp",
                  "2026-05-28T20:26:42Z", "labels", "training.kubeflow.org/job-role", "launcher", "mpi_role_type",
                  "launcher", "training.kubeflow.org/job-name", "pi", "status", "phase", "Pending");
    json_t *first = json_pack("{s:i, s:s, s:s}", "exitCode", 1, "reason", "Error", "message",
                              "init failed: ssh DNS: cannot resolve host pi-worker-0\nphases: {}");
    json_t *st = json_pack("{s:s, s:{s:{s:i, s:s}}, s:{s:o}, s:i}", "name", "mpi-agent-init", "state", "terminated",
                           "exitCode", 137, "reason", "Error", "lastState", "terminated", first, "restartCount", 1);
    json_object_set_new(json_object_get(p, "status"), "initContainerStatuses", json_pack("[o]", st));
    put(w, RK_POD, p);
    set_job_cond(w, "Failed", "BackoffLimitExceeded", "Job has reached the specified backoff limit", 0, 0);
}

/* The agent's init exits 3 when the workers decided its wait. */
static void workers_not_ready(struct world *w, const char *arg)
{
    (void)arg;
    set_pod(w, "pi-worker-0", "Running", 1);
    set_pod(w, "pi-worker-1", "Pending", 0);
    add_launcher_init_failed(w, "pi-launcher-abcde", "2026-05-28T20:26:42Z", 3,
                             "init failed: timed out after 10 s waiting for workers (1/2 ready): pi-worker-1: phase "
                             "Pending: container w: ImagePullBackOff\nphases: {}",
                             1);
}

/* The launcher Job's status: n pods failed. */
static void job_failed_pods(struct world *w, int n)
{
    json_object_set_new(get(w, RK_JOB, "pi-launcher"), "status", json_pack("{s:i}", "failed", n));
}

static void launcher_failed_no_record(struct world *w, const char *arg)
{
    (void)arg;
    add_launcher_pod(w, "pi-launcher-abcde", "Failed", NULL, 1);
    job_failed_pods(w, 1);
}

/* restartPolicy Never: the launcher pod deleted, the Job counts it failed. */
static void launcher_deleted(struct world *w, const char *arg)
{
    (void)arg;
    json_object_set_new(kube_json_at(get(w, RK_POD, "pi-launcher-abcde"), "metadata"), "deletionTimestamp",
                        json_string("2026-05-28T20:26:50Z"));
    job_failed_pods(w, 1);
}

/* The launcher container restarted in place once (OnFailure), not ready, arg its last message. */
static void launcher_restarted(struct world *w, const char *arg) { set_launcher_restarted(w, 1, 0, arg); }

/* The launcher's init container rerun in place (OnFailure), the bundle not delivered. */
static void init_container_restarted(struct world *w, const char *arg)
{
    (void)arg;
    json_t *p = get(w, RK_POD, "pi-launcher-abcde");
    assert_non_null(p);
    json_t *last = json_pack("{s:i, s:s, s:s}", "exitCode", 1, "reason", "Error", "message",
                             "cannot deliver the bundle to /opt/kube: No space left on device\nphases: {}");
    json_object_set_new(p, "status",
                        json_pack("{s:s, s:[{s:s, s:{s:{}}, s:{s:o}, s:i}], s:[{s:s, s:{s:{}}, s:i}]}", "phase", "Pending",
                                  "initContainerStatuses", "name", "mpi-agent-init", "state", "running", "lastState",
                                  "terminated", last, "restartCount", 1, "containerStatuses", "name", "l", "state",
                                  "waiting", "restartCount", 0));
}

static void worker_failed(struct world *w, const char *arg) { set_pod(w, arg, "Failed", 0); }

static void worker_evicted(struct world *w, const char *arg)
{
    worker_failed(w, arg);
    json_object_set_new(kube_json_at(get(w, RK_POD, arg), "status"), "reason", json_string("Evicted"));
}

static void worker_oom(struct world *w, const char *arg)
{
    worker_failed(w, arg);
    json_object_set_new(kube_json_at(get(w, RK_POD, arg), "status"), "message", json_string("OOMKilled"));
}

/* A worker the scheduler preempted (phase Failed, DisruptionTarget PreemptionByScheduler at T0 +
 * 5 s, as the kubelet leaves it before the pod is gone). */
static void worker_preempted(struct world *w, const char *arg)
{
    worker_failed(w, arg);
    json_array_append_new(kube_json_at(get(w, RK_POD, arg), "status", "conditions"),
                          json_pack("{s:s, s:s, s:s, s:s, s:s}", "type", "DisruptionTarget", "status", "True", "reason",
                                    "PreemptionByScheduler", "message",
                                    "default-scheduler: preempting to accommodate a higher priority pod",
                                    "lastTransitionTime", "2026-05-28T20:26:45Z"));
}

/* Gang scheduling made the PodGroup; then the job is suspended (arg: the patch). */
static void gang_suspended(struct world *w, const char *arg)
{
    wants(w, (const struct want[]){ { '+', "podgroups/pi", NULL, NULL }, { 0 } });
    patch_job(w, arg);
}

/* A hostfile change ahead, and labels, annotations and a data key others added to the ConfigMap. */
static void configmap_edited(struct world *w, const char *arg)
{
    (void)arg;
    json_t *cm = get(w, RK_CONFIGMAP, "pi-config");
    json_t *md = json_object_get(cm, "metadata");
    json_object_set_new(md, "resourceVersion", json_string("41"));
    json_object_set_new(md, "annotations", json_pack("{s:s}", "team", "ml"));
    json_object_set_new(json_object_get(md, "labels"), "cost-center", json_string("42"));
    json_object_set_new(json_object_get(cm, "data"), "stale", json_string("x"));
}

/* A ConfigMap of the job's name that the job does not own. */
static void foreign_configmap(struct world *w, const char *arg)
{
    (void)arg;
    put(w, RK_CONFIGMAP, json_pack("{s:{s:s}}", "metadata", "name", "pi-config"));
}

/* Worker 0 runs, worker 1's container waits for reason arg. */
static void worker_waiting(struct world *w, const char *arg)
{
    set_pod(w, "pi-worker-0", "Running", 1);
    set_waiting(w, "pi-worker-1", arg);
}

/* Worker 0 runs, the scheduler cannot place worker 1 (arg: its message). */
static void worker_unschedulable(struct world *w, const char *arg)
{
    set_pod(w, "pi-worker-0", "Running", 1);
    set_blocked(w, "pi-worker-1", arg, NULL);
}

/* Blocked once (a sync at T0 + 1 s), then everything runs. */
static void blocked_then_running(struct world *w, const char *arg)
{
    set_blocked(w, "pi-worker-0", arg, NULL);
    sync1(w, T0 + 1000);
    set_pod(w, "pi-worker-0", "Running", 1);
    set_pod(w, "pi-worker-1", "Running", 1);
    add_launcher_pod(w, "pi-launcher-abcde", "Running", NULL, 0);
}

/* ---- stories: the steps after a case's first sync (p: that sync's plan, empty without one) ---- */

/* Limited RBAC: the launcher Job, without our account, only once every worker is Ready. */
static void rbac_waits_for_workers(struct world *w, struct plan *p)
{
    (void)p;
    set_pod(w, "pi-worker-0", "Running", 1);
    step(w, 1000, &(struct expect){ .n = { CNT(ACT_CREATE, RK_JOB, 0) } });
    set_pod(w, "pi-worker-1", "Running", 1);
    step(w, 2000,
         &(struct expect){
             .n = { CNT(ACT_CREATE, RK_JOB, 1) },
             .s = { { '+', "jobs/pi-launcher" }, { '-', "jobs/pi-launcher", "spec/template/spec/serviceAccountName" } } });
}

/* cleanPodPolicy Running: the running workers go, then Worker: {}. */
static void clean_after_success(struct world *w, struct plan *p)
{
    (void)p;
    step(w, 81000, &(struct expect){ .n = { CNT(ACT_DELETE, RK_POD, 2) } });
    step(w, 82000,
         &(struct expect){
             .s = { { 'N', NULL, "replicaStatuses/Worker", "0" }, { 'J', NULL, "replicaStatuses/Launcher/succeeded", "1" } },
             .quiet = 90000 });
}

/* Under a CRD whose status schema lacks launchPhases (upstream's), the API server drops it from
 * every status update: once an update's answer showed that, a sync whose only difference is that
 * key writes nothing (bench/peer_operator.sh saw a no-op PUT a sync); a real change still writes. */
static void pruned_key_not_rewritten(struct world *w, struct plan *p)
{
    (void)p;
    wants(w, (const struct want[]){ { '+', NULL, "launchPhases", NULL }, { 0 } });
    json_t *sent = json_deep_copy(status(w));
    json_object_del(status(w), "launchPhases");                                /* as the server stores it */
    step(w, 4000, &(struct expect){ .n = { CNT(ACT_STATUS, RK_MPIJOB, 1) } }); /* not known to be pruned yet */
    json_object_del(status(w), "launchPhases");
    status_pruned_note(sent, status(w));
    json_decref(sent);
    step(w, 4500, &(struct expect){ .n = { CNT(ACT_STATUS, RK_MPIJOB, 0) } });
    set_pod(w, "pi-worker-1", "Failed", 0);
    step(w, 5000, &(struct expect){ .failed = 1, .n = { CNT(ACT_STATUS, RK_MPIJOB, 1) } });
    status_pruned_reset();
}

/* The pod event arrives: the Failed condition names the agent's reason. */
static void record_arrives(struct world *w, struct plan *p)
{
    (void)p;
    add_launcher_pod(w, "pi-launcher-abcde", "Failed", "worker pi-worker-1 is gone (deleted)\nphases: {}", 1);
    step(w, 5300,
         &(struct expect){
             .failed = 1,
             .s = { { '=', COND_FAILED, "message",
                      BACKOFF_FAILED "; launcher pod pi-launcher-abcde: worker pi-worker-1 is gone (deleted)" } } });
}

/* The operator restarts (its memory is empty) and the Job deletes the pod as it gives up. */
static void restart_then_gave_up(struct world *w, struct plan *p)
{
    (void)p;
    forget_launchers(w);
    launcher_gave_up(w, NULL);
    step(w, 5000,
         &(struct expect){ .failed = 1, .s = { { '=', COND_FAILED, "message", BACKOFF_FAILED "; " LIST_FAILED } } });
}

/* cleanPodPolicy Running: the launcher Job is suspended. */
static void launcher_job_suspended(struct world *w, struct plan *p)
{
    (void)p;
    step(w, 13000, &(struct expect){ .n = { CNT(ACT_PATCH, RK_JOB, 1) } });
}

/* Recorded once (also after an operator restart); Running again when the container runs; a second
 * restart; a job that then Succeeds keeps its restart history. */
static void restart_once_then_again(struct world *w, struct plan *p)
{
    (void)p;
    step(w, 6000, &(struct expect){ 0 });
    forget_launchers(w);
    step(w, 7000, &(struct expect){ .s = { { 'E', NULL, "MPIJobRestarting", "1" } } });
    set_launcher_restarted(w, 1, 1, "rank 1 ...");
    step(w, 8000,
         &(struct expect){ .s = { { '=', COND_RUNNING, "status", "True" },
                                  { '=', COND_RUNNING, "message", "MPIJob default/pi is running (run 2 of 7)." },
                                  { '-', COND_RESTARTING } } });
    set_launcher_restarted(w, 2, 0, "worker pi-worker-1: deleted; command exited 1\nfailure: {\"reason\":\"worker_lost\"}");
    step(w, 9000,
         &(struct expect){ .restarted = 1,
                           .s = { { '~', COND_RESTARTING, "message",
                                    "(run 3 of 7): launcher pod pi-launcher-abcde: worker pi-worker-1: deleted" },
                                  { 'J', NULL, "restartCount", "2" },
                                  { 'N', NULL, "restarts", "2" } } });
    set_job_cond(w, "Complete", "CompletionsReached", "done", 1, 0);
    step(w, 10000,
         &(struct expect){ .succeeded = 1,
                           .s = { { '=', COND_SUCCEEDED, "status", "True" },
                                  { 'N', NULL, "restarts", "2" },
                                  { 'J', NULL, "restartCount", "2" } } });
}

/* Recorded once. */
static void init_restart_once(struct world *w, struct plan *p)
{
    (void)p;
    step(w, 6000, &(struct expect){ .s = { { 'E', NULL, "MPIJobRestarting", "1" }, { 'J', NULL, "restartCount", "1" } } });
}

/* Recorded once; the Job counts the next pod's failure before that pod is seen: recorded all the same. */
static void deleted_once_then_counted(struct world *w, struct plan *p)
{
    (void)p;
    step(w, 6000, &(struct expect){ .s = { { 'E', NULL, "MPIJobRestarting", "1" } } });
    job_failed_pods(w, 2);
    step(w, 7000,
         &(struct expect){ .restarted = 1,
                           .s = { { 'J', NULL, "restartCount", "2" },
                                  { 'E', NULL, "MPIJobRestarting", "2" },
                                  { '~', COND_RESTARTING, "message", "(run 3 of 7)" } } });
}

/* cleanPodPolicy Running: the running worker goes and the still-running launcher Job is suspended. */
static void clean_after_worker_failed(struct world *w, struct plan *p)
{
    (void)p;
    step(w, 6000, &(struct expect){ .n = { CNT(ACT_DELETE, RK_POD, 1), CNT(ACT_PATCH, RK_JOB, 1) } });
}

/* While the launcher pod is there, the operator leaves the failure to its agent (which names the
 * preemptor) for DISRUPTED_WAIT_MS (20 s) after the condition; then it fails the job itself. */
static void preempted_then_failed(struct world *w, struct plan *p)
{
    (void)p;
    json_object_set_new(kube_json_at(get(w, RK_POD, "pi-launcher-abcde"), "metadata"), "deletionTimestamp",
                        json_string("2026-05-28T20:26:50Z")); /* the Job gave up: still waiting for its record */
    step(w, 24000, &(struct expect){ .s = { { '-', COND_FAILED } } });
    step(w, 25001,
         &(struct expect){ .failed = 1,
                           .s = { { '=', COND_FAILED, "message",
                                    "MPIJob default/pi has failed: worker pod pi-worker-1 failed: preempted by the "
                                    "scheduler for a higher-priority pod (DisruptionTarget PreemptionByScheduler: "
                                    "default-scheduler: preempting to accommodate a higher priority pod)" } } });
}

/* With runPolicy.backoffLimit 2, a failed or evicted worker is deleted to be re-created (once per
 * pod, 2 in all), recorded in status.restarts / workerRestarts with a WorkerRestarted Event; the
 * launcher retries are counted in restartCount with their reasons; past 2 the job fails. */
static void workers_restarted(struct world *w, struct plan *p)
{
    (void)p;
    for (int round = 1; round <= 2; round++) {
        const char *name = round == 1 ? "pi-worker-1" : "pi-worker-0", *n = round == 1 ? "1" : "2";
        if (round == 1)
            worker_failed(w, name);
        else
            worker_evicted(w, name);
        step(w, 5000 * round,
             &(struct expect){ .n = { CNT(ACT_DELETE, RK_POD, 1) },
                               .s = { { '-', COND_FAILED },
                                      { 'J', NULL, "workerRestarts", n },
                                      { '=', NULL, "restarts/0/pod", name }, /* newest first */
                                      { '=', NULL, "restarts/0/reason", "worker_lost" },
                                      { '~', NULL, "restarts/0/message", round == 1 ? "failed" : "was evicted" },
                                      { 'E', NULL, "WorkerRestarted", n } } });
        /* deleted: re-created, not counted again */
        step(w, 5000 * round + 1000, &(struct expect){ .n = { CNT(ACT_CREATE, RK_POD, 1) } });
        set_pod(w, name, "Running", 1);
        json_object_set_new(kube_json_at(get(w, RK_POD, name), "metadata"), "creationTimestamp",
                            json_string(round == 1 ? "2026-05-28T20:27:00Z" : "2026-05-28T20:27:10Z"));
    }
    /* the launcher's Job retried once: counted, with the launcher's reason */
    add_launcher_pod(w, "pi-launcher-abcde", "Failed", "worker pi-worker-1: deleted; command exited 1\nphases: {}", 1);
    set_job_cond(w, "Running", "x", "y", 0, 1);
    step(w, 20000,
         &(struct expect){ .restarted = 1,
                           .s = { { 'J', NULL, "restartCount", "1" },
                                  { '~', NULL, "restarts/0/message", "worker pi-worker-1: deleted" } } });
    /* a worker someone deleted, Failed in its last seconds (killed at its grace period): the
     * deletion is the cause, not a worker failure: neither counted nor recorded */
    set_pod(w, "pi-worker-0", "Failed", 0);
    json_object_set_new(kube_json_at(get(w, RK_POD, "pi-worker-0"), "metadata"), "deletionTimestamp",
                        json_string("2026-05-28T20:27:30Z"));
    step(w, 22000,
         &(struct expect){
             .n = { CNT(ACT_DELETE, RK_POD, 0) },
             .s = { { '-', COND_FAILED }, { 'J', NULL, "workerRestarts", "2" }, { 'E', NULL, "WorkerRestarted", "2" } } });
    set_pod(w, "pi-worker-0", "Running", 1);
    json_object_del(kube_json_at(get(w, RK_POD, "pi-worker-0"), "metadata"), "deletionTimestamp");
    /* the budget (2) is spent: the next lost worker fails the job */
    set_pod(w, "pi-worker-1", "Failed", 0);
    step(w, 25000,
         &(struct expect){ .failed = 1,
                           .s = { { '~', COND_FAILED, "message", "worker pod pi-worker-1 failed" },
                                  { 'J', NULL, "workerRestarts", "2" } } });
}

static void resumed(struct world *w, struct plan *p)
{
    (void)p;
    json_object_del(w->objs, "pods/pi-launcher-abcde");
    patch_job(w, "{\"spec\":{\"runPolicy\":{\"suspend\":false}}}");
    step(w, 9000,
         &(struct expect){
             .n = { CNT(ACT_CREATE, RK_POD, 2), CNT(ACT_PATCH, RK_JOB, 1) },
             .s = { { '=', COND_SUSPENDED, "reason", "MPIJobResumed" }, { '=', COND_SUSPENDED, "status", "False" } } });
}

/* As upstream: suspending deletes the PodGroup with the workers (in scheduler-plugins' API
 * group); resuming recreates it and the launcher Job takes the template's current nodeSelector
 * (keys it no longer has go), tolerations and schedulingGates while it is unsuspended. */
static void gang_resumed(struct world *w, struct plan *p)
{
    for (size_t i = 0; i < p->n; i++)
        if (p->a[i].kind == ACT_DELETE && p->a[i].res == RK_PODGROUP)
            assert_string_equal(kube_json_at_str(p->a[i].obj, "apiVersion"), "scheduling.x-k8s.io/v1alpha1");
    step(w, 6000, &(struct expect){ .n = { CNT(ACT_CREATE, RK_PODGROUP, 0) } }); /* suspended: no PodGroup again */
    json_object_del(w->objs, "pods/pi-launcher-abcde");
    patch_job(w,
              "{\"spec\":{\"runPolicy\":{\"suspend\":false},\"mpiReplicaSpecs\":{\"Launcher\":{\"template\":{\"spec\":{"
              "\"nodeSelector\":{\"pool\":\"b\",\"zone\":null},\"tolerations\":[{\"key\":\"pool\",\"operator\":\"Exists\"}],"
              "\"schedulingGates\":[{\"name\":\"kueue.x-k8s.io/admission\"}]}}}}}}");
    step(w, 9000,
         &(struct expect){ .n = { CNT(ACT_CREATE, RK_PODGROUP, 1) },
                           .s = { { 'J', "jobs/pi-launcher", "spec/template/spec/nodeSelector", "{\"pool\":\"b\"}" },
                                  { '=', "jobs/pi-launcher", "spec/template/spec/tolerations/0/key", "pool" },
                                  { 'N', "jobs/pi-launcher", "spec/template/spec/schedulingGates", "1" },
                                  { 'J', "jobs/pi-launcher", "spec/suspend", "false" },
                                  { '=', "jobs/pi-launcher", "spec/podReplacementPolicy", "Failed" } } });
}

/* activeDeadlineSeconds 10, ttlSecondsAfterFinished 5, as upstream: the launcher Job carries the
 * TTL (the Job controller deletes a finished Job); a launcher Job the operator suspended (the
 * deadline passed while it ran) never finishes, so the operator deletes it TTL after
 * completionTime. The MPIJob itself is never deleted. */
static void deadline_then_ttl(struct world *w, struct plan *p)
{
    (void)p;
    run_to_running(w);
    wants(w, (const struct want[]){ { 'J', "jobs/pi-launcher", "spec/ttlSecondsAfterFinished", "5" }, { 0 } });
    step(w, 10500, &(struct expect){ .failed = 1, .s = { { '=', COND_FAILED, "reason", "DeadlineExceeded" } } });
    /* cleanPodPolicy Running: the running launcher's Job is suspended */
    step(w, 10800, &(struct expect){ .s = { { 'J', "jobs/pi-launcher", "spec/suspend", "true" } } });
    step(w, 11000, &(struct expect){ .rq_lo = 1, .rq_hi = 5000, .n = { CNT(ACT_DELETE, RK_JOB, 0) } });
    step(w, 16000, &(struct expect){ .n = { CNT(ACT_DELETE, RK_JOB, 1), CNT(ACT_DELETE, RK_MPIJOB, 0) } });
    step(w, 17000, /* gone: not re-created, nothing else to do */
         &(struct expect){ .n = { CNT(ACT_CREATE, RK_JOB, 0), CNT(ACT_DELETE, RK_JOB, 0) },
                           .s = { { '=', COND_FAILED, "reason", "DeadlineExceeded" } } });
}

/* The Job controller deleted the finished launcher Job (its TTL) and pod: the MPIJob stays
 * Succeeded with its Launcher counts, and nothing is re-created. */
static void launcher_job_gone(struct world *w, struct plan *p)
{
    (void)p;
    json_object_del(w->objs, "jobs/pi-launcher");
    json_object_del(w->objs, "pods/pi-launcher-abcde");
    step(w, 6000, &(struct expect){ .none = 1, .s = { { 'J', NULL, "replicaStatuses/Launcher/succeeded", "1" } } });
}

/* The patch carries only the data, at the cached resourceVersion; then the ConfigMap converged. */
static void configmap_patch_data_only(struct world *w, struct plan *p)
{
    for (size_t i = 0; i < p->n; i++)
        if (p->a[i].kind == ACT_PATCH && p->a[i].res == RK_CONFIGMAP) {
            json_t *patch = p->a[i].obj;
            assert_string_equal(kube_json_at_str(patch, "metadata", "resourceVersion"), "41");
            assert_null(kube_json_at(patch, "metadata", "labels"));
            assert_true(json_is_null(kube_json_at(patch, "data", "stale")));
        }
    step(w, 2000, &(struct expect){ .n = { CNT(ACT_PATCH, RK_CONFIGMAP, 0) } });
}

static void workers_ready_then_launcher(struct world *w, struct plan *p)
{
    (void)p;
    set_pod(w, "pi-worker-0", "Running", 1);
    set_pod(w, "pi-worker-1", "Running", 1);
    step(w, 1000, &(struct expect){ .n = { CNT(ACT_CREATE, RK_JOB, 1) } });
}

/* The State column (the last condition) still shows the phase; the scheduler's message changes,
 * the pod and reason do not: no write, no Event; the launcher cannot pull its image: it comes
 * first, and fails the job at the worker timeout. */
static void blocked_launcher_then_failed(struct world *w, struct plan *p)
{
    (void)p;
    json_t *conds = kube_json_at(status(w), "conditions");
    assert_string_equal(kube_json_at_str(json_array_get(conds, json_array_size(conds) - 1), "type"), COND_CREATED);
    set_blocked(w, "pi-worker-1", "0/2 nodes are available: 2 Insufficient nvidia.com/gpu.", NULL);
    step(w, 3000, &(struct expect){ .none = 1, .s = { { 'E', NULL, "Unschedulable", "1" } } });
    add_launcher_pod(w, "pi-launcher-abcde", "Pending", NULL, 0);
    set_blocked(w, "pi-launcher-abcde", NULL, "example.com/nope:1");
    step(w, 4000,
         &(struct expect){ .rq_lo = 1,
                           .rq_hi = 900 * 1000,
                           .s = { { '=', COND_BLOCKED, "reason", "ImagePullBackOff" },
                                  { '~', COND_BLOCKED, "message",
                                    "launcher pod pi-launcher-abcde: container l: ImagePullBackOff: Back-off pulling "
                                    "image \"example.com/nope:1\"" } },
                           .quiet = 5000 });
    step(w, 4000 + 900 * 1000,
         &(struct expect){ .failed = 1,
                           .s = { { '=', COND_FAILED, "message",
                                    "MPIJob default/pi has failed: launcher pod pi-launcher-abcde could not start within "
                                    "900s (mpi-k8s.io/worker-timeout): container l: ImagePullBackOff: Back-off pulling "
                                    "image \"example.com/nope:1\"" } } });
}

/* ---- the cases ---- */

enum start { FRESH, CREATED, RUNNING }; /* the seed job alone, after its first sync (T0), running */

/* A world (the seed job merged with patch, the syncs' --gang-scheduling and limited RBAC), brought
 * to start, then setup(arg), then (at >= 0) a sync at T0 + at checked against x, then story. */
struct rcase {
    const char *name, *patch, *gang;
    int no_rbac;
    enum start start;
    void (*setup)(struct world *w, const char *arg);
    const char *arg;
    int64_t at;
    struct expect x;
    void (*story)(struct world *w, struct plan *p);
};

#define RANK_FAILED "launcher pod pi-launcher-abcde: rank 1 on pod pi-worker-1"
#define SUSPEND "{\"spec\":{\"runPolicy\":{\"cleanPodPolicy\":null,\"suspend\":true}}}"
#define WAIT_FOR_WORKERS "\"launcherCreationPolicy\":\"WaitForWorkersReady\""
#define BLOCKED_ON(r)                                                                                                       \
    { '=', COND_BLOCKED, "status", "True" }, { '=', COND_BLOCKED, "reason", r }
#define WORKER_WAITING(r, ...)                                                                                              \
    {                                                                                                                       \
        "waiting_" #r, .start = CREATED, .setup = worker_waiting, .arg = #r, .at = 2000, .x = {.s = { __VA_ARGS__ } }       \
    }

static const struct rcase cases[] = {
    { "new_job_plan",
      .x = { .created = 1,
             .n = { CNT(ACT_CREATE, RK_CONFIGMAP, 1), CNT(ACT_CREATE, RK_SERVICEACCOUNT, 1), CNT(ACT_CREATE, RK_ROLE, 1),
                    CNT(ACT_CREATE, RK_ROLEBINDING, 1), CNT(ACT_CREATE, RK_SERVICE, 1), CNT(ACT_SSH_SECRET, RK_SECRET, 1),
                    CNT(ACT_CREATE, RK_POD, 2), CNT(ACT_CREATE, RK_JOB, 1), CNT(ACT_STATUS, RK_MPIJOB, 1) },
             .s = { { '=', COND_CREATED, "message", "MPIJob default/pi is created." }, { '+', NULL, "startTime" } },
             .quiet = 1000 } }, /* level-triggered: nothing changed -> no API call at all */
    /* limited RBAC mode (upstream's ClusterRole): no launcher ServiceAccount, Role or RoleBinding */
    { "limited_rbac", .no_rbac = 1,
      .x = { .created = 1,
             .n = { CNT(ACT_CREATE, RK_SERVICEACCOUNT, 0), CNT(ACT_CREATE, RK_ROLE, 0), CNT(ACT_CREATE, RK_ROLEBINDING, 0),
                    CNT(ACT_CREATE, RK_CONFIGMAP, 1), CNT(ACT_CREATE, RK_POD, 2), CNT(ACT_CREATE, RK_JOB, 0) } },
      .story = rbac_waits_for_workers },
    /* an exec-transport job cannot run so: Failed once, naming why, nothing created */
    { "limited_rbac_exec", "{\"metadata\":{\"annotations\":{\"" MPIK8S_ANN_TRANSPORT "\":\"exec\"}}}", .no_rbac = 1,
      .x = { .created = 1,
             .failed = 1,
             .invalid = 1,
             .n = { CNT(ACT_CREATE, RK_POD, 0), CNT(ACT_CREATE, RK_CONFIGMAP, 0) },
             .s = { { '=', COND_FAILED, "status", "True" },
                    { '~', COND_FAILED, "message", "the exec transport needs API access" } },
             .quiet = 1000 } },
    { "running_then_succeeded", .start = RUNNING, .setup = steady_then_succeeded,
      .arg = "mpirun finished\nphases: {\"workersReady\":\"2026-05-28T20:26:46.000Z\","
             "\"mpirunStarted\":\"2026-05-28T20:26:47.250Z\"}",
      .at = 80000,
      .x = { .succeeded = 1,
             .phase = "mpirunStarted",
             .s = { { '=', COND_SUCCEEDED, "message", "MPIJob default/pi successfully completed." },
                    { '=', COND_RUNNING, "status", "False" },
                    { '=', NULL, "completionTime", "2026-05-28T20:28:00Z" },
                    { '=', NULL, "launchPhases/mpirunStarted", "2026-05-28T20:26:47.250Z" } } },
      .story = clean_after_success },
    { "pruned_status_key_not_rewritten", .start = RUNNING, .at = -1, .story = pruned_key_not_rewritten },
    { "launcher_failed_message", .start = RUNNING, .setup = launcher_failed,
      .arg = "worker pi-worker-1 is gone (deleted)\nphases: {}", .at = 5000,
      .x = { .failed = 1,
             .s = { { '=', COND_FAILED, "reason", "BackoffLimitExceeded" },
                    { '=', COND_FAILED, "message",
                      BACKOFF_FAILED "; launcher pod pi-launcher-abcde: worker pi-worker-1 is gone (deleted)" } } } },
    { "rank_failure_exit_code", .start = RUNNING, .setup = rank_failed,
      .arg = "failure: {\"reason\":\"exit_code\",\"rank\":1,\"pod\":\"pi-worker-1\",\"node\":\"n1\",\"exitCode\":3,"
             "\"message\":\"rank 1 on pod pi-worker-1 (node n1) exited with code 3\","
             "\"lastLines\":\"[1,1]<stderr>:bad input\\n\"}",
      .at = 5000,
      .x = { .failed = 1,
             .fail_reason = "exit_code",
             .s = { { 'M', NULL, "RankFailed",
                      "rank 1 on pod pi-worker-1 (node n1) exited with code 3; last lines:\n[1,1]<stderr>:bad input\n" },
                    { '+', NULL, "rankFailure" },
                    { '~', COND_FAILED, "message", RANK_FAILED } } } },
    { "rank_failure_oom", .start = RUNNING, .setup = rank_failed,
      .arg = "failure: {\"reason\":\"oom\",\"rank\":1,\"pod\":\"pi-worker-1\",\"oomKilled\":true,\"memoryLimit\":\"64Mi\","
             "\"message\":\"rank 1 on pod pi-worker-1 (node n1) was killed by SIGKILL: OOM-killed (limit 64Mi)\"}",
      .at = 5000,
      .x = { .failed = 1,
             .fail_reason = "oom",
             .s = { { 'M', NULL, "RankOOMKilled", "OOM-killed (limit 64Mi)" },
                    { '+', NULL, "rankFailure" },
                    { '~', COND_FAILED, "message", RANK_FAILED } } } },
    { "rank_failure_long_last_lines", .start = RUNNING, .setup = rank_failed_long, .at = 5000,
      .x = { .failed = 1,
             .fail_reason = "signal",
             .s = { { 'M', NULL, "RankFailed", "END" },
                    { '+', NULL, "rankFailure" },
                    { '~', COND_FAILED, "message", RANK_FAILED } } } },
    /* an agent without the line, or a line that is not an object: unknown */
    { "rank_failure_no_line", .start = RUNNING, .setup = rank_failed, .arg = "", .at = 5000,
      .x = { .failed = 1,
             .fail_reason = "unknown",
             .s = { { '-', NULL, "rankFailure" }, { '~', COND_FAILED, "message", RANK_FAILED } } } },
    { "rank_failure_bad_line", .start = RUNNING, .setup = rank_failed, .arg = "failure: [1]", .at = 5000,
      .x = { .failed = 1,
             .fail_reason = "unknown",
             .s = { { '-', NULL, "rankFailure" }, { '~', COND_FAILED, "message", RANK_FAILED } } } },
    /* the failed attempt's rank stays in status.rankFailure and its detail in launcherFailure */
    { "rank_failure_of_ignored_attempt", .start = RUNNING, .setup = ignored_then_succeeded, .at = 20000,
      .x = { .succeeded = 1,
             .s = { { 'J', NULL, "rankFailure/exitCode", "75" }, { '~', NULL, "launcherFailure", "pi-launcher-first" } } } },
    /* the Job's Failed event before the pod watch delivers the launcher's terminated state: the
     * operator waits for that record (a short requeue, at most 3 s after the Job's Failed
     * condition) instead of writing a Failed condition without the agent's reason */
    { "launcher_failed_waits_for_record", .start = RUNNING, .setup = job_failed_first, .at = 5100,
      .x = { .rq_lo = 1, .rq_hi = 200, .s = { { '-', COND_FAILED } } }, .story = record_arrives },
    /* no record within the bound: Failed with the Job's reason alone */
    { "launcher_failed_no_record_in_time", .start = RUNNING, .setup = job_failed_first, .at = 8100,
      .x = { .failed = 1, .s = { { '=', COND_FAILED, "message", BACKOFF_FAILED } } } },
    /* the Failed message keeps the failed run's reason, not the killed rerun's 137 */
    { "killed_rerun_keeps_reason", .start = RUNNING, .setup = killed_rerun, .at = 5000,
      .x = { .failed = 1,
             .s = { { '~', COND_FAILED, "message", "ssh DNS: cannot resolve host pi-worker-0" },
                    { '!', COND_FAILED, "message", "137" } } } },
    /* F7: the Job deletes the restarting launcher pod when it gives up; the Failed message still
     * carries the agent's reason, remembered from the pod's last state */
    { "launcher_gone_keeps_reason", .start = RUNNING, .setup = launcher_init_failed_gone,
      .arg = "init failed: could not list the worker pods\nphases: {}", .at = 5000,
      .x = { .failed = 1, .s = { { '=', COND_FAILED, "message", BACKOFF_FAILED "; " LIST_FAILED } } } },
    /* a remembered pod older than the MPIJob (an earlier job of the same name) is not quoted */
    { "launcher_gone_older_not_quoted", .start = RUNNING, .setup = old_launcher_gone, .at = 5000,
      .x = { .failed = 1, .s = { { '!', COND_FAILED, "message", "old" } } } },
    /* the launcher's reason is kept in status.launcherFailure as soon as a sync sees it, so an
     * operator restarted before the Job gives up (no pod, no memory of it) still quotes it */
    { "launcher_failure_survives_restart", .start = RUNNING, .setup = launcher_init_failed,
      .arg = "init failed: could not list the worker pods\nphases: {}", .at = 4000,
      .x = { .restarted = 1, .s = { { '=', NULL, "launcherFailure", LIST_FAILED }, { '-', COND_FAILED } } },
      .story = restart_then_gave_up },
    /* a successful launcher record is not kept */
    { "launcher_success_not_kept", .start = RUNNING, .setup = launcher_pod_succeeded, .arg = "mpirun exited 0\nphases: {}",
      .at = 4000, .x = { .s = { { '-', NULL, "launcherFailure" } } } },
    /* the agent's init exits 3 when the workers decided its wait: the job fails at once (no Job
     * retry can help), naming the agent's reason, and the launcher Job is stopped */
    { "workers_not_ready_fails_at_once", .start = CREATED, .setup = workers_not_ready, .at = 12000,
      .x = { .failed = 1,
             .s = { { '=', COND_FAILED, "reason", "MPIJobFailed" },
                    { '=', COND_FAILED, "message",
                      "MPIJob default/pi has failed: the workers did not become ready; launcher pod pi-launcher-abcde: "
                      "init failed: timed out after 10 s waiting for workers (1/2 ready): pi-worker-1: phase Pending: "
                      "container w: ImagePullBackOff" } } },
      .story = launcher_job_suspended },
    /* any other init failure (exit 1: e.g. an API error) is left to the Job's backoffLimit */
    { "init_failure_left_to_job", .start = CREATED, .setup = launcher_init_failed, .arg = "init failed: x\nphases: {}",
      .at = 12000, .x = { .restarted = 1, .s = { { '-', COND_FAILED } } } },
    { "restarting", .start = RUNNING, .setup = launcher_failed_no_record, .at = 5000,
      .x = { .restarted = 1,
             .s = { { '=', COND_RESTARTING, "reason", "MPIJobRestarting" }, { '-', COND_RUNNING } },
             .quiet = 6000 } },
    /* OnFailure (the seed's default): the launcher container restarted in place is recorded with
     * the agent's words and the retry budget */
    { "restart_in_place", .start = RUNNING, .setup = launcher_restarted,
      .arg = "rank 1 on pod pi-worker-1 (node n1) exited with code 7; command exited 7\nphases: {}\n"
             "failure: {\"reason\":\"exit_code\",\"rank\":1}",
      .at = 5000,
      .x = { .restarted = 1,
             .restart_reason = "exit_code",
             .s = { { '=', COND_RESTARTING, "message",
                      "MPIJob default/pi is restarting (run 2 of 7): launcher pod pi-launcher-abcde: rank 1 on pod "
                      "pi-worker-1 (node n1) exited with code 7; command exited 7" },
                    { '-', COND_RUNNING },
                    { 'E', NULL, "MPIJobRestarting", "1" },
                    { 'J', NULL, "restartCount", "1" },
                    { 'J', NULL, "retriesLeft", "5" },
                    { '=', NULL, "restarts/0/key", "pi-launcher-abcde@2026-05-28T20:26:42Z#1" },
                    { '=', NULL, "restarts/0/reason", "exit_code" } } },
      .story = restart_once_then_again },
    /* an init container of the launcher rerun in place (OnFailure) is a restart too: named by its
     * container, its key apart from the main container's restarts */
    { "restart_init_container", .start = RUNNING, .setup = init_container_restarted, .at = 5000,
      .x = { .restarted = 1,
             .s = { { '=', COND_RESTARTING, "message",
                      "MPIJob default/pi is restarting (run 2 of 7): launcher pod pi-launcher-abcde (init container "
                      "mpi-agent-init): cannot deliver the bundle to /opt/kube: No space left on device" },
                    { '=', NULL, "restarts/0/key",
                      "pi-launcher-abcde (init container mpi-agent-init)@2026-05-28T20:26:42Z#1" } } },
      .story = init_restart_once },
    /* restartPolicy Never: one record naming the deletion, with the budget the Job has left */
    { "restart_launcher_deleted", .start = RUNNING, .setup = launcher_deleted, .at = 5000,
      .x = { .restarted = 1,
             .s = { { '=', COND_RESTARTING, "message",
                      "MPIJob default/pi is restarting (run 2 of 7): launcher pod pi-launcher-abcde deleted" },
                    { 'J', NULL, "restartCount", "1" },
                    { 'J', NULL, "retriesLeft", "5" },
                    { 'E', NULL, "MPIJobRestarting", "1" } } },
      .story = deleted_once_then_counted },
    /* without backoffLimit a failed or evicted worker fails the job at once */
    { "worker_failed", .start = RUNNING, .setup = worker_oom, .arg = "pi-worker-1", .at = 5000,
      .x = { .failed = 1,
             .s = { { '=', COND_FAILED, "message",
                      "MPIJob default/pi has failed: worker pod pi-worker-1 failed: OOMKilled" } } },
      .story = clean_after_worker_failed },
    { "worker_evicted", .start = RUNNING, .setup = worker_evicted, .arg = "pi-worker-0", .at = 5000,
      .x = { .failed = 1,
             .s = { { '=', COND_FAILED, "reason", "MPIJobEvicted" },
                    { '=', COND_FAILED, "message", "MPIJob default/pi has failed: 1/2 workers are evicted" } } } },
    { "worker_preempted", .start = RUNNING, .setup = worker_preempted, .arg = "pi-worker-1", .at = 6000,
      .x = { .rq_lo = 1, .rq_hi = 1000, .s = { { '-', COND_FAILED } } }, .story = preempted_then_failed },
    { "worker_restart", "{\"spec\":{\"runPolicy\":{\"backoffLimit\":2}}}", .start = RUNNING, .at = -1,
      .story = workers_restarted },
    { "suspend_resume", .start = RUNNING, .setup = patch_job, .arg = SUSPEND, .at = 5000,
      .x = { .n = { CNT(ACT_DELETE, RK_POD, 2), CNT(ACT_PATCH, RK_JOB, 1) },
             .s = { { '=', COND_SUSPENDED, "status", "True" },
                    { '=', COND_RUNNING, "status", "False" },
                    { 'J', "jobs/pi-launcher", "spec/suspend", "true" } } },
      .story = resumed },
    { "suspend_resume_gang",
      "{\"spec\":{\"mpiReplicaSpecs\":{\"Launcher\":{\"template\":{\"spec\":{\"nodeSelector\":{\"pool\":\"a\","
      "\"zone\":\"z1\"}}}}}}}",
      "scheduler-plugins-scheduler", .start = RUNNING, .setup = gang_suspended, .arg = SUSPEND, .at = 5000,
      .x = { .n = { CNT(ACT_DELETE, RK_PODGROUP, 1) }, .s = { { '-', "podgroups/pi" } } }, .story = gang_resumed },
    /* created suspended (Kueue): as upstream, the launcher Job at once, suspended; no workers, no
     * PodGroup, even with WaitForWorkersReady */
    { "created_suspended", "{\"spec\":{\"runPolicy\":{\"suspend\":true}," WAIT_FOR_WORKERS "}}", "volcano",
      .x = { .created = 1,
             .n = { CNT(ACT_CREATE, RK_JOB, 1), CNT(ACT_CREATE, RK_POD, 0), CNT(ACT_CREATE, RK_PODGROUP, 0) },
             .s = { { 'J', "jobs/pi-launcher", "spec/suspend", "true" } } } },
    { "deadline_and_ttl", "{\"spec\":{\"runPolicy\":{\"activeDeadlineSeconds\":10,\"ttlSecondsAfterFinished\":5}}}",
      .x = { .created = 1, .rq_lo = 10000, .rq_hi = 10000 }, .story = deadline_then_ttl },
    /* a finished launcher Job is the Job controller's to delete (its ttlSecondsAfterFinished) */
    { "ttl_launcher_gone_keeps_status",
      "{\"spec\":{\"runPolicy\":{\"cleanPodPolicy\":\"None\",\"ttlSecondsAfterFinished\":0}}}", .start = RUNNING,
      .setup = launcher_succeeded, .arg = "mpirun finished\nphases: {}", .at = 5000,
      .x = { .succeeded = 1, .n = { CNT(ACT_DELETE, RK_JOB, 0) }, .s = { { '+', COND_SUCCEEDED, "reason" } } },
      .story = launcher_job_gone },
    /* a hostfile change patches only the ConfigMap's data, at the cached resourceVersion: labels
     * and annotations others added stay, a data key the job no longer has goes */
    { "configmap_patch_keeps_foreign_metadata", .start = CREATED, .setup = configmap_edited, .at = 1000,
      .x = { .n = { CNT(ACT_PATCH, RK_CONFIGMAP, 1) },
             .s = { { '=', "configmaps/pi-config", "metadata/annotations/team", "ml" },
                    { '=', "configmaps/pi-config", "metadata/labels/cost-center", "42" },
                    { '-', "configmaps/pi-config", "data/stale" },
                    { '+', "configmaps/pi-config", "data/hostfile" } } },
      .story = configmap_patch_data_only },
    { "foreign_object", .setup = foreign_configmap,
      .x = { .created = 1,
             .retry = 1,
             .n = { CNT(ACT_CREATE, RK_POD, 0) },
             .s = { { 'E', NULL, "ErrResourceExists", "1" } } } },
    { "invalid_job_once", "{\"spec\":{\"slotsPerWorker\":0}}",
      .x = { .created = 1,
             .failed = 1,
             .invalid = 1,
             .n = { CNT(ACT_CREATE, RK_POD, 0), CNT(ACT_EVENT, RK_EVENT, 1) },
             .s = { { '=', COND_FAILED, "reason", "ValidationError" },
                    { '~', COND_FAILED, "message", "spec.slotsPerWorker: must be from 1" } },
             .quiet = 1000 } }, /* no retry loop */
    { "wait_for_workers_ready", "{\"spec\":{" WAIT_FOR_WORKERS "}}",
      .x = { .created = 1, .n = { CNT(ACT_CREATE, RK_JOB, 0) } }, .story = workers_ready_then_launcher },
    { "managed_externally",
      "{\"spec\":{\"runPolicy\":{\"cleanPodPolicy\":null,\"managedBy\":\"kueue.x-k8s.io/multikueue\"}}}",
      .x = { .none = 1 } },
    /* every waiting reason of the shared classifier (lib/podstuck.c): a worker waiting for a
     * blocking one makes the job Blocked (ErrImagePull as ImagePullBackOff, the two alternate) */
    WORKER_WAITING(ContainerCreating, { '-', COND_BLOCKED }),
    WORKER_WAITING(PodInitializing, { '-', COND_BLOCKED }),
    WORKER_WAITING(CrashLoopBackOff, { '-', COND_BLOCKED }),
    WORKER_WAITING(ErrImagePull, BLOCKED_ON("ImagePullBackOff")),
    WORKER_WAITING(ImagePullBackOff, BLOCKED_ON("ImagePullBackOff")),
    WORKER_WAITING(ErrImageNeverPull, BLOCKED_ON("ErrImageNeverPull")),
    WORKER_WAITING(InvalidImageName, BLOCKED_ON("InvalidImageName")),
    WORKER_WAITING(CreateContainerConfigError, BLOCKED_ON("CreateContainerConfigError")),
    WORKER_WAITING(CreateContainerError, BLOCKED_ON("CreateContainerError")),
    WORKER_WAITING(RunContainerError, BLOCKED_ON("RunContainerError")),
    WORKER_WAITING(SomethingNew, { '-', COND_BLOCKED }),
    { "blocked_condition", .start = CREATED, .setup = worker_unschedulable,
      .arg = "0/1 nodes are available: 1 Insufficient nvidia.com/gpu.", .at = 2000,
      .x = { .n = { CNT(ACT_STATUS, RK_MPIJOB, 1) },
             .s = { BLOCKED_ON("Unschedulable"),
                    { '=', COND_BLOCKED, "message",
                      "MPIJob default/pi is blocked: worker pod pi-worker-1: Unschedulable: 0/1 nodes are available: 1 "
                      "Insufficient nvidia.com/gpu." },
                    { 'E', NULL, "Unschedulable", "1" } } },
      .story = blocked_launcher_then_failed },
    /* blocked, then running: Blocked=False once */
    { "blocked_then_running", .start = CREATED, .setup = blocked_then_running,
      .arg = "0/1 nodes are available: 1 Insufficient cpu.", .at = 2000,
      .x = { .s = { { '=', COND_BLOCKED, "status", "False" },
                    { '=', COND_BLOCKED, "reason", R_UNBLOCKED },
                    { '=', COND_RUNNING, "status", "True" } },
             .quiet = 3000 } },
    /* a job that never blocked has no Blocked condition */
    { "never_blocked", .start = RUNNING, .at = 4000, .x = { .none = 1, .s = { { '-', COND_BLOCKED } } } },
};

static void run_case(void **state)
{
    const struct rcase *c = *state;
    struct world w;
    struct plan p = { 0 };
    g_gang = c->gang;
    g_no_rbac = c->no_rbac;
    world_init(&w, c->patch);
    if (c->start == CREATED)
        sync1(&w, T0);
    if (c->start == RUNNING)
        run_to_running(&w);
    if (c->setup)
        c->setup(&w, c->arg);
    if (c->at >= 0) {
        sync_at(&w, T0 + c->at, &p);
        check(&w, &p, &c->x);
    }
    if (c->story)
        c->story(&w, &p);
    plan_free(&p);
    world_free(&w);
}

int main(void)
{
    struct CMUnitTest tests[sizeof cases / sizeof cases[0]];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        tests[i] = (struct CMUnitTest){ cases[i].name, run_case, NULL, NULL, (void *)&cases[i] };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
