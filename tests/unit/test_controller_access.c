/* test_controller_access.c - controller/access.c: the start-up RBAC probe against a
 * loopback HTTP server that answers SelfSubjectAccessReviews from a list of granted
 * "verb:resource" pairs (or 403s them), the line naming the mode, RFC 7386 merge
 * patches, and the list + PUT that replaces a patch where only update is granted. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../../controller/access.h"
#include "kube/config.h"
#include "kube/resource.h"

struct fake {
    const char *granted; /* ",verb:resource," pairs the reviews allow */
    int forbidden;       /* 403 for every review */
    const char *list;    /* the body a GET (list) answers */
    char *put;           /* the last PUT body (owned) */
    char *list_query;    /* the last GET's request line (owned) */
    int reviews;
    int lfd;
};

/* Reads one request (headers and Content-Length body) into a new string. */
static char *read_request(int c)
{
    size_t cap = 8192, n = 0;
    char *b = malloc(cap);
    while (b) {
        ssize_t r = recv(c, b + n, cap - n - 1, 0);
        if (r <= 0)
            break;
        n += (size_t)r;
        b[n] = 0;
        char *end = strstr(b, "\r\n\r\n");
        const char *cl = strcasestr(b, "Content-Length:");
        if (end && (!cl || n - (size_t)(end + 4 - b) >= strtoul(cl + 15, NULL, 10)))
            break;
        if (n + 1 >= cap) {
            char *nb = realloc(b, cap *= 2);
            if (!nb)
                break;
            b = nb;
        }
    }
    return b;
}

/* "verb:resource" of a review body, checked against f->granted. */
static int granted(const struct fake *f, const char *body)
{
    json_t *j = json_loads(body, 0, NULL);
    json_t *ra = json_object_get(json_object_get(j, "spec"), "resourceAttributes");
    char key[128];
    snprintf(key, sizeof key, ",%s:%s,", json_string_value(json_object_get(ra, "verb")),
             json_string_value(json_object_get(ra, "resource")));
    json_decref(j);
    return strstr(f->granted, key) != NULL;
}

static const char *answer(struct fake *f, const char *req, int *code, char **owned)
{
    const char *body = strstr(req, "\r\n\r\n");
    body = body ? body + 4 : "";
    *code = 200;
    if (!strncmp(req, "POST /apis/authorization.k8s.io/v1/selfsubjectaccessreviews", 59)) {
        f->reviews++;
        if (f->forbidden) {
            *code = 403;
            return "{\"kind\":\"Status\",\"status\":\"Failure\",\"reason\":\"Forbidden\",\"code\":403,"
                   "\"message\":\"no reviews here\"}";
        }
        *code = 201;
        *owned = strdup(granted(f, body) ? "{\"status\":{\"allowed\":true}}" : "{\"status\":{\"allowed\":false}}");
        return *owned;
    }
    if (!strncmp(req, "GET ", 4)) {
        free(f->list_query);
        f->list_query = strndup(req, strcspn(req, "\r"));
        return f->list;
    }
    if (!strncmp(req, "PUT ", 4)) {
        free(f->put);
        f->put = strdup(body);
        return body;
    }
    *code = 405;
    return "{}";
}

/* One request per connection (Connection: close). */
static void *serve(void *arg)
{
    struct fake *f = arg;
    for (;;) {
        int c = accept(f->lfd, NULL, NULL);
        if (c < 0)
            return NULL;
        char *req = read_request(c);
        if (req) {
            int code;
            char *owned = NULL;
            const char *body = answer(f, req, &code, &owned);
            char head[256];
            int hl = snprintf(head, sizeof head,
                              "HTTP/1.1 %d X\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n"
                              "Connection: close\r\n\r\n",
                              code, strlen(body));
            if (send(c, head, (size_t)hl, MSG_NOSIGNAL) < 0 || send(c, body, strlen(body), MSG_NOSIGNAL) < 0)
                fprintf(stderr, "fake server: send failed\n");
            free(owned);
            free(req);
        }
        close(c);
    }
}

static pthread_t serve_thread;

static struct kube_client *start(struct fake *f)
{
    f->lfd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(f->lfd >= 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t al = sizeof a;
    assert_int_equal(bind(f->lfd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(f->lfd, 8), 0);
    assert_int_equal(getsockname(f->lfd, (struct sockaddr *)&a, &al), 0);
    assert_int_equal(pthread_create(&serve_thread, NULL, serve, f), 0);
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d", ntohs(a.sin_port));
    struct kube_client_opts o;
    kube_client_opts_default(&o);
    o.retry.max_attempts = 1;
    char *cerr = NULL;
    struct kube_client *c = kube_client_new(kube_config_new_server(url), &o, &cerr);
    assert_non_null(c);
    return c;
}

static void stop(struct fake *f, struct kube_client *c)
{
    kube_client_free(c);
    shutdown(f->lfd, SHUT_RDWR);
    close(f->lfd);
    pthread_join(serve_thread, NULL);
    free(f->put);
    free(f->list_query);
}

#define OURS                                                                                                                \
    ",create:serviceaccounts,create:roles,create:rolebindings,patch:configmaps,patch:jobs,get:configmaps,"                  \
    "create:configmaps,list:events,"
/* upstream v2beta1's mpi-operator ClusterRole: update, no patch, no RBAC objects */
#define UPSTREAM ",create:configmaps,update:configmaps,create:jobs,update:jobs,create:pods,"

static void test_probe_full(void **st)
{
    (void)st;
    struct fake f = { .granted = OURS };
    struct kube_client *c = start(&f);
    struct access_rights a;
    assert_int_equal(access_probe(c, "ns1", &a), 0);
    assert_true(a.launcher_rbac && a.patch_configmaps && a.patch_jobs && a.launcher_log && a.launcher_events);
    assert_int_equal(f.reviews, 8);
    stop(&f, c);
    char *line = access_describe(&a);
    assert_non_null(strstr(line, "full mode"));
    free(line);
}

/* An operator role from before the launcher log (no get on configmaps): Roles without it,
 * since the RBAC escalation check would refuse a Role granting more than the operator has. */
static void test_probe_no_log(void **st)
{
    (void)st;
    struct fake f = { .granted = ",create:serviceaccounts,create:roles,create:rolebindings,patch:configmaps,patch:jobs,"
                                 "create:configmaps," };
    struct kube_client *c = start(&f);
    struct access_rights a;
    assert_int_equal(access_probe(c, "ns1", &a), 0);
    assert_true(a.launcher_rbac && a.patch_configmaps && a.patch_jobs);
    assert_false(a.launcher_log);
    assert_false(a.launcher_events); /* nor events list (from before preemptor naming): Roles without it */
    stop(&f, c);
}

static void test_probe_upstream(void **st)
{
    (void)st;
    struct fake f = { .granted = UPSTREAM };
    struct kube_client *c = start(&f);
    struct access_rights a;
    assert_int_equal(access_probe(c, NULL, &a), 3);
    assert_false(a.launcher_rbac);
    assert_false(a.patch_configmaps);
    assert_false(a.patch_jobs);
    assert_false(a.launcher_log);
    assert_false(a.launcher_events);
    stop(&f, c);
    char *line = access_describe(&a);
    assert_non_null(strstr(line, "no create on serviceaccounts, roles or rolebindings"));
    assert_non_null(strstr(line, "no patch on configmaps and jobs"));
    assert_non_null(strstr(line, "limited mode"));
    assert_null(strcasestr(line, "forbidden")); /* e2e 14 fails on that word in the log */
    free(line);
}

/* One missing grant of three is enough to leave the launcher without a Role. */
static void test_probe_partial(void **st)
{
    (void)st;
    struct fake f = { .granted = ",create:serviceaccounts,create:roles,patch:configmaps," };
    struct kube_client *c = start(&f);
    struct access_rights a;
    assert_int_equal(access_probe(c, "ns1", &a), 2);
    assert_false(a.launcher_rbac);
    assert_true(a.patch_configmaps);
    assert_false(a.patch_jobs);
    stop(&f, c);
    char *line = access_describe(&a);
    assert_non_null(strstr(line, "no patch on jobs:"));
    free(line);
}

/* Reviews that cannot be made leave the full mode (as before the probe). */
static void test_probe_refused(void **st)
{
    (void)st;
    struct fake f = { .granted = "", .forbidden = 1 };
    struct kube_client *c = start(&f);
    struct access_rights a;
    assert_int_equal(access_probe(c, "ns1", &a), 0);
    assert_true(a.launcher_rbac && a.patch_configmaps && a.patch_jobs && a.launcher_log);
    stop(&f, c);
}

static void test_merge_patch(void **st)
{
    (void)st;
    json_t *t = json_loads("{\"a\":1,\"b\":{\"c\":2,\"d\":3},\"e\":[1,2],\"f\":\"x\"}", 0, NULL);
    json_t *p =
        json_loads("{\"a\":null,\"b\":{\"c\":null,\"g\":4},\"e\":[3],\"h\":{\"i\":null,\"j\":5},\"f\":{\"k\":1}}", 0, NULL);
    access_merge_patch(t, p);
    json_t *want = json_loads("{\"b\":{\"d\":3,\"g\":4},\"e\":[3],\"h\":{\"j\":5},\"f\":{\"k\":1}}", 0, NULL);
    assert_true(json_equal(t, want));
    json_decref(t);
    json_decref(p);
    json_decref(want);
}

static void test_update_merge(void **st)
{
    (void)st;
    struct fake f = { .granted = "",
                      .list = "{\"kind\":\"ConfigMapList\",\"items\":[{\"metadata\":{\"name\":\"j-config\","
                              "\"namespace\":\"ns1\",\"resourceVersion\":\"7\",\"labels\":{\"user\":\"kept\"}},"
                              "\"data\":{\"hostfile\":\"old\",\"gone\":\"x\"}}]}" };
    struct kube_client *c = start(&f);
    json_t *patch =
        json_loads("{\"data\":{\"hostfile\":\"new\",\"gone\":null},\"metadata\":{\"resourceVersion\":\"6\"}}", 0, NULL);
    struct kube_error err = KUBE_ERROR_INIT;
    json_t *res = access_update_merge(c, &KUBE_RES_CONFIGMAPS, "ns1", "j-config", patch, &err);
    assert_non_null(res);
    assert_non_null(strstr(f.list_query, "GET /api/v1/namespaces/ns1/configmaps?"));
    assert_non_null(strstr(f.list_query, "fieldSelector=metadata.name%3Dj-config"));
    json_t *put = json_loads(f.put, 0, NULL);
    json_t *want = json_loads("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"j-config\","
                              "\"namespace\":\"ns1\",\"resourceVersion\":\"6\",\"labels\":{\"user\":\"kept\"}},"
                              "\"data\":{\"hostfile\":\"new\"}}",
                              0, NULL);
    assert_true(json_equal(put, want)); /* the patch's resourceVersion: a stale cache conflicts */
    json_decref(put);
    json_decref(want);
    json_decref(res);
    /* gone meanwhile: NotFound */
    f.list = "{\"kind\":\"ConfigMapList\",\"items\":[]}";
    res = access_update_merge(c, &KUBE_RES_CONFIGMAPS, "ns1", "j-config", patch, &err);
    assert_null(res);
    assert_int_equal(err.reason, KUBE_NOT_FOUND);
    kube_error_clear(&err);
    json_decref(patch);
    stop(&f, c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_probe_full),    cmocka_unit_test(test_probe_no_log),  cmocka_unit_test(test_probe_upstream),
        cmocka_unit_test(test_probe_partial), cmocka_unit_test(test_probe_refused), cmocka_unit_test(test_merge_patch),
        cmocka_unit_test(test_update_merge),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
