/* test_lib_kubesim.c - the client library against kubesim (a real HTTPS API
 * server with its own CA and RBAC): CRUD and Status errors, pagination, the
 * status subresource, and watch/informer continuity across an API server
 * restart. Runs only under `kubesim run` (KUBESIM_DIR set), driven by
 * tests/integration/lib_client.sh; skipped otherwise. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kube/kube.h"

static struct kube_client *g_c;

static int setup(void **st)
{
    (void)st;
    if (!getenv("KUBESIM_DIR"))
        return 0;
    struct kube_config *cfg = NULL;
    char *err = NULL;
    if (kube_config_load(NULL, NULL, &cfg, &err)) {
        fprintf(stderr, "config: %s\n", err);
        return -1;
    }
    g_c = kube_client_new(cfg, NULL, &err);
    return g_c ? 0 : -1;
}

static int teardown(void **st)
{
    (void)st;
    kube_client_free(g_c);
    return 0;
}

#define NEED_KUBESIM()                                                                                                      \
    do {                                                                                                                    \
        if (!g_c)                                                                                                           \
            skip();                                                                                                         \
    } while (0)

static json_t *cm(const char *name, const char *val)
{
    return json_pack("{s:s, s:s, s:{s:s, s:{s:s}}, s:{s:s}}", "apiVersion", "v1", "kind", "ConfigMap", "metadata", "name",
                     name, "labels", "lib-test", "1", "data", "k", val);
}

static void test_crud(void **st)
{
    (void)st;
    NEED_KUBESIM();
    struct kube_error e = KUBE_ERROR_INIT;
    json_t *o = cm("crud", "v1");
    json_t *c1 = kube_create(g_c, &KUBE_RES_CONFIGMAPS, "default", o, &e);
    if (!c1)
        fail_msg("create: %s", e.message);
    assert_non_null(kube_obj_uid(c1));
    assert_null(kube_create(g_c, &KUBE_RES_CONFIGMAPS, "default", o, &e));
    assert_int_equal(e.reason, KUBE_ALREADY_EXISTS);
    json_t *g = kube_get(g_c, &KUBE_RES_CONFIGMAPS, "default", "crud", &e);
    assert_non_null(g);
    json_object_set_new(json_object_get(g, "data"), "k", json_string("v2"));
    json_t *u = kube_update(g_c, &KUBE_RES_CONFIGMAPS, "default", NULL, g, &e);
    if (!u)
        fail_msg("update: %s", e.message);
    assert_null(kube_update(g_c, &KUBE_RES_CONFIGMAPS, "default", NULL, g, &e)); /* stale resourceVersion */
    assert_int_equal(e.reason, KUBE_CONFLICT);
    assert_int_equal(e.http_code, 409);
    json_t *mp = json_pack("{s:{s:s}}", "data", "m", "merged");
    json_t *p1 = kube_patch(g_c, &KUBE_RES_CONFIGMAPS, "default", "crud", NULL, KUBE_PATCH_MERGE, mp, &e);
    if (!p1)
        fail_msg("merge patch: %s", e.message);
    assert_string_equal(kube_json_at_str(p1, "data", "m"), "merged");
    assert_string_equal(kube_json_at_str(p1, "data", "k"), "v2");
    json_t *jp = json_pack("[{s:s, s:s}]", "op", "remove", "path", "/data/k");
    json_t *p2 = kube_patch(g_c, &KUBE_RES_CONFIGMAPS, "default", "crud", NULL, KUBE_PATCH_JSON, jp, &e);
    if (!p2)
        fail_msg("json patch: %s", e.message);
    assert_null(kube_json_at_str(p2, "data", "k"));
    struct kube_delete_opts d = { .propagation_policy = "Background" };
    json_t *del = kube_delete(g_c, &KUBE_RES_CONFIGMAPS, "default", "crud", &d, &e);
    if (!del)
        fail_msg("delete: %s", e.message);
    assert_null(kube_get(g_c, &KUBE_RES_CONFIGMAPS, "default", "crud", &e));
    assert_int_equal(e.reason, KUBE_NOT_FOUND);
    assert_non_null(strstr(e.message, "crud"));
    assert_null(kube_create(g_c, &KUBE_RES_CONFIGMAPS, "no-such-namespace", o, &e));
    assert_int_equal(e.reason, KUBE_NOT_FOUND);
    json_t *bad = json_pack("{s:{s:s}}", "metadata", "name", "Not_A_Valid_Name");
    json_t *r = kube_create(g_c, &KUBE_RES_CONFIGMAPS, "default", bad, &e);
    if (r)
        fail_msg("kubesim accepted an invalid name");
    assert_true(e.reason == KUBE_INVALID || e.reason == KUBE_BAD_REQUEST);
    json_decref(bad);
    json_decref(del);
    json_decref(p2);
    json_decref(jp);
    json_decref(p1);
    json_decref(mp);
    json_decref(u);
    json_decref(g);
    json_decref(c1);
    json_decref(o);
    kube_error_clear(&e);
}

static void test_pagination(void **st)
{
    (void)st;
    NEED_KUBESIM();
    struct kube_error e = KUBE_ERROR_INIT;
    for (int i = 0; i < 5; i++) {
        char n[32];
        snprintf(n, sizeof n, "page-%d", i);
        json_t *o = cm(n, "x");
        json_t *r = kube_create(g_c, &KUBE_RES_CONFIGMAPS, "default", o, &e);
        if (!r)
            fail_msg("create: %s", e.message);
        json_decref(r);
        json_decref(o);
    }
    struct kube_list_opts lo = { .label_selector = "lib-test=1", .limit = 2 };
    json_t *p = kube_list(g_c, &KUBE_RES_CONFIGMAPS, "default", &lo, &e);
    assert_non_null(p);
    assert_int_equal(json_array_size(json_object_get(p, "items")), 2);
    const char *cont = kube_json_at_str(p, "metadata", "continue");
    if (!cont || !*cont)
        fail_msg("kubesim returned no continue token for limit=2 over 5 objects");
    json_t *all = kube_list_all(g_c, &KUBE_RES_CONFIGMAPS, "default", &lo, &e);
    assert_non_null(all);
    assert_int_equal(json_array_size(json_object_get(all, "items")), 5);
    json_decref(all);
    json_decref(p);
}

static void test_status_subresource(void **st)
{
    (void)st;
    NEED_KUBESIM();
    struct kube_error e = KUBE_ERROR_INIT;
    json_t *pod = json_pack("{s:s, s:s, s:{s:s}, s:{s:s, s:[{s:s, s:s, s:[s,s]}]}}", "apiVersion", "v1", "kind", "Pod",
                            "metadata", "name", "lib-ghost", "spec", "nodeName", "ghost", "containers", "name", "c", "image",
                            "busybox", "command", "sleep", "3600");
    json_t *created = kube_create(g_c, &KUBE_RES_PODS, "default", pod, &e);
    if (!created)
        fail_msg("create pod: %s", e.message);
    json_t *sp = json_pack("{s:{s:s, s:s}}", "status", "phase", "Running", "podIP", "10.250.9.8");
    json_t *p = kube_patch(g_c, &KUBE_RES_PODS, "default", "lib-ghost", "status", KUBE_PATCH_MERGE, sp, &e);
    if (!p)
        fail_msg("status patch: %s", e.message);
    json_t *s = kube_get_status(g_c, &KUBE_RES_PODS, "default", "lib-ghost", &e);
    assert_non_null(s);
    assert_string_equal(kube_json_at_str(s, "status", "podIP"), "10.250.9.8");
    json_object_set_new(json_object_get(s, "status"), "phase", json_string("Succeeded"));
    json_t *u = kube_update_status(g_c, &KUBE_RES_PODS, "default", "lib-ghost", s, &e);
    if (!u)
        fail_msg("status update: %s", e.message);
    assert_string_equal(kube_json_at_str(u, "status", "phase"), "Succeeded");
    struct kube_delete_opts d = { .set_grace_period = 1, .grace_period_seconds = 0 };
    json_decref(kube_delete(g_c, &KUBE_RES_PODS, "default", "lib-ghost", &d, &e));
    json_decref(u);
    json_decref(s);
    json_decref(p);
    json_decref(sp);
    json_decref(created);
    json_decref(pod);
    kube_error_clear(&e);
}

/* Waits up to ms for path to exist. */
static int wait_file(const char *path, int ms)
{
    for (int i = 0; i < ms / 50; i++) {
        if (access(path, F_OK) == 0)
            return 1;
        usleep(50000);
    }
    return 0;
}

static int wait_count(struct kube_informer *inf, size_t n, long ms)
{
    int64_t end = kube_now_ms() + ms;
    uint64_t g = kube_informer_generation(inf);
    while (kube_informer_count(inf) != n) {
        if (kube_now_ms() > end)
            return 0;
        g = kube_informer_wait_change(inf, g, 200);
    }
    return 1;
}

/* An informer keeps working across `kubesim fault restart-apiserver`, done by the driving
 * script between the marker files $KUBESIM_DIR/lib-ready and $KUBESIM_DIR/lib-restarted. */
static void test_informer_across_restart(void **st)
{
    (void)st;
    NEED_KUBESIM();
    char *err = NULL, ready[512], restarted[512];
    snprintf(ready, sizeof ready, "%s/lib-ready", getenv("KUBESIM_DIR"));
    snprintf(restarted, sizeof restarted, "%s/lib-restarted", getenv("KUBESIM_DIR"));
    struct kube_informer_opts io = { .ns = "default", .label_selector = "lib-test=1", .page_size = 2 };
    struct kube_informer *inf = kube_informer_new(g_c, &KUBE_RES_CONFIGMAPS, &io, NULL, &err);
    assert_non_null(inf);
    assert_int_equal(kube_informer_start(inf, &err), 0);
    assert_int_equal(kube_informer_wait_synced(inf, 10000), 1);
    assert_int_equal(kube_informer_count(inf), 5);
    FILE *f = fopen(ready, "w");
    assert_non_null(f);
    fclose(f);
    if (!getenv("LIB_NO_RESTART") && !wait_file(restarted, 60000))
        fail_msg("the driving script did not restart the API server");
    struct kube_error e = KUBE_ERROR_INIT;
    json_t *o = cm("after-restart", "y");
    json_t *r = NULL;
    for (int i = 0; i < 50 && !r; i++) { /* the server may still be coming back */
        r = kube_create(g_c, &KUBE_RES_CONFIGMAPS, "default", o, &e);
        if (!r && e.reason != KUBE_ALREADY_EXISTS)
            usleep(200000);
        else if (!r)
            break;
    }
    if (!r && e.reason != KUBE_ALREADY_EXISTS)
        fail_msg("create after restart: %s", e.message);
    int64_t t0 = kube_now_ms();
    if (!wait_count(inf, 6, 20000)) {
        char *le = kube_informer_last_error(inf);
        fail_msg("informer did not see the object created after the restart (count %zu, last error %s)",
                 kube_informer_count(inf), le ? le : "none");
    }
    fprintf(stderr, "informer saw the post-restart object %lld ms after its creation\n", (long long)(kube_now_ms() - t0));
    json_t *got = kube_informer_get(inf, "default", "after-restart");
    assert_non_null(got);
    json_decref(got);
    json_decref(kube_delete(g_c, &KUBE_RES_CONFIGMAPS, "default", "page-0", NULL, &e));
    assert_true(wait_count(inf, 5, 10000));
    t0 = kube_now_ms();
    kube_informer_free(inf);
    assert_true(kube_now_ms() - t0 < 2000);
    json_decref(r);
    json_decref(o);
    kube_error_clear(&e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_crud),
        cmocka_unit_test(test_pagination),
        cmocka_unit_test(test_status_subresource),
        cmocka_unit_test(test_informer_across_restart),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
