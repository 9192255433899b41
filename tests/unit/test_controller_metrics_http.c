/* test_controller_metrics_http.c - the monitoring endpoint (controller/metrics_http.c) over
 * real loopback sockets: clients that send half a request, or connect and send nothing, do
 * not delay another client's /healthz (answered within HEALTHZ_BOUND_MS), and the
 * server closes the stalled connections after its idle deadline (METRICS_HTTP_TIMEOUT_S, 5 s).
 * And two controllers in one process (struct controller owns its registry and server) keep
 * their metrics apart. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "../../controller/controller.h"
#include "../../controller/health.h"
#include "../../controller/metrics.h"
#include "kube/config.h"
#include "../../controller/metrics_http.h"

/* /healthz must answer this fast while other clients stall (the old one-at-a-time server
 * needed its 2 s read timeout per stalled client). */
#define HEALTHZ_BOUND_MS 1000
/* The server's idle deadline is 5 s; a stalled connection must be closed by then + slack. */
#define CLOSE_BOUND_MS 8000

static int port;
static struct metrics *reg;
static struct metrics_server *srv;

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int connect_lo(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    return fd;
}

static void send_all(int fd, const char *s)
{
    size_t n = strlen(s);
    assert_int_equal(send(fd, s, n, MSG_NOSIGNAL), (ssize_t)n);
}

/* Reads until EOF or bound_ms; returns the reply (new string). */
static char *read_reply(int fd, int bound_ms)
{
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    assert_non_null(buf);
    int64_t end = now_ms() + bound_ms;
    for (;;) {
        int left = (int)(end - now_ms());
        struct pollfd p = { fd, POLLIN, 0 };
        if (left <= 0 || poll(&p, 1, left) <= 0)
            break;
        if (len + 1024 > cap) {
            cap *= 2;
            buf = realloc(buf, cap);
            assert_non_null(buf);
        }
        ssize_t r = recv(fd, buf + len, cap - len - 1, 0);
        if (r <= 0)
            break;
        len += (size_t)r;
    }
    buf[len] = 0;
    return buf;
}

/* GET path on a new connection to port p; asserts the status line and that it came within bound_ms. */
static char *get_at(int p, const char *path, const char *want_status, int bound_ms)
{
    int saved = port;
    port = p;
    int fd = connect_lo();
    port = saved;
    char req[256];
    snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n", path);
    int64_t t0 = now_ms();
    send_all(fd, req);
    char *r = read_reply(fd, bound_ms + 1000);
    int64_t took = now_ms() - t0;
    close(fd);
    if (strncmp(r, want_status, strlen(want_status)) != 0)
        fail_msg("GET %s: want '%s', got '%.80s'", path, want_status, r);
    if (took > bound_ms)
        fail_msg("GET %s took %lld ms (bound %d ms)", path, (long long)took, bound_ms);
    return r;
}

/* 1 when the server closed fd (EOF or reset) within bound_ms, sending nothing else. */
static int closed_within(int fd, int bound_ms, int64_t *when)
{
    int64_t end = now_ms() + bound_ms;
    char b[256];
    for (;;) {
        int left = (int)(end - now_ms());
        struct pollfd p = { fd, POLLIN, 0 };
        if (left <= 0 || poll(&p, 1, left) <= 0)
            return 0;
        ssize_t r = recv(fd, b, sizeof b, 0);
        if (r == 0 || (r < 0 && errno == ECONNRESET)) {
            *when = now_ms();
            return 1;
        }
        if (r > 0 && strncmp(b, "HTTP/1.1 408", 12) != 0)
            return 0; /* an answer to half a request */
    }
}

static char *get(const char *path, const char *want_status, int bound_ms)
{
    return get_at(port, path, want_status, bound_ms);
}

/* A free-looking port for attempt i (bind decides). */
static int pick_port(int i) { return 20000 + (int)((getpid() * 7 + i * 131) % 30000); }

static int setup(void **s)
{
    (void)s;
    reg = metrics_new();
    if (!reg)
        return -1;
    char *err = NULL;
    for (int i = 0; i < 50; i++) {
        port = pick_port(i);
        if ((srv = metrics_http_serve(reg, port, &err)) != NULL)
            return 0;
        free(err);
        err = NULL;
    }
    return -1;
}

static int teardown(void **s)
{
    (void)s;
    metrics_http_stop(srv);
    metrics_free(reg);
    return 0;
}

static void test_stalled_clients_do_not_block_healthz(void **s)
{
    (void)s;
    free(get("/healthz", "HTTP/1.1 200", HEALTHZ_BOUND_MS)); /* warm: the server answers */
    int64_t t0 = now_ms();
    int half = connect_lo();
    send_all(half, "GET /heal"); /* half a request line, then silence */
    int mute = connect_lo();     /* connects, sends nothing, reads nothing */
    int slow = connect_lo();
    send_all(slow, "GET /metrics HTTP/1.1\r\nHost: x\r\n"); /* headers never finished */
    for (int i = 0; i < 5; i++) {
        char *r = get("/healthz", "HTTP/1.1 200", HEALTHZ_BOUND_MS);
        assert_non_null(strstr(r, "\r\n\r\nok\n"));
        free(r);
        char *m = get("/metrics", "HTTP/1.1 200", HEALTHZ_BOUND_MS);
        assert_non_null(strstr(m, "text/plain; version=0.0.4"));
        assert_non_null(strstr(m, "\nmpi_operator_is_leader "));
        free(m);
    }
    int64_t when[3] = { 0, 0, 0 };
    assert_true(closed_within(half, CLOSE_BOUND_MS, &when[0]));
    assert_true(closed_within(mute, CLOSE_BOUND_MS, &when[1]));
    assert_true(closed_within(slow, CLOSE_BOUND_MS, &when[2]));
    for (int i = 0; i < 3; i++)
        if (when[i] - t0 < 4000)
            fail_msg("stalled connection %d closed after %lld ms, before the 5 s deadline", i, (long long)(when[i] - t0));
    close(half);
    close(mute);
    close(slow);
}

static void test_healthz_names_stalled_loop(void **s)
{
    (void)s;
    health_arm_at(H_MAIN, 1000, 0); /* beat at boot, bound 1 s: long stalled */
    char *r = get("/healthz", "HTTP/1.1 503", HEALTHZ_BOUND_MS);
    assert_non_null(strstr(r, "\r\n\r\nmain loop stalled for "));
    free(r);
    health_disarm(H_MAIN);
    free(get("/healthz", "HTTP/1.1 200", HEALTHZ_BOUND_MS));
    metrics_set_ready(reg, 0);
    r = get("/readyz", "HTTP/1.1 503", HEALTHZ_BOUND_MS);
    assert_non_null(strstr(r, "caches not synced\n"));
    free(r);
    metrics_set_ready(reg, 1);
    free(get("/readyz", "HTTP/1.1 200", HEALTHZ_BOUND_MS));
    r = get("/nope", "HTTP/1.1 404", HEALTHZ_BOUND_MS);
    assert_non_null(strstr(r, "not found: try /metrics, /healthz, /readyz\n"));
    free(r);
    r = get("/metrics?x=1", "HTTP/1.1 200", HEALTHZ_BOUND_MS); /* a query string is ignored */
    free(r);
}

/* A controller on a client for a server that is never contacted, serving on a free port. */
static struct controller *new_controller(struct kube_client **c, int *p)
{
    char *err = NULL;
    *c = kube_client_new(kube_config_new_server("http://127.0.0.1:9"), NULL, &err);
    assert_non_null(*c);
    for (int i = 50; i < 100; i++) {
        struct options o;
        char pa[32];
        snprintf(pa, sizeof pa, "--monitoring-port=%d", pick_port(i));
        char *argv[] = { "mpi-operator", pa, "--leader-elect=false", NULL };
        assert_int_equal(options_parse(3, argv, &o, &err), 0);
        struct controller *ctl = controller_new(*c, *c, &o);
        assert_non_null(ctl);
        if (controller_serve(ctl, &err) == 0) {
            *p = o.monitoring_port;
            return ctl;
        }
        free(err);
        err = NULL;
        controller_free(ctl);
    }
    fail_msg("no free port for a controller's metrics endpoint");
    return NULL;
}

static void test_two_controllers_own_metrics(void **s)
{
    (void)s;
    struct kube_client *ca, *cb;
    int pa, pb;
    struct controller *a = new_controller(&ca, &pa), *b = new_controller(&cb, &pb);
    assert_int_not_equal(pa, pb);
    assert_ptr_not_equal(controller_metrics(a), controller_metrics(b));
    metrics_inc(controller_metrics(a), M_CREATED);
    metrics_set_leader(controller_metrics(b), 1);
    metrics_set_ready(controller_metrics(b), 1);
    char *ma = get_at(pa, "/metrics", "HTTP/1.1 200", HEALTHZ_BOUND_MS);
    char *mb = get_at(pb, "/metrics", "HTTP/1.1 200", HEALTHZ_BOUND_MS);
    assert_non_null(strstr(ma, "\nmpi_operator_jobs_created_total 1\n"));
    assert_non_null(strstr(ma, "\nmpi_operator_is_leader 0\n"));
    assert_non_null(strstr(mb, "\nmpi_operator_jobs_created_total 0\n"));
    assert_non_null(strstr(mb, "\nmpi_operator_is_leader 1\n"));
    free(ma);
    free(mb);
    free(get_at(pa, "/readyz", "HTTP/1.1 503", HEALTHZ_BOUND_MS));
    free(get_at(pb, "/readyz", "HTTP/1.1 200", HEALTHZ_BOUND_MS));
    controller_free(a);
    /* a's endpoint is gone with it, b's still answers */
    free(get_at(pb, "/healthz", "HTTP/1.1 200", HEALTHZ_BOUND_MS));
    controller_free(b);
    kube_client_free(ca);
    kube_client_free(cb);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stalled_clients_do_not_block_healthz),
        cmocka_unit_test(test_healthz_names_stalled_loop),
        cmocka_unit_test(test_two_controllers_own_metrics),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
