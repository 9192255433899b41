/* test_controller_crds.c - the custom resource descriptors (controller/crds.c) and the
 * discovery of the served MPIJob version against a loopback HTTP server answering the
 * discovery documents an API server would (group, version resource lists, 404, 403). */
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

#include "../../controller/crds.h"
#include "kube/config.h"

/* What the fake server answers: the group document (NULL = 404), each version's resource
 * list (NULL = 404), or 403 for everything. */
struct fake {
    const char *group, *v2beta1, *v1alpha2;
    int forbidden;
    int lfd;
};

static const char *answer(const struct fake *f, const char *path, int *code)
{
    const char *body = NULL;
    if (!strcmp(path, "/apis/kubeflow.org"))
        body = f->group;
    else if (!strcmp(path, "/apis/kubeflow.org/v2beta1"))
        body = f->v2beta1;
    else if (!strcmp(path, "/apis/kubeflow.org/v1alpha2"))
        body = f->v1alpha2;
    *code = f->forbidden ? 403 : body ? 200 : 404;
    if (f->forbidden)
        return "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"reason\":\"Forbidden\","
               "\"code\":403,\"message\":\"forbidden: User \\\"x\\\" cannot get path \\\"/apis/kubeflow.org\\\"\"}";
    return body ? body
                : "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"reason\":\"NotFound\","
                  "\"code\":404,\"message\":\"the server could not find the requested resource\"}";
}

/* One request per connection (Connection: close). */
static void *serve(void *arg)
{
    struct fake *f = arg;
    for (;;) {
        int c = accept(f->lfd, NULL, NULL);
        if (c < 0)
            return NULL;
        char req[4096];
        ssize_t n = recv(c, req, sizeof req - 1, 0);
        if (n > 0) {
            req[n] = 0;
            char path[256] = "";
            if (sscanf(req, "GET %255s", path) != 1)
                path[0] = 0;
            int code;
            const char *body = answer(f, path, &code);
            char head[256];
            int hl = snprintf(head, sizeof head,
                              "HTTP/1.1 %d X\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n"
                              "Connection: close\r\n\r\n",
                              code, strlen(body));
            if (send(c, head, (size_t)hl, MSG_NOSIGNAL) < 0 || send(c, body, strlen(body), MSG_NOSIGNAL) < 0)
                fprintf(stderr, "fake server: send failed\n");
        }
        close(c);
    }
}

/* Runs discovery against a fresh fake server; returns crds_mpijob_discover's result. */
static int discover(struct fake *f, const struct kube_resource **out, char **err)
{
    f->lfd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(f->lfd >= 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t al = sizeof a;
    assert_int_equal(bind(f->lfd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(f->lfd, 8), 0);
    assert_int_equal(getsockname(f->lfd, (struct sockaddr *)&a, &al), 0);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, serve, f), 0);
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d", ntohs(a.sin_port));
    struct kube_client_opts o;
    kube_client_opts_default(&o);
    o.retry.max_attempts = 1;
    char *cerr = NULL;
    struct kube_client *c = kube_client_new(kube_config_new_server(url), &o, &cerr);
    assert_non_null(c);
    int rc = crds_mpijob_discover(c, out, err);
    kube_client_free(c);
    shutdown(f->lfd, SHUT_RDWR);
    close(f->lfd);
    pthread_join(t, NULL);
    return rc;
}

#define GROUP(vs) "{\"kind\":\"APIGroup\",\"name\":\"kubeflow.org\",\"versions\":[" vs "]}"
#define GV(v) "{\"groupVersion\":\"kubeflow.org/" v "\",\"version\":\"" v "\"}"
#define LIST(res) "{\"kind\":\"APIResourceList\",\"resources\":[{\"name\":\"" res "\",\"namespaced\":true}]}"

static void test_prefers_v2beta1(void **st)
{
    (void)st;
    struct fake f = { GROUP(GV("v2beta1") "," GV("v1alpha2")), LIST("mpijobs"), LIST("mpijobs"), 0, -1 };
    const struct kube_resource *r = NULL;
    char *err = NULL;
    assert_int_equal(discover(&f, &r, &err), 1);
    assert_ptr_equal(r, &MPIJOB_RES_V2BETA1);
    assert_null(err);
}

static void test_v1alpha2_alone(void **st)
{
    (void)st;
    struct fake f = { GROUP(GV("v1alpha2")), NULL, LIST("mpijobs"), 0, -1 };
    const struct kube_resource *r = NULL;
    char *err = NULL;
    assert_int_equal(discover(&f, &r, &err), 1);
    assert_ptr_equal(r, &MPIJOB_RES_V1ALPHA2);
}

/* kubeflow.org/v2beta1 served by another CRD (no mpijobs there): v1alpha2's mpijobs win. */
static void test_version_without_mpijobs(void **st)
{
    (void)st;
    struct fake f = { GROUP(GV("v2beta1") "," GV("v1alpha2")), LIST("tfjobs"), LIST("mpijobs"), 0, -1 };
    const struct kube_resource *r = NULL;
    char *err = NULL;
    assert_int_equal(discover(&f, &r, &err), 1);
    assert_ptr_equal(r, &MPIJOB_RES_V1ALPHA2);
}

static void test_not_served(void **st)
{
    (void)st;
    const struct kube_resource *r = NULL;
    char *err = NULL;
    struct fake none = { NULL, NULL, NULL, 0, -1 };
    assert_int_equal(discover(&none, &r, &err), 0);
    assert_null(r);
    assert_null(err);
    struct fake other = { GROUP(GV("v1")), NULL, NULL, 0, -1 };
    assert_int_equal(discover(&other, &r, &err), 0);
    assert_null(r);
}

static void test_forbidden_is_an_error(void **st)
{
    (void)st;
    struct fake f = { NULL, NULL, NULL, 1, -1 };
    const struct kube_resource *r = NULL;
    char *err = NULL;
    assert_int_equal(discover(&f, &r, &err), -1);
    assert_non_null(err);
    assert_non_null(strstr(err, "GET /apis/kubeflow.org"));
    assert_non_null(strstr(err, "forbidden"));
    free(err);
}

static void test_descriptors(void **st)
{
    (void)st;
    assert_ptr_equal(crds_mpijob_resource("kubeflow.org/v1alpha2"), &MPIJOB_RES_V1ALPHA2);
    assert_ptr_equal(crds_mpijob_resource("kubeflow.org/v2beta1"), &MPIJOB_RES_V2BETA1);
    assert_ptr_equal(crds_mpijob_resource(NULL), &MPIJOB_RES_V2BETA1);
    assert_ptr_equal(crds_podgroup_resource("scheduling.x-k8s.io/v1alpha1"), &PODGROUP_RES_SCHED_PLUGINS);
    assert_ptr_equal(crds_podgroup_resource("scheduling.volcano.sh/v1beta1"), &PODGROUP_RES_VOLCANO);
    assert_ptr_equal(crds_podgroup_resource_for_scheduler("volcano"), &PODGROUP_RES_VOLCANO);
    assert_ptr_equal(crds_podgroup_resource_for_scheduler("scheduler-plugins-scheduler"), &PODGROUP_RES_SCHED_PLUGINS);
    char *p = kube_resource_path(&MPIJOB_RES_V1ALPHA2, "ns", "pi", "status");
    assert_string_equal(p, "/apis/kubeflow.org/v1alpha2/namespaces/ns/mpijobs/pi/status");
    free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_prefers_v2beta1),         cmocka_unit_test(test_v1alpha2_alone),
        cmocka_unit_test(test_version_without_mpijobs), cmocka_unit_test(test_not_served),
        cmocka_unit_test(test_forbidden_is_an_error),   cmocka_unit_test(test_descriptors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
