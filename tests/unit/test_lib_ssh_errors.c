/* test_lib_ssh_errors.c - the SSH transport's failures against a real sshd
 * (ssh_fixture.h): each names its stage and the host, exit code 255, bounded
 * retries for DNS/refused, never trusting an unknown host key. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "kube/ssh.h"
#include "ssh_fixture.h"

static struct sshd_fixture fx;

static int setup(void **state)
{
    (void)state;
    (void)fx_start(&fx); /* no sshd: the tests that need one skip */
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    fx_stop(&fx);
    return 0;
}

#define NEED_SSHD()                                                                                                         \
    do {                                                                                                                    \
        if (!fx.pid)                                                                                                        \
            skip();                                                                                                         \
    } while (0)

static struct kube_ssh_opts opts(const char *keydir)
{
    return (struct kube_ssh_opts){ .port = fx.port, .key_dir = keydir, .connect_timeout_ms = 30000, .attempts = 1 };
}

/* kube_ssh_run of `true` must fail with want; returns the message (caller frees). */
static char *expect_run_fail(const struct kube_ssh_opts *o, const char *host, int want)
{
    char *msg = NULL;
    int code = 0;
    int rc = kube_ssh_run(o, host, "true", -1, -1, -1, &code, &msg);
    fprintf(stderr, "  [%s] %s\n", kube_ssh_stage_name(rc), msg ? msg : "(no message)");
    assert_int_equal(rc, want);
    assert_int_equal(code, 255);
    assert_non_null(msg);
    return msg;
}

/* A key dir named name holding a new key pair, pinning `pin` and authorizing nothing. */
static void other_keydir(const char *name, char *dir, size_t n, const char *pin)
{
    char *priv, *pub, *err = NULL;
    assert_int_equal(kube_sshkey_generate_ed25519(&priv, &pub, "other", &err), 0);
    snprintf(dir, n, "%s/%s", fx.dir, name);
    fx_keydir(dir, priv, pin ? pin : pub, pub);
    free(priv);
    free(pub);
}

static void test_check_ok(void **state)
{
    char *msg = NULL;
    (void)state;
    NEED_SSHD();
    struct kube_ssh_opts o = opts(fx.keydir);
    assert_int_equal(kube_ssh_check(&o, "127.0.0.1", &msg), KUBE_SSH_OK);
    assert_null(msg);
    assert_int_equal(kube_ssh_check(&o, "localhost", &msg), KUBE_SSH_OK);
}

/* The server's key is not the pinned one: refused before any auth, never trusted. */
static void test_host_key_mismatch(void **state)
{
    char dir[160];
    (void)state;
    NEED_SSHD();
    other_keydir("wrongpin", dir, sizeof(dir), NULL);
    struct kube_ssh_opts o = opts(dir);
    char *msg = expect_run_fail(&o, "127.0.0.1", KUBE_SSH_ERR_HOSTKEY);
    assert_true(strncmp(msg, "host key: 127.0.0.1:", 20) == 0);
    assert_non_null(strstr(msg, "SHA256:"));
    assert_non_null(strstr(msg, "refusing"));
    free(msg);
    msg = NULL;
    assert_int_equal(kube_ssh_check(&o, "127.0.0.1", &msg), KUBE_SSH_ERR_HOSTKEY);
    free(msg);
    msg = NULL;
    o.no_auth = 1; /* a check that does not log in still verifies the host key */
    assert_int_equal(kube_ssh_check(&o, "127.0.0.1", &msg), KUBE_SSH_ERR_HOSTKEY);
    free(msg);
}

/* Right host key, but our identity is not in authorized_keys. */
static void test_wrong_user_key(void **state)
{
    char dir[160];
    (void)state;
    NEED_SSHD();
    other_keydir("wrongid", dir, sizeof(dir), fx.pub);
    struct kube_ssh_opts o = opts(dir);
    char *msg = expect_run_fail(&o, "127.0.0.1", KUBE_SSH_ERR_AUTH);
    assert_true(strncmp(msg, "auth: ", 6) == 0);
    assert_non_null(strstr(msg, "127.0.0.1"));
    assert_non_null(strstr(msg, "refused the key"));
    free(msg);
    /* no_auth: the check stops after the (right) host key and succeeds; a run still logs in */
    o.no_auth = 1;
    msg = NULL;
    assert_int_equal(kube_ssh_check(&o, "127.0.0.1", &msg), KUBE_SSH_OK);
    assert_null(msg);
    msg = expect_run_fail(&o, "127.0.0.1", KUBE_SSH_ERR_AUTH);
    free(msg);
}

/* Upstream MPI Operator's file names alone (id_rsa, id_rsa.pub): identity and pin found. */
static void test_upstream_names(void **state)
{
    char dir[160], p[200], *msg = NULL;
    (void)state;
    NEED_SSHD();
    snprintf(dir, sizeof(dir), "%s/upstream", fx.dir);
    assert_int_equal(mkdir(dir, 0755), 0);
    snprintf(p, sizeof(p), "%s/id_rsa", dir);
    fx_write(p, fx.priv, 0644); /* Kubernetes' default mode, as upstream mounts it */
    snprintf(p, sizeof(p), "%s/id_rsa.pub", dir);
    fx_write(p, fx.pub, 0644);
    struct kube_ssh_opts o = opts(dir);
    assert_int_equal(kube_ssh_check(&o, "127.0.0.1", &msg), KUBE_SSH_OK);
    assert_null(msg);
}

/* A known_hosts-style pin file (host patterns before the key) works too. */
static void test_known_hosts_pin(void **state)
{
    char dir[160], path[200], *line = NULL, *msg = NULL;
    (void)state;
    NEED_SSHD();
    snprintf(dir, sizeof(dir), "%s/kh", fx.dir);
    assert_int_equal(mkdir(dir, 0700), 0);
    snprintf(path, sizeof(path), "%s/id_ed25519", dir);
    fx_write(path, fx.priv, 0600);
    snprintf(path, sizeof(path), "%s/known_hosts", dir);
    assert_true(asprintf(&line, "# pinned\n[127.0.0.1]:%d %s", fx.port, fx.pub) > 0);
    fx_write(path, line, 0644);
    free(line);
    struct kube_ssh_opts o = opts(dir);
    assert_int_equal(kube_ssh_check(&o, "127.0.0.1", &msg), KUBE_SSH_OK);
}

static void test_dns_failure_retried(void **state)
{
    (void)state;
    struct kube_ssh_opts o = opts(fx.keydir[0] ? fx.keydir : "/nonexistent");
    if (!fx.pid)
        skip();
    o.attempts = 3;
    int64_t t0 = (int64_t)time(NULL);
    char *msg = expect_run_fail(&o, "no-such-worker.invalid", KUBE_SSH_ERR_DNS);
    assert_true(strncmp(msg, "DNS: cannot resolve host no-such-worker.invalid", 47) == 0);
    assert_non_null(strstr(msg, "3 attempts"));
    assert_true((int64_t)time(NULL) - t0 < 30);
    free(msg);
}

static void test_connection_refused_bounded(void **state)
{
    struct timespec a, b;
    (void)state;
    NEED_SSHD();
    struct kube_ssh_opts o = opts(fx.keydir);
    o.port = fx_free_port();
    o.attempts = 3;
    clock_gettime(CLOCK_MONOTONIC, &a);
    char *msg = expect_run_fail(&o, "127.0.0.1", KUBE_SSH_ERR_CONNECT);
    clock_gettime(CLOCK_MONOTONIC, &b);
    double secs = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
    assert_true(secs >= 0.7 && secs < 30.0); /* backoff 0.25 + 0.5 s, then gives up */
    assert_true(strncmp(msg, "connect: 127.0.0.1 port ", 24) == 0);
    assert_non_null(strstr(msg, "Connection refused"));
    assert_non_null(strstr(msg, "3 attempts"));
    free(msg);
}

/* A listener that accepts and never speaks SSH: the handshake is bounded by the timeout. */
static void test_silent_server_times_out(void **state)
{
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t al = sizeof(a);
    (void)state;
    NEED_SSHD();
    int l = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(l >= 0);
    assert_int_equal(bind(l, (struct sockaddr *)&a, sizeof(a)), 0);
    assert_int_equal(getsockname(l, (struct sockaddr *)&a, &al), 0);
    assert_int_equal(listen(l, 4), 0);
    struct kube_ssh_opts o = opts(fx.keydir);
    o.port = ntohs(a.sin_port);
    o.connect_timeout_ms = 500;
    time_t t0 = time(NULL);
    char *msg = expect_run_fail(&o, "127.0.0.1", KUBE_SSH_ERR_HANDSHAKE);
    assert_true(time(NULL) - t0 < 30);
    assert_true(strncmp(msg, "handshake: ", 11) == 0);
    free(msg);
    close(l);
}

static void test_config_errors(void **state)
{
    char dir[160], path[200];
    (void)state;
    NEED_SSHD();
    struct kube_ssh_opts o = opts("/nonexistent-ssh-dir");
    char *msg = expect_run_fail(&o, "127.0.0.1", KUBE_SSH_ERR_CONFIG);
    assert_non_null(strstr(msg, "no readable private key in /nonexistent-ssh-dir"));
    free(msg);

    snprintf(dir, sizeof(dir), "%s/nopin", fx.dir); /* identity but nothing to pin */
    assert_int_equal(mkdir(dir, 0700), 0);
    snprintf(path, sizeof(path), "%s/ssh-privatekey", dir);
    fx_write(path, fx.priv, 0600);
    o = opts(dir);
    msg = expect_run_fail(&o, "127.0.0.1", KUBE_SSH_ERR_CONFIG);
    assert_non_null(strstr(msg, "no host key to pin"));
    free(msg);

    snprintf(path, sizeof(path), "%s/ssh-publickey", dir); /* a pin file that is not a key */
    fx_write(path, "hello world\n", 0644);
    msg = expect_run_fail(&o, "127.0.0.1", KUBE_SSH_ERR_CONFIG);
    assert_non_null(strstr(msg, "ssh-publickey line 1"));
    free(msg);

    o = opts(fx.keydir);
    o.port = 70000;
    msg = expect_run_fail(&o, "127.0.0.1", KUBE_SSH_ERR_CONFIG);
    assert_non_null(strstr(msg, "port 70000"));
    free(msg);
    o.port = fx.port;
    msg = expect_run_fail(&o, "", KUBE_SSH_ERR_CONFIG);
    free(msg);

    char *big = malloc(40001), *code_msg = NULL; /* over libssh2's packet size */
    int code = 0;
    assert_non_null(big);
    memset(big, 'x', 40000);
    big[40000] = '\0';
    assert_int_equal(kube_ssh_run(&o, "127.0.0.1", big, -1, -1, -1, &code, &code_msg), KUBE_SSH_ERR_CONFIG);
    assert_int_equal(code, 255);
    assert_non_null(strstr(code_msg, "40000 bytes"));
    free(code_msg);
    free(big);
}

/* The private key file is garbage: a config error naming the file, not an auth error. */
static void test_bad_private_key(void **state)
{
    char dir[160], path[200];
    (void)state;
    NEED_SSHD();
    snprintf(dir, sizeof(dir), "%s/badkey", fx.dir);
    fx_keydir(dir, "-----BEGIN OPENSSH PRIVATE KEY-----\nAAAA\n-----END OPENSSH PRIVATE KEY-----\n", fx.pub, fx.pub);
    struct kube_ssh_opts o = opts(dir);
    char *msg = expect_run_fail(&o, "127.0.0.1", KUBE_SSH_ERR_CONFIG);
    snprintf(path, sizeof(path), "%s/ssh-privatekey", dir);
    assert_non_null(strstr(msg, path));
    free(msg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_check_ok),
        cmocka_unit_test(test_host_key_mismatch),
        cmocka_unit_test(test_wrong_user_key),
        cmocka_unit_test(test_known_hosts_pin),
        cmocka_unit_test(test_upstream_names),
        cmocka_unit_test(test_dns_failure_retried),
        cmocka_unit_test(test_connection_refused_bounded),
        cmocka_unit_test(test_silent_server_times_out),
        cmocka_unit_test(test_config_errors),
        cmocka_unit_test(test_bad_private_key),
    };
    signal(SIGPIPE, SIG_IGN);
    return cmocka_run_group_tests(tests, setup, teardown);
}
