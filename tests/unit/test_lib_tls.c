/* test_lib_tls.c - lib/tls_conn.c without a server: splitting server URLs, and the one-line
 * errors (and retry verdicts) of connections that cannot be made. The TLS handshake itself is
 * tested against real servers in tests/integration/rsh_exec_ws.sh and rsh_kubesim.sh. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../../lib/tls_conn.h"
#include "kube/util.h"

static void split_ok(const char *url, const char *scheme, const char *host, long port, const char *prefix)
{
    char *s, *h, *p;
    long n;
    assert_int_equal(kube_conn_split_server(url, &s, &h, &n, &p), 0);
    assert_string_equal(s, scheme);
    assert_string_equal(h, host);
    assert_int_equal(n, port);
    assert_string_equal(p, prefix);
    free(s);
    free(h);
    free(p);
}

static void test_split(void **state)
{
    (void)state;
    split_ok("https://10.0.0.1:6443", "https", "10.0.0.1", 6443, "");
    split_ok("https://api.example", "https", "api.example", 443, "");
    split_ok("http://localhost", "http", "localhost", 80, "");
    split_ok("https://[::1]:8443/prefix/", "https", "[::1]", 8443, "/prefix");
    split_ok("https://h:1/a/b//", "https", "h", 1, "/a/b");
    const char *bad[] = {"", "10.0.0.1:6443", "https://", "https://:443", "https://h:0", "https://h:65536",
                         "https://h:x", "https://[::1", "ftp://h", "https://h:443x", NULL};
    for (int i = 0; bad[i]; i++) {
        char *s, *h, *p;
        long n;
        assert_int_equal(kube_conn_split_server(bad[i], &s, &h, &n, &p), -1);
        assert_null(s);
        assert_null(h);
        assert_null(p);
    }
}

/* A loopback port with nothing listening (bound, then closed). */
static int closed_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t l = sizeof a;
    assert_true(fd >= 0);
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &l), 0);
    close(fd);
    return ntohs(a.sin_port);
}

static void open_fails(const char *server, const char *want, int want_retry)
{
    struct kube_config *cfg = kube_config_new_server(server);
    assert_non_null(cfg);
    char *err = NULL;
    int retry = -1;
    assert_null(kube_conn_open(cfg, kube_now_ms() + 5000, &err, &retry));
    assert_non_null(err);
    assert_non_null(strstr(err, want));
    assert_null(strchr(err, '\n'));
    assert_int_equal(retry, want_retry);
    free(err);
    kube_config_free(cfg);
}

static void test_open_errors(void **state)
{
    (void)state;
    char url[64];
    snprintf(url, sizeof url, "https://127.0.0.1:%d", closed_port());
    open_fails(url, "cannot connect to the API server https://127.0.0.1:", 1);
    open_fails(url, "Connection refused", 1);
    open_fails("https://no-such-host.invalid:6443", "cannot resolve the API server host", 1);
    open_fails("gopher://x", "is not http(s)://host[:port][/path]", 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_split),
        cmocka_unit_test(test_open_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
