/* test_lib_exec_host.c - the exec upgrade request's Host header and dial, against a real socket: a
 * server on 127.0.0.1 and its IPv6 twin on [::1] (issue #39), each receiving the request that
 * kube_exec_run sends for server http://HOST:PORT and refusing it. The IPv6 request must carry the
 * bracketed "Host: [::1]:PORT" (RFC 7230 5.4 and RFC 3986 3.2.2) and reach the IPv6 socket. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include "kube/config.h"
#include "kube/exec.h"

struct server {
    int fd, port, stop;
    char head[4096]; /* the first request's head */
    size_t len;
    int conns;
};

/* One connection: reads its head, keeps the first, refuses the upgrade with a 403. */
static void serve_one(struct server *s, int c)
{
    char buf[4096] = "";
    size_t n = 0;
    while (n < sizeof buf - 1 && !strstr(buf, "\r\n\r\n")) {
        ssize_t r = read(c, buf + n, sizeof buf - 1 - n);
        if (r <= 0)
            break;
        n += (size_t)r;
        buf[n] = '\0';
    }
    if (s->conns++ == 0) {
        memcpy(s->head, buf, n + 1);
        s->len = n;
    }
    static const char reply[] = "HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
    ssize_t w = write(c, reply, sizeof reply - 1);
    (void)w;
    close(c);
}

static void *serve(void *arg)
{
    struct server *s = arg;
    while (!__atomic_load_n(&s->stop, __ATOMIC_SEQ_CST)) {
        struct pollfd p = { .fd = s->fd, .events = POLLIN };
        if (poll(&p, 1, 50) == 1) {
            int c = accept(s->fd, NULL, NULL);
            if (c >= 0)
                serve_one(s, c);
        }
    }
    return NULL;
}

/* Listens on family's loopback, port chosen by the kernel; 0 ok, -1 when the family is absent. */
static int listen_loopback(struct server *s, int family)
{
    struct sockaddr_storage ss;
    socklen_t sl;
    memset(&ss, 0, sizeof ss);
    if (family == AF_INET6) {
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
        a->sin6_family = AF_INET6, a->sin6_addr = in6addr_loopback, sl = sizeof *a;
    } else {
        struct sockaddr_in *a = (struct sockaddr_in *)&ss;
        a->sin_family = AF_INET, a->sin_addr.s_addr = htonl(INADDR_LOOPBACK), sl = sizeof *a;
    }
    s->fd = socket(family, SOCK_STREAM, 0);
    if (s->fd < 0 || bind(s->fd, (struct sockaddr *)&ss, sl) < 0 || listen(s->fd, 4) < 0 ||
        getsockname(s->fd, (struct sockaddr *)&ss, &sl) < 0) {
        if (s->fd >= 0)
            close(s->fd);
        return -1;
    }
    s->port = ntohs(family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port : ((struct sockaddr_in *)&ss)->sin_port);
    return 0;
}

/* Runs one exec against the server at host (as the URL writes it) and checks the Host line. */
static void exec_against(int family, const char *url_host)
{
    struct server s = { 0 };
    if (listen_loopback(&s, family) < 0) {
        assert_int_equal(family, AF_INET6); /* an IPv4 loopback is always there */
        skip();
    }
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, serve, &s), 0);
    char server[64], want[80];
    snprintf(server, sizeof server, "http://%s:%d", url_host, s.port);
    snprintf(want, sizeof want, "\r\nHost: %s:%d\r\n", url_host, s.port);
    struct kube_config cfg = { .server = server, .namespace = "default", .origin = "test" };
    struct kube_exec_opts o;
    kube_exec_opts_default(&o);
    o.namespace = "default", o.pod = "w-0", o.command = "true", o.fd_in = -1, o.capture = 1;
    o.attempts = 1, o.retry_budget_ms = 1000, o.connect_timeout_ms = 2000, o.handshake_timeout_ms = 2000;
    struct kube_exec_result r = { 0 };
    int rc = kube_exec_run(&cfg, &o, &r);
    __atomic_store_n(&s.stop, 1, __ATOMIC_SEQ_CST);
    assert_int_equal(pthread_join(t, NULL), 0);
    close(s.fd);
    assert_true(rc < 0); /* refused: the server said 403 */
    assert_int_equal(r.http_code, 403);
    assert_true(s.conns >= 1); /* the request reached this family's socket */
    if (!strstr(s.head, want))
        fail_msg("no \"%s\" line in the request:\n%s", want + 2, s.head);
    assert_non_null(strstr(s.head, "GET /api/v1/namespaces/default/pods/w-0/exec?"));
    kube_exec_result_free(&r);
}

static void test_host_ipv4(void **st)
{
    (void)st;
    exec_against(AF_INET, "127.0.0.1");
}

static void test_host_ipv6(void **st)
{
    (void)st;
    exec_against(AF_INET6, "[::1]");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_host_ipv4),
        cmocka_unit_test(test_host_ipv6),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
