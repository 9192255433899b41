/* test_lib_client.c - network tests of the client against a fake API server
 * (test_lib_fakeapi.py, real TLS with an openssl-made CA): CRUD and Status
 * errors, pagination, retries and Retry-After, TLS/CA/token failures,
 * keep-alive, watch resume and 410, informer sync/update/relist, cancel, and a
 * grouped, transformed, compact informer with write-through. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kube/kube.h"

static char g_dir[256];
static pid_t g_pid;
static int g_port;

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static int start_server(void **st)
{
    (void)st;
    snprintf(g_dir, sizeof g_dir, "/tmp/lib-test-client-XXXXXX");
    if (!mkdtemp(g_dir))
        return -1;
    char tok[300];
    snprintf(tok, sizeof tok, "%s/token", g_dir);
    write_text(tok, "tok-A\n");
    g_pid = fork();
    if (g_pid == 0) {
        const char *script = getenv("FAKEAPI") ? getenv("FAKEAPI") : "tests/unit/test_lib_fakeapi.py";
        execlp("python3", "python3", script, "--dir", g_dir, "--tls", "--token", "tok-A", (char *)NULL);
        _exit(127);
    }
    char portf[300];
    snprintf(portf, sizeof portf, "%s/port", g_dir);
    for (int i = 0; i < 200; i++) { /* <= 20 s */
        FILE *f = fopen(portf, "r");
        if (f) {
            int ok = fscanf(f, "%d", &g_port) == 1;
            fclose(f);
            if (ok)
                return 0;
        }
        if (waitpid(g_pid, NULL, WNOHANG) == g_pid)
            break;
        usleep(100000);
    }
    fprintf(stderr, "fake API server did not start\n");
    return -1;
}

static int stop_server(void **st)
{
    (void)st;
    if (g_pid > 0) {
        kill(g_pid, SIGTERM);
        waitpid(g_pid, NULL, 0);
    }
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* A kubeconfig for the fake server; extra_cluster/extra_user are YAML lines. */
static struct kube_client *client_with(const char *cluster_lines, const char *user_lines, int fast_retry)
{
    char *doc = kube_strdup_printf("current-context: t\nclusters:\n- name: c\n  cluster:\n    server: "
                                   "https://127.0.0.1:%d\n%s\ncontexts:\n- name: t\n  context: {cluster: c, user: "
                                   "u, namespace: ns1}\nusers:\n- name: u\n  user:\n%s\n",
                                   g_port, cluster_lines, user_lines);
    struct kube_config *cfg = NULL;
    char *err = NULL;
    if (kube_config_parse(doc, strlen(doc), "test-kubeconfig", g_dir, NULL, &cfg, &err))
        fail_msg("kubeconfig: %s", err);
    free(doc);
    struct kube_client_opts o;
    kube_client_opts_default(&o);
    if (fast_retry) {
        o.retry.base_ms = 10;
        o.retry.max_ms = 50;
    }
    o.request_timeout_ms = 10000;
    struct kube_client *c = kube_client_new(cfg, &o, &err);
    if (!c)
        fail_msg("client: %s", err);
    return c;
}

static struct kube_client *good_client(void)
{
    return client_with("    certificate-authority: ca.crt", "    tokenFile: token", 1);
}

static json_t *fault(struct kube_client *c, const char *path)
{
    struct kube_error e = KUBE_ERROR_INIT;
    json_t *v = kube_request(c, "POST", path, NULL, NULL, NULL, &e);
    if (!v)
        fail_msg("fault %s: %s", path, e.message);
    return v;
}

static json_t *cm(const char *name, const char *role)
{
    return json_pack("{s:s, s:s, s:{s:s, s:{s:s, s:s}}, s:{s:s}}", "apiVersion", "v1", "kind", "ConfigMap", "metadata",
                     "name", name, "labels", "app", "mpi", "role", role, "data", "k", "v");
}

static void test_crud(void **st)
{
    (void)st;
    struct kube_client *c = good_client();
    struct kube_error e = KUBE_ERROR_INIT;
    json_t *o = cm("one", "worker");
    json_t *created = kube_create(c, &KUBE_RES_CONFIGMAPS, "ns1", o, &e);
    assert_non_null(created);
    assert_string_equal(kube_obj_namespace(created), "ns1");
    json_t *again = kube_create(c, &KUBE_RES_CONFIGMAPS, "ns1", o, &e);
    assert_null(again);
    assert_int_equal(e.reason, KUBE_ALREADY_EXISTS);
    assert_int_equal(e.http_code, 409);
    json_decref(o);

    json_t *got = kube_get(c, &KUBE_RES_CONFIGMAPS, "ns1", "one", &e);
    assert_non_null(got);
    assert_string_equal(kube_obj_resource_version(got), kube_obj_resource_version(created));
    /* update with the current resourceVersion succeeds; the stale one conflicts */
    json_object_set_new(json_object_get(got, "data"), "k", json_string("v2"));
    json_t *upd = kube_update(c, &KUBE_RES_CONFIGMAPS, "ns1", NULL, got, &e);
    assert_non_null(upd);
    assert_string_equal(kube_json_at_str(upd, "data", "k"), "v2");
    assert_null(kube_update(c, &KUBE_RES_CONFIGMAPS, "ns1", NULL, got, &e));
    assert_int_equal(e.reason, KUBE_CONFLICT);
    assert_non_null(strstr(e.message, "has been modified"));

    json_t *mp = json_pack("{s:{s:s, s:n}}", "data", "extra", "x", "k");
    json_t *patched = kube_patch(c, &KUBE_RES_CONFIGMAPS, "ns1", "one", NULL, KUBE_PATCH_MERGE, mp, &e);
    assert_non_null(patched);
    assert_string_equal(kube_json_at_str(patched, "data", "extra"), "x");
    assert_null(kube_json_at_str(patched, "data", "k"));
    json_t *jp = json_pack("[{s:s, s:s, s:s}]", "op", "add", "path", "/metadata/labels/patched", "value", "yes");
    json_t *patched2 = kube_patch(c, &KUBE_RES_CONFIGMAPS, "ns1", "one", NULL, KUBE_PATCH_JSON, jp, &e);
    assert_non_null(patched2);
    assert_string_equal(kube_obj_label(patched2, "patched"), "yes");
    assert_null(kube_patch(c, &KUBE_RES_CONFIGMAPS, "ns1", "one", NULL, KUBE_PATCH_JSON, mp, &e));
    assert_int_equal(e.reason, KUBE_BAD_REQUEST); /* client-side: a JSON patch must be an array */

    json_t *stobj = json_pack("{s:{s:s}, s:{s:s}}", "metadata", "name", "one", "status", "phase", "Done");
    json_t *su = kube_update_status(c, &KUBE_RES_CONFIGMAPS, "ns1", "one", stobj, &e);
    assert_non_null(su);
    json_t *sg = kube_get_status(c, &KUBE_RES_CONFIGMAPS, "ns1", "one", &e);
    assert_non_null(sg);
    assert_string_equal(kube_json_at_str(sg, "status", "phase"), "Done");

    struct kube_delete_opts dopts = { .propagation_policy = "Foreground", .set_grace_period = 1, .grace_period_seconds = 0 };
    json_t *del = kube_delete(c, &KUBE_RES_CONFIGMAPS, "ns1", "one", &dopts, &e);
    assert_non_null(del);
    json_t *stats = fault(c, "/fault/stats");
    assert_string_equal(kube_json_at_str(stats, "last_delete", "propagationPolicy"), "Foreground");
    assert_int_equal(kube_json_at_int(stats, -1, "last_delete", "gracePeriodSeconds"), 0);
    assert_null(kube_get(c, &KUBE_RES_CONFIGMAPS, "ns1", "one", &e));
    assert_int_equal(e.reason, KUBE_NOT_FOUND);
    assert_int_equal(e.http_code, 404);
    assert_null(kube_delete(c, &KUBE_RES_CONFIGMAPS, "ns1", "one", NULL, &e));
    assert_int_equal(e.reason, KUBE_NOT_FOUND);
    assert_null(kube_get(c, &KUBE_RES_CONFIGMAPS, NULL, "x", &e));
    assert_int_equal(e.reason, KUBE_BAD_REQUEST);
    /* raw request: a path the server does not know */
    assert_null(kube_request(c, "GET", "/nope", NULL, NULL, NULL, &e));
    assert_int_equal(e.reason, KUBE_NOT_FOUND);
    json_decref(stats);
    json_decref(del);
    json_decref(sg);
    json_decref(su);
    json_decref(stobj);
    json_decref(patched2);
    json_decref(jp);
    json_decref(patched);
    json_decref(mp);
    json_decref(upd);
    json_decref(got);
    json_decref(created);
    kube_error_clear(&e);
    kube_client_free(c);
}

static void test_list_pagination(void **st)
{
    (void)st;
    struct kube_client *c = good_client();
    struct kube_error e = KUBE_ERROR_INIT;
    for (int i = 0; i < 7; i++) {
        char name[32];
        snprintf(name, sizeof name, "p%d", i);
        json_t *o = cm(name, i % 2 ? "worker" : "launcher");
        json_t *r = kube_create(c, &KUBE_RES_CONFIGMAPS, "pages", o, &e);
        assert_non_null(r);
        json_decref(r);
        json_decref(o);
    }
    struct kube_list_opts lo = { .limit = 3 };
    json_t *page = kube_list(c, &KUBE_RES_CONFIGMAPS, "pages", &lo, &e);
    assert_non_null(page);
    assert_int_equal(json_array_size(json_object_get(page, "items")), 3);
    assert_non_null(kube_json_at_str(page, "metadata", "continue"));
    json_decref(page);
    json_t *all = kube_list_all(c, &KUBE_RES_CONFIGMAPS, "pages", &lo, &e);
    assert_non_null(all);
    assert_int_equal(json_array_size(json_object_get(all, "items")), 7);
    assert_null(kube_json_at_str(all, "metadata", "continue"));
    assert_string_equal(kube_json_at_str(json_array_get(kube_json_at(all, "items"), 6), "metadata", "name"), "p6");
    json_decref(all);
    lo.label_selector = "role=worker";
    all = kube_list_all(c, &KUBE_RES_CONFIGMAPS, "pages", &lo, &e);
    assert_int_equal(json_array_size(json_object_get(all, "items")), 3);
    json_decref(all);
    /* all namespaces */
    all = kube_list_all(c, &KUBE_RES_CONFIGMAPS, NULL, NULL, &e);
    assert_true(json_array_size(json_object_get(all, "items")) >= 7);
    json_decref(all);
    kube_client_free(c);
}

static long requests(struct kube_client *c)
{
    json_t *s = fault(c, "/fault/stats");
    long n = (long)kube_json_at_int(s, -1, "requests");
    json_decref(s);
    return n;
}

/* kube_client_on_request's observer: appends "METHOD CODE;" to the buffer ud. */
static void seen_request(void *ud, const char *method, long code)
{
    char *buf = ud;
    size_t n = strlen(buf);
    snprintf(buf + n, 256 - n, "%s %ld;", method, code);
}

static void test_retries(void **st)
{
    (void)st;
    struct kube_client *c = good_client();
    struct kube_error e = KUBE_ERROR_INIT;
    json_decref(fault(c, "/fault/reset-stats"));
    json_decref(fault(c, "/fault/fail?n=2&code=503&retry_after=0"));
    char seen[256] = "";
    kube_client_on_request(c, seen_request, seen); /* each attempt, with its code */
    json_t *l = kube_list(c, &KUBE_RES_CONFIGMAPS, "ns1", NULL, &e);
    kube_client_on_request(c, NULL, NULL);
    assert_string_equal(seen, "GET 503;GET 503;GET 200;");
    assert_non_null(l);
    json_decref(l);
    assert_int_equal(requests(c), 3);

    /* 500 on a POST is not retried (the server may have acted) */
    json_decref(fault(c, "/fault/reset-stats"));
    json_decref(fault(c, "/fault/fail?n=1&code=500"));
    json_t *o = cm("retry", "worker");
    assert_null(kube_create(c, &KUBE_RES_CONFIGMAPS, "ns1", o, &e));
    assert_int_equal(e.reason, KUBE_INTERNAL);
    assert_int_equal(requests(c), 1);

    /* 429 is retried for any verb, after Retry-After */
    json_decref(fault(c, "/fault/reset-stats"));
    json_decref(fault(c, "/fault/fail?n=1&code=429&retry_after=1"));
    int64_t t0 = kube_now_ms();
    json_t *r = kube_create(c, &KUBE_RES_CONFIGMAPS, "ns1", o, &e);
    assert_non_null(r);
    assert_true(kube_now_ms() - t0 >= 950);
    assert_int_equal(requests(c), 2);
    json_decref(r);
    json_decref(o);

    /* bounded: 5 attempts, then the error */
    json_decref(fault(c, "/fault/reset-stats"));
    json_decref(fault(c, "/fault/fail?n=9&code=503"));
    assert_null(kube_get(c, &KUBE_RES_CONFIGMAPS, "ns1", "retry", &e));
    assert_int_equal(e.reason, KUBE_SERVICE_UNAVAILABLE);
    assert_int_equal(requests(c), 5);
    json_decref(fault(c, "/fault/fail?n=0"));
    /* drain the remaining 4 injected faults */
    for (int i = 0; i < 4; i++) {
        json_t *x = kube_get(c, &KUBE_RES_CONFIGMAPS, "ns1", "retry", &e);
        json_decref(x);
        if (x)
            break;
    }
    kube_error_clear(&e);
    kube_client_free(c);
}

static void test_malformed_replies(void **st)
{
    (void)st;
    struct kube_client *c = good_client();
    struct kube_error e = KUBE_ERROR_INIT;
    json_decref(fault(c, "/fault/garbage?body=%7Bnot%20json"));
    assert_null(kube_get(c, &KUBE_RES_CONFIGMAPS, "ns1", "x", &e));
    assert_int_equal(e.reason, KUBE_PROTOCOL);
    assert_non_null(strstr(e.message, "GET /api/v1/namespaces/ns1/configmaps/x: reply is not JSON"));
    json_decref(fault(c, "/fault/garbage?body=%7B%22kind%22%3A%22List%22%7D"));
    assert_null(kube_list(c, &KUBE_RES_CONFIGMAPS, "ns1", NULL, &e));
    assert_int_equal(e.reason, KUBE_PROTOCOL);
    assert_non_null(strstr(e.message, "not a List"));
    /* a watch stream with a broken event */
    json_decref(fault(c, "/fault/garbage?body=%7B%22type%22%3A%22ADDED%22%7D%0A"));
    struct kube_list_opts o = { .timeout_seconds = 5 };
    assert_int_equal(kube_watch_stream(c, &KUBE_RES_CONFIGMAPS, "ns1", &o, NULL, NULL, NULL, &e), -1);
    assert_int_equal(e.reason, KUBE_PROTOCOL);
    assert_non_null(strstr(e.message, "watch stream: watch event: \"object\" is not a JSON object"));
    kube_error_clear(&e);
    kube_client_free(c);
}

static void test_keepalive(void **st)
{
    (void)st;
    struct kube_client *c = good_client();
    struct kube_error e = KUBE_ERROR_INIT;
    json_decref(fault(c, "/fault/reset-stats"));
    for (int i = 0; i < 20; i++) {
        json_t *l = kube_list(c, &KUBE_RES_CONFIGMAPS, "ns1", NULL, &e);
        assert_non_null(l);
        json_decref(l);
    }
    json_t *s = fault(c, "/fault/stats");
    assert_int_equal(kube_json_at_int(s, -1, "connections"), 1);
    json_decref(s);
    kube_client_free(c);
}

/* The client-side rate limit: with qps 20 and burst 2, 12 requests cannot finish in less than
 * (12 - 2) / 20 s = 500 ms (a lower bound only: a slow machine cannot make it fail), and a
 * cancel ends a wait for a token at once. */
static void test_rate_limit(void **st)
{
    (void)st;
    struct kube_config *cfg = NULL;
    char *err = NULL, *doc = kube_strdup_printf("current-context: t\nclusters:\n- name: c\n  cluster:\n    server: "
                                                "https://127.0.0.1:%d\n    certificate-authority: ca.crt\n"
                                                "contexts:\n- name: t\n  context: {cluster: c, user: u}\nusers:\n"
                                                "- name: u\n  user:\n    tokenFile: token\n",
                                                g_port);
    if (kube_config_parse(doc, strlen(doc), "test-kubeconfig", g_dir, NULL, &cfg, &err))
        fail_msg("kubeconfig: %s", err);
    free(doc);
    struct kube_client_opts o;
    kube_client_opts_default(&o);
    o.qps = 20;
    o.burst = 2;
    struct kube_client *c = kube_client_new(cfg, &o, &err);
    assert_non_null(c);
    struct kube_error e = KUBE_ERROR_INIT;
    int64_t t0 = kube_now_ms();
    for (int i = 0; i < 12; i++) {
        json_t *l = kube_list(c, &KUBE_RES_CONFIGMAPS, "ns1", NULL, &e);
        if (!l)
            fail_msg("list %d: %s", i, e.message);
        json_decref(l);
    }
    int64_t took = kube_now_ms() - t0;
    if (took < 480)
        fail_msg("12 requests at qps 20 burst 2 took %lld ms, less than the limit allows", (long long)took);
    struct kube_cancel *cancel = kube_cancel_new();
    kube_client_set_cancel(c, cancel);
    kube_cancel_trigger(cancel);
    t0 = kube_now_ms();
    assert_null(kube_list(c, &KUBE_RES_CONFIGMAPS, "ns1", NULL, &e));
    assert_int_equal(e.reason, KUBE_CANCELLED);
    kube_error_clear(&e);
    kube_client_free(c);
    kube_cancel_free(cancel);
}

static long hits(struct kube_client *c, const char *method)
{
    json_t *s = fault(c, "/fault/stats");
    long n = (long)kube_json_at_int(json_object_get(s, "hits"), 0, method);
    json_decref(s);
    return n;
}

/* Kept-alive connections the server closed: found idle, the request goes on a new one;
 * closed under a request after it was sent, a POST is not sent again (it may have reached
 * the server: libcurl may not rewind its body behind the caller's back), on a kept-alive
 * connection or a new one alike; a GET is retried by the policy. */
static void test_stale_connections(void **st)
{
    (void)st;
    struct kube_client *a = good_client(), *b = good_client();
    struct kube_error e = KUBE_ERROR_INIT;
    json_t *o = cm("stale-1", "worker");
    json_decref(fault(a, "/fault/reset-stats"));
    json_decref(fault(b, "/fault/close-idle")); /* a's idle connection */
    json_t *r = kube_create(a, &KUBE_RES_CONFIGMAPS, "ns1", o, &e);
    if (!r)
        fail_msg("create after the idle connection closed: %s", e.message);
    json_decref(r);
    assert_int_equal(hits(b, "POST"), 1);
    json_decref(fault(b, "/fault/drop?n=1"));
    json_object_set_new(json_object_get(o, "metadata"), "name", json_string("stale-2"));
    assert_null(kube_create(a, &KUBE_RES_CONFIGMAPS, "ns1", o, &e));
    assert_int_equal(e.reason, KUBE_TRANSPORT);
    if (!strstr(e.message, "broken"))
        fail_msg("message: %s", e.message);
    assert_int_equal(hits(b, "POST"), 2); /* stale-1 and the dropped try: not repeated */
    kube_client_free(a);
    a = good_client();
    json_decref(fault(b, "/fault/drop?n=1"));
    json_object_set_new(json_object_get(o, "metadata"), "name", json_string("stale-3"));
    assert_null(kube_create(a, &KUBE_RES_CONFIGMAPS, "ns1", o, &e));
    assert_int_equal(e.reason, KUBE_TRANSPORT);
    assert_int_equal(hits(b, "POST"), 3);
    kube_client_free(a);
    a = good_client();
    json_decref(fault(b, "/fault/drop?n=1"));
    r = kube_get(a, &KUBE_RES_CONFIGMAPS, "ns1", "stale-1", &e);
    if (!r)
        fail_msg("get after a drop: %s", e.message);
    json_decref(r);
    assert_int_equal(hits(b, "GET"), 2);
    json_decref(o);
    kube_error_clear(&e);
    kube_client_free(a);
    kube_client_free(b);
}

static void expect_fail(struct kube_client *c, enum kube_reason want, const char *needle)
{
    struct kube_error e = KUBE_ERROR_INIT;
    json_t *v = kube_list(c, &KUBE_RES_CONFIGMAPS, "ns1", NULL, &e);
    assert_null(v);
    if (e.reason != want || (needle && !strstr(e.message, needle)))
        fail_msg("got %s \"%s\", want %s \"%s\"", kube_reason_name(e.reason), e.message, kube_reason_name(want),
                 needle ? needle : "");
    kube_error_clear(&e);
    kube_client_free(c);
}

static void expect_ok(struct kube_client *c)
{
    struct kube_error e = KUBE_ERROR_INIT;
    json_t *v = kube_list(c, &KUBE_RES_CONFIGMAPS, "ns1", NULL, &e);
    if (!v)
        fail_msg("%s", e.message);
    json_decref(v);
    kube_client_free(c);
}

static void test_tls_and_auth(void **st)
{
    (void)st;
    expect_fail(client_with("    certificate-authority: wrong-ca.crt", "    tokenFile: token", 1), KUBE_TRANSPORT,
                "is not trusted by CA file");
    {
        /* verification failures are permanent: no retries, and a resuming watch gives up at once */
        struct kube_client *wc = client_with("    certificate-authority: wrong-ca.crt", "    tokenFile: token", 0);
        struct kube_error e = KUBE_ERROR_INIT;
        assert_null(kube_get(wc, &KUBE_RES_CONFIGMAPS, "ns1", "x", &e));
        assert_int_equal(e.permanent, 1);
        int64_t t0 = kube_now_ms();
        assert_int_equal(kube_watch(wc, &KUBE_RES_CONFIGMAPS, "ns1", NULL, NULL, NULL, NULL, NULL, &e), -1);
        assert_int_equal(e.reason, KUBE_TRANSPORT);
        assert_true(kube_now_ms() - t0 < 1000);
        kube_error_clear(&e);
        kube_client_free(wc);
    }
    expect_fail(client_with("    certificate-authority: ca.crt", "    token: nope", 1), KUBE_UNAUTHORIZED, "401");
    expect_fail(client_with("    certificate-authority: ca.crt", "    {}", 1), KUBE_UNAUTHORIZED, NULL);
    expect_ok(client_with("    insecure-skip-tls-verify: true", "    token: tok-A", 1));
    /* CA from certificate-authority-data */
    char path[300], *pem = NULL;
    size_t n = 0;
    snprintf(path, sizeof path, "%s/ca.crt", g_dir);
    assert_int_equal(kube_read_file(path, 1 << 20, &pem, &n, NULL), 0);
    char *b64 = kube_base64_encode(pem, n);
    char *line = kube_strdup_printf("    certificate-authority-data: %s", b64);
    expect_ok(client_with(line, "    token: tok-A", 1));
    free(line);
    free(b64);
    free(pem);
    /* client certificates, from files and from -data */
    expect_ok(client_with("    certificate-authority: ca.crt",
                          "    client-certificate: client.crt\n    client-key: client.key", 1));
    char *cd = NULL, *kd = NULL;
    size_t cn = 0, kn = 0;
    snprintf(path, sizeof path, "%s/client.crt", g_dir);
    assert_int_equal(kube_read_file(path, 1 << 20, &cd, &cn, NULL), 0);
    snprintf(path, sizeof path, "%s/client.key", g_dir);
    assert_int_equal(kube_read_file(path, 1 << 20, &kd, &kn, NULL), 0);
    char *c64 = kube_base64_encode(cd, cn), *k64 = kube_base64_encode(kd, kn);
    line = kube_strdup_printf("    client-certificate-data: %s\n    client-key-data: %s", c64, k64);
    expect_ok(client_with("    certificate-authority: ca.crt", line, 1));
    free(line);
    /* a key that does not match the certificate: a clear TLS client-certificate error */
    line = kube_strdup_printf("    client-certificate-data: %s\n    client-key: ca.key", c64);
    expect_fail(client_with("    certificate-authority: ca.crt", line, 1), KUBE_TRANSPORT, "client certificate");
    free(line);
    free(c64);
    free(k64);
    free(cd);
    free(kd);
    /* tls-server-name: the certificate names apiserver.test, not wrong.test */
    expect_ok(client_with("    certificate-authority: ca.crt\n    tls-server-name: apiserver.test", "    token: tok-A", 1));
    expect_fail(client_with("    certificate-authority: ca.crt\n    tls-server-name: wrong.test", "    token: tok-A", 1),
                KUBE_TRANSPORT, "TLS");
    /* nobody listening: a transport error naming the server, within the retry budget */
    struct kube_config *cfg = kube_config_new_server("http://127.0.0.1:1");
    struct kube_client_opts o;
    kube_client_opts_default(&o);
    o.retry.base_ms = 10;
    int64_t t0 = kube_now_ms();
    expect_fail(kube_client_new(cfg, &o, NULL), KUBE_TRANSPORT, "cannot connect to the API server http://127.0.0.1:1");
    assert_true(kube_now_ms() - t0 < 5000);
}

static void test_token_rotation(void **st)
{
    (void)st;
    struct kube_client *c = good_client();
    struct kube_error e = KUBE_ERROR_INIT;
    json_decref(fault(c, "/fault/token?value=tok-B"));
    assert_null(kube_list(c, &KUBE_RES_CONFIGMAPS, "ns1", NULL, &e));
    assert_int_equal(e.reason, KUBE_UNAUTHORIZED);
    char path[300];
    snprintf(path, sizeof path, "%s/token", g_dir);
    write_text(path, "tok-B\n");
    struct timeval tv[2] = { { 2000000000, 0 }, { 2000000000, 0 } };
    utimes(path, tv);
    json_t *l = kube_list(c, &KUBE_RES_CONFIGMAPS, "ns1", NULL, &e);
    assert_non_null(l);
    json_decref(l);
    json_decref(fault(c, "/fault/token?value=tok-A"));
    write_text(path, "tok-A\n");
    struct timeval tv2[2] = { { 2000000100, 0 }, { 2000000100, 0 } };
    utimes(path, tv2);
    kube_client_free(c);
}

/* ---- watch ---- */

struct wlog {
    pthread_mutex_t mu;
    char text[4096];
    int n;
    struct kube_client *c;
    struct kube_cancel *cancel;
    int rc;
    struct kube_error err;
};

static int wrec(const struct kube_watch_event *ev, void *ud)
{
    struct wlog *w = ud;
    if (ev->type == KUBE_EVENT_BOOKMARK)
        return 0;
    pthread_mutex_lock(&w->mu);
    size_t l = strlen(w->text);
    snprintf(w->text + l, sizeof w->text - l, "%s %s;", kube_event_type_name(ev->type), kube_obj_name(ev->object));
    w->n++;
    pthread_mutex_unlock(&w->mu);
    return 0;
}

static void *watch_thread(void *arg)
{
    struct wlog *w = arg;
    json_t *l = kube_list(w->c, &KUBE_RES_CONFIGMAPS, "wns", NULL, &w->err);
    struct kube_list_opts o = { .resource_version = kube_obj_resource_version(l),
                                .timeout_seconds = 30,
                                .allow_bookmarks = 1 };
    w->rc = kube_watch(w->c, &KUBE_RES_CONFIGMAPS, "wns", &o, wrec, w, w->cancel, NULL, &w->err);
    json_decref(l);
    return NULL;
}

static int wait_count(struct wlog *w, int n)
{
    for (int i = 0; i < 100; i++) {
        pthread_mutex_lock(&w->mu);
        int have = w->n;
        pthread_mutex_unlock(&w->mu);
        if (have >= n)
            return have;
        usleep(50000);
    }
    return -1;
}

static void create_in(struct kube_client *c, const char *ns, const char *name, const char *role)
{
    struct kube_error e = KUBE_ERROR_INIT;
    json_t *o = cm(name, role);
    json_t *r = kube_create(c, &KUBE_RES_CONFIGMAPS, ns, o, &e);
    if (!r)
        fail_msg("create %s: %s", name, e.message);
    json_decref(r);
    json_decref(o);
}

static void test_watch_resume_and_gone(void **st)
{
    (void)st;
    struct kube_client *c = good_client();
    struct wlog w = { .mu = PTHREAD_MUTEX_INITIALIZER, .c = c, .cancel = kube_cancel_new(), .err = KUBE_ERROR_INIT };
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, watch_thread, &w), 0);
    usleep(300000);
    create_in(c, "wns", "a", "worker");
    create_in(c, "wns", "b", "worker");
    assert_int_equal(wait_count(&w, 2), 2);
    json_t *s = fault(c, "/fault/drop-watches");
    json_decref(s);
    create_in(c, "wns", "c", "worker");
    create_in(c, "other", "x", "worker"); /* not in the watched namespace */
    assert_true(wait_count(&w, 3) >= 3);
    usleep(200000);
    pthread_mutex_lock(&w.mu);
    assert_string_equal(w.text, "ADDED a;ADDED b;ADDED c;");
    pthread_mutex_unlock(&w.mu);
    int64_t t0 = kube_now_ms();
    kube_cancel_trigger(w.cancel);
    pthread_join(t, NULL);
    assert_true(kube_now_ms() - t0 < 1000);
    assert_int_equal(w.rc, -1);
    assert_int_equal(w.err.reason, KUBE_CANCELLED);
    kube_error_clear(&w.err);

    /* a compacted resourceVersion: ERROR event with 410 -> KUBE_GONE */
    json_decref(fault(c, "/fault/compact"));
    struct kube_list_opts o = { .resource_version = "101", .timeout_seconds = 5 };
    struct kube_error e = KUBE_ERROR_INIT;
    assert_int_equal(kube_watch_stream(c, &KUBE_RES_CONFIGMAPS, "wns", &o, wrec, &w, NULL, &e), -1);
    assert_int_equal(e.reason, KUBE_GONE);
    assert_int_equal(kube_watch(c, &KUBE_RES_CONFIGMAPS, "wns", &o, wrec, &w, NULL, NULL, &e), -1);
    assert_int_equal(e.reason, KUBE_GONE);
    /* a watch on a forbidden path: non-retryable error straight away */
    kube_error_clear(&e);
    kube_cancel_free(w.cancel);
    kube_client_free(c);
}

/* ---- informer ---- */

struct icount {
    pthread_mutex_t mu;
    int adds, updates, deletes, syncs;
};

static void on_add(const json_t *o, void *ud)
{
    (void)o;
    struct icount *k = ud;
    pthread_mutex_lock(&k->mu);
    k->adds++;
    pthread_mutex_unlock(&k->mu);
}
static void on_update(const json_t *a, const json_t *b, void *ud)
{
    (void)a, (void)b;
    struct icount *k = ud;
    pthread_mutex_lock(&k->mu);
    k->updates++;
    pthread_mutex_unlock(&k->mu);
}
static void on_delete(const json_t *o, void *ud)
{
    (void)o;
    struct icount *k = ud;
    pthread_mutex_lock(&k->mu);
    k->deletes++;
    pthread_mutex_unlock(&k->mu);
}
static void on_synced(void *ud)
{
    struct icount *k = ud;
    pthread_mutex_lock(&k->mu);
    k->syncs++;
    pthread_mutex_unlock(&k->mu);
}

/* Waits (via wait_change) until the informer holds n objects. */
static int wait_informer_count(struct kube_informer *inf, size_t n)
{
    int64_t end = kube_now_ms() + 5000;
    uint64_t g = kube_informer_generation(inf);
    while (kube_informer_count(inf) != n) {
        if (kube_now_ms() > end)
            return 0;
        g = kube_informer_wait_change(inf, g, 500);
    }
    return 1;
}

static void test_informer(void **st)
{
    (void)st;
    struct kube_client *c = good_client();
    create_in(c, "inf", "w0", "worker");
    create_in(c, "inf", "l0", "launcher");
    struct icount k = { .mu = PTHREAD_MUTEX_INITIALIZER };
    struct kube_informer_handlers h = {
        .on_add = on_add, .on_update = on_update, .on_delete = on_delete, .on_synced = on_synced, .ud = &k
    };
    struct kube_informer_opts io = { .ns = "inf", .label_selector = "app=mpi", .page_size = 1, .watch_timeout_s = 30 };
    char *err = NULL;
    struct kube_informer *inf = kube_informer_new(c, &KUBE_RES_CONFIGMAPS, &io, &h, &err);
    assert_non_null(inf);
    assert_int_equal(kube_informer_start(inf, &err), 0);
    assert_int_equal(kube_informer_wait_synced(inf, 5000), 1);
    assert_int_equal(kube_informer_count(inf), 2);
    create_in(c, "inf", "w1", "worker");
    assert_true(wait_informer_count(inf, 3));
    json_t *got = kube_informer_get(inf, "inf", "w1");
    assert_non_null(got);
    assert_string_equal(kube_json_at_str(got, "kind"), "ConfigMap");
    json_decref(got);
    json_t *workers = kube_informer_list(inf, "role=worker", &err);
    assert_int_equal(json_array_size(workers), 2);
    assert_string_equal(kube_obj_name(json_array_get(workers, 0)), "w0");
    json_decref(workers);
    assert_null(kube_informer_list(inf, "role in worker", &err));
    free(err);
    err = NULL;

    /* survives a dropped watch */
    json_decref(fault(c, "/fault/drop-watches"));
    create_in(c, "inf", "w2", "worker");
    assert_true(wait_informer_count(inf, 4));
    /* delete is seen */
    struct kube_error e = KUBE_ERROR_INIT;
    json_decref(kube_delete(c, &KUBE_RES_CONFIGMAPS, "inf", "w2", NULL, &e));
    assert_true(wait_informer_count(inf, 3));
    /* compaction + drop: the resume gets 410 and the informer relists */
    json_decref(fault(c, "/fault/compact"));
    json_decref(fault(c, "/fault/drop-watches"));
    usleep(100000);
    create_in(c, "inf", "w3", "worker");
    json_decref(fault(c, "/fault/compact"));
    assert_true(wait_informer_count(inf, 4));
    pthread_mutex_lock(&k.mu);
    assert_true(k.adds >= 4);
    assert_true(k.deletes == 1);
    assert_true(k.syncs >= 1);
    pthread_mutex_unlock(&k.mu);
    /* a change wakes a waiter */
    uint64_t g = kube_informer_generation(inf);
    json_t *mp = json_pack("{s:{s:s}}", "data", "k", "changed");
    json_decref(kube_patch(c, &KUBE_RES_CONFIGMAPS, "inf", "w0", NULL, KUBE_PATCH_MERGE, mp, &e));
    json_decref(mp);
    assert_true(kube_informer_wait_change(inf, g, 5000) != g);
    int64_t t0 = kube_now_ms();
    kube_informer_free(inf);
    assert_true(kube_now_ms() - t0 < 1500);
    pthread_mutex_lock(&k.mu);
    assert_true(k.updates >= 1);
    pthread_mutex_unlock(&k.mu);
    kube_client_free(c);
}

/* ---- grouped, transformed, compact informer (the operator's kind) ---- */

struct gcount {
    pthread_mutex_t mu;
    int worker_groups, launcher_groups, objects, adds;
};

/* Groups by the role label ("ns/role"); role=skip objects stay out of the cache. */
static char *role_group(const json_t *obj)
{
    const char *role = kube_json_at_str(obj, "metadata", "labels", "role"), *ns = kube_obj_namespace(obj);
    return role && strcmp(role, "skip") != 0 ? kube_strdup_printf("%s/%s", ns ? ns : "", role) : NULL;
}

static void drop_data(json_t *obj) { json_object_del(obj, "data"); }

static void g_on_group(const char *group, void *ud)
{
    struct gcount *k = ud;
    pthread_mutex_lock(&k->mu);
    k->worker_groups += strcmp(group, "grp/worker") == 0;
    k->launcher_groups += strcmp(group, "grp/launcher") == 0;
    pthread_mutex_unlock(&k->mu);
}

static void g_on_object(const char *group, const json_t *obj, void *ud)
{
    struct gcount *k = ud;
    (void)group;
    pthread_mutex_lock(&k->mu);
    k->objects += json_object_get(obj, "data") != NULL; /* before the transform */
    pthread_mutex_unlock(&k->mu);
}

static void g_on_add(const json_t *o, void *ud)
{
    struct gcount *k = ud;
    (void)o;
    pthread_mutex_lock(&k->mu);
    k->adds++;
    pthread_mutex_unlock(&k->mu);
}

/* Waits up to 5 s until *field (guarded by k->mu) exceeds above. */
static int wait_counter(struct gcount *k, const int *field, int above)
{
    for (int i = 0; i < 100; i++) {
        pthread_mutex_lock(&k->mu);
        int v = *field;
        pthread_mutex_unlock(&k->mu);
        if (v > above)
            return 1;
        usleep(50000);
    }
    return 0;
}

static void test_informer_grouped(void **st)
{
    (void)st;
    struct kube_client *c = good_client();
    create_in(c, "grp", "w0", "worker");
    create_in(c, "grp", "w1", "worker");
    create_in(c, "grp", "l0", "launcher");
    create_in(c, "grp", "s0", "skip");
    struct gcount k = { .mu = PTHREAD_MUTEX_INITIALIZER };
    struct kube_informer_handlers h = { .on_add = g_on_add, .on_group = g_on_group, .on_object = g_on_object, .ud = &k };
    struct kube_informer_opts io = {
        .ns = "grp", .page_size = 1, .watch_timeout_s = 30, .index = role_group, .transform = drop_data, .compact = 1
    };
    char *err = NULL;
    struct kube_informer *inf = kube_informer_new(c, &KUBE_RES_CONFIGMAPS, &io, &h, &err);
    assert_non_null(inf);
    assert_int_equal(kube_informer_start(inf, &err), 0);
    assert_int_equal(kube_informer_wait_synced(inf, 5000), 1);
    assert_int_equal(kube_informer_count(inf), 3); /* s0 has no group */
    json_t *workers = kube_informer_group(inf, "grp/worker");
    assert_int_equal(json_array_size(workers), 2);
    json_t *w = json_array_get(workers, 0);
    assert_null(json_object_get(w, "data")); /* transformed */
    assert_string_equal(kube_obj_namespace(w), "grp");
    assert_true(strcmp(kube_obj_name(w), "w0") == 0 || strcmp(kube_obj_name(w), "w1") == 0);
    json_decref(workers);
    json_t *l0 = kube_informer_get_in(inf, "grp/launcher", "l0");
    assert_non_null(l0);
    assert_string_equal(kube_obj_name(l0), "l0");
    json_decref(l0);
    assert_null(kube_informer_get_in(inf, "grp/worker", "l0"));
    json_t *by_scan = kube_informer_get(inf, "grp", "w1");
    assert_non_null(by_scan);
    json_decref(by_scan);
    /* the sync names every group (just after waking wait_synced's waiters) */
    assert_true(wait_counter(&k, &k.worker_groups, 0) && wait_counter(&k, &k.launcher_groups, 0));
    pthread_mutex_lock(&k.mu);
    assert_int_equal(k.objects, 3); /* each grouped one, before the transform */
    assert_int_equal(k.adds, 0);    /* compact: no add/update/delete */
    pthread_mutex_unlock(&k.mu);

    /* write-through: the reply to our own create is there at once, and once only */
    pthread_mutex_lock(&k.mu);
    int workers_before = k.worker_groups;
    pthread_mutex_unlock(&k.mu);
    struct kube_error e = KUBE_ERROR_INIT;
    json_t *o = cm("w2", "worker");
    json_t *reply = kube_create(c, &KUBE_RES_CONFIGMAPS, "grp", o, &e);
    json_decref(o);
    assert_non_null(reply);
    kube_informer_store(inf, reply);
    json_decref(reply);
    json_t *w2 = kube_informer_get_in(inf, "grp/worker", "w2");
    assert_non_null(w2);
    json_decref(w2);
    assert_true(wait_informer_count(inf, 4));
    assert_true(wait_counter(&k, &k.worker_groups, workers_before)); /* the watch's event for it came */
    /* drop: gone from the cache at once */
    kube_informer_drop(inf, "grp/worker", "w2");
    assert_null(kube_informer_get_in(inf, "grp/worker", "w2"));
    /* a watch event of a group notifies it */
    pthread_mutex_lock(&k.mu);
    int before = k.launcher_groups;
    pthread_mutex_unlock(&k.mu);
    create_in(c, "grp", "l1", "launcher");
    assert_true(wait_informer_count(inf, 4));
    assert_true(wait_counter(&k, &k.launcher_groups, before));
    /* the watch's reconnect refused for good (403): the informer relists, which brings back w2
     * (dropped here only) and names every group again */
    pthread_mutex_lock(&k.mu);
    before = k.launcher_groups;
    pthread_mutex_unlock(&k.mu);
    json_decref(fault(c, "/fault/fail?n=1&code=403"));
    json_decref(fault(c, "/fault/drop-watches"));
    assert_true(wait_informer_count(inf, 5));
    assert_true(wait_counter(&k, &k.launcher_groups, before));
    workers = kube_informer_group(inf, "grp/worker");
    assert_int_equal(json_array_size(workers), 3);
    json_decref(workers);
    kube_informer_free(inf);
    kube_client_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_crud),
        cmocka_unit_test(test_list_pagination),
        cmocka_unit_test(test_retries),
        cmocka_unit_test(test_keepalive),
        cmocka_unit_test(test_rate_limit),
        cmocka_unit_test(test_stale_connections),
        cmocka_unit_test(test_malformed_replies),
        cmocka_unit_test(test_tls_and_auth),
        cmocka_unit_test(test_token_rotation),
        cmocka_unit_test(test_watch_resume_and_gone),
        cmocka_unit_test(test_informer),
        cmocka_unit_test(test_informer_grouped),
    };
    return cmocka_run_group_tests(tests, start_server, stop_server);
}
