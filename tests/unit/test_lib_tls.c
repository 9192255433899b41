/* test_lib_tls.c - lib/tls_conn.c without a server: splitting server URLs (lib/url.c), and the one-line
 * errors (and retry verdicts) of connections that cannot be made. The TLS handshake itself is
 * tested against real servers in tests/integration/rsh_exec_ws.sh and rsh_kubesim.sh. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../../lib/tls_conn.h"
#include "../../lib/url_int.h"
#include "kube/util.h"

static void split_ok(const char *url, const char *scheme, const char *host, long port, const char *prefix)
{
    char *s, *h, *p;
    long n;
    assert_int_equal(Kube_url_split_server(url, &s, &h, &n, &p), 0);
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
    const char *bad[] = { "",
                          "10.0.0.1:6443",
                          "https://",
                          "https://:443",
                          "https://h:0",
                          "https://h:65536",
                          "https://h:x",
                          "https://[::1",
                          "ftp://h",
                          "https://h:443x",
                          NULL };
    for (int i = 0; bad[i]; i++) {
        char *s, *h, *p;
        long n;
        assert_int_equal(Kube_url_split_server(bad[i], &s, &h, &n, &p), -1);
        assert_null(s);
        assert_null(h);
        assert_null(p);
    }
}

/* A loopback port with nothing listening (bound, then closed). */
static int closed_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
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
    assert_null(Kube_conn_open(cfg, NULL, NULL, kube_now_ms() + 5000, &err, &retry));
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

/* --- concurrent connections resume the first one's session (lib/tls_session.c), against
 * an OpenSSL server that counts full and resumed handshakes */
#define NCONN 6

struct tls_server {
    int lfd, port;
    SSL_CTX *ctx;
    pthread_mutex_t mu;
    int full, resumed, failed;
};

static void *serve_one(void *arg)
{
    struct tls_server *sv = arg;
    int fd = accept(sv->lfd, NULL, NULL);
    SSL *ssl = fd >= 0 ? SSL_new(sv->ctx) : NULL;
    int ok = ssl && SSL_set_fd(ssl, fd) == 1 && SSL_accept(ssl) == 1;
    pthread_mutex_lock(&sv->mu);
    if (!ok)
        sv->failed++;
    else if (SSL_session_reused(ssl))
        sv->resumed++;
    else
        sv->full++;
    pthread_mutex_unlock(&sv->mu);
    if (ok)
        SSL_write(ssl, "x", 1); /* after TLS 1.3's session tickets: the client reads them first */
    if (ok)
        SSL_shutdown(ssl);
    SSL_free(ssl);
    if (fd >= 0)
        close(fd);
    return NULL;
}

static void *client_one(void *arg)
{
    const struct kube_config *cfg = arg;
    char *err = NULL;
    int retry;
    struct kube_conn *c = Kube_conn_open(cfg, NULL, NULL, kube_now_ms() + 20000, &err, &retry);
    if (!c)
        fprintf(stderr, "client: %s\n", err);
    char b;
    ssize_t n = -2;
    while (c && (n = Kube_conn_recv(c, &b, 1)) == -2)
        Kube_wait_fd(Kube_conn_fd(c), POLLIN, kube_now_ms() + 5000);
    if (c && n != 1)
        fprintf(stderr, "client: no byte from the server (%zd)\n", n);
    free(err);
    Kube_conn_close(c);
    return c ? arg : NULL;
}

static void test_concurrent_resumption(void **state)
{
    (void)state;
    char dir[] = "/tmp/test-tls.XXXXXX", cmd[512], cert[64], key[64], url[64];
    assert_non_null(mkdtemp(dir));
    snprintf(cert, sizeof cert, "%s/cert.pem", dir);
    snprintf(key, sizeof key, "%s/key.pem", dir);
    snprintf(cmd, sizeof cmd,
             "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=api "
             "-addext subjectAltName=IP:127.0.0.1 -keyout %s -out %s 2>/dev/null",
             key, cert);
    assert_int_equal(system(cmd), 0);
    struct tls_server sv = { .lfd = socket(AF_INET, SOCK_STREAM, 0) };
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t l = sizeof a;
    assert_int_equal(bind(sv.lfd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(sv.lfd, NCONN), 0);
    assert_int_equal(getsockname(sv.lfd, (struct sockaddr *)&a, &l), 0);
    pthread_mutex_init(&sv.mu, NULL);
    sv.ctx = SSL_CTX_new(TLS_server_method());
    assert_non_null(sv.ctx);
    assert_int_equal(SSL_CTX_use_certificate_file(sv.ctx, cert, SSL_FILETYPE_PEM), 1);
    assert_int_equal(SSL_CTX_use_PrivateKey_file(sv.ctx, key, SSL_FILETYPE_PEM), 1);
    SSL_CTX_set_session_id_context(sv.ctx, (const unsigned char *)"t", 1);
    snprintf(url, sizeof url, "https://127.0.0.1:%d", ntohs(a.sin_port));
    struct kube_config *cfg = kube_config_new_server(url);
    assert_non_null(cfg);
    cfg->ca_file = strdup(cert);
    pthread_t srv[NCONN], cli[NCONN];
    void *res;
    for (int i = 0; i < NCONN; i++)
        assert_int_equal(pthread_create(&srv[i], NULL, serve_one, &sv), 0);
    for (int i = 0; i < NCONN; i++)
        assert_int_equal(pthread_create(&cli[i], NULL, client_one, cfg), 0);
    int connected = 0;
    for (int i = 0; i < NCONN; i++) {
        assert_int_equal(pthread_join(cli[i], &res), 0);
        connected += res != NULL;
    }
    for (int i = 0; i < NCONN; i++)
        assert_int_equal(pthread_join(srv[i], NULL), 0);
    assert_int_equal(connected, NCONN);
    assert_int_equal(sv.failed, 0);
    assert_int_equal(sv.full, 1); /* one key exchange, the others waited and resumed it */
    assert_int_equal(sv.resumed, NCONN - 1);
    SSL_CTX_free(sv.ctx);
    close(sv.lfd);
    kube_config_free(cfg);
    pthread_mutex_destroy(&sv.mu);
    unlink(cert);
    unlink(key);
    rmdir(dir);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN); /* the test server writes to clients that may have gone */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_split),
        cmocka_unit_test(test_open_errors),
        cmocka_unit_test(test_concurrent_resumption),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
