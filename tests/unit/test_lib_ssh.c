/* test_lib_ssh.c - kube_ssh_run against a real OpenSSH sshd (see ssh_fixture.h) whose
 * host key and authorized key come from kube_sshkey_generate_ed25519: exit codes,
 * death by signal, stdin with EOF, large stdout intact, stderr kept apart, quoting,
 * full-duplex traffic, a connection cut mid-output, cancellation, and the real ssh
 * client agreeing on the same cases. Size of the big transfer: SSH_TEST_BIG_MB (100). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <openssl/evp.h>
#include <poll.h>

#include "kube/ssh.h"
#include "ssh_fixture.h"

static struct sshd_fixture fx;

static int setup(void **state)
{
    (void)state;
    return fx_start(&fx) == 0 ? 0 : 0; /* no sshd: each test skips */
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

static struct kube_ssh_opts opts(void)
{
    return (struct kube_ssh_opts){ .port = fx.port, .key_dir = fx.keydir, .connect_timeout_ms = 30000, .attempts = 1 };
}

/* A fresh empty file in the fixture dir, opened read-write. */
static int tmpfile_fd(const char *name, char *path, size_t n)
{
    snprintf(path, n, "%s/%s", fx.dir, name);
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    assert_true(fd >= 0);
    return fd;
}

/* Runs cmd with empty stdin; returns the result, fills exit code, stdout, stderr. */
static int run_cmd(const char *cmd, int *code, char **out, char **err, char **msg)
{
    char po[128], pe[128];
    int fo = tmpfile_fd("out", po, sizeof(po)), fe = tmpfile_fd("err", pe, sizeof(pe));
    struct kube_ssh_opts o = opts();
    *msg = NULL;
    int rc = kube_ssh_run(&o, "127.0.0.1", cmd, -1, fo, fe, code, msg);
    close(fo);
    close(fe);
    *out = fx_read(po, NULL);
    *err = fx_read(pe, NULL);
    return rc;
}

static void test_exit_codes(void **state)
{
    static const int codes[] = { 0, 1, 3, 255 };
    (void)state;
    NEED_SSHD();
    for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
        char cmd[32], *out, *err, *msg;
        int code = -1;
        snprintf(cmd, sizeof(cmd), "exit %d", codes[i]);
        assert_int_equal(run_cmd(cmd, &code, &out, &err, &msg), KUBE_SSH_OK);
        assert_int_equal(code, codes[i]);
        assert_null(msg);
        free(out), free(err);
    }
}

static void test_stdout_stderr_apart(void **state)
{
    char *out, *err, *msg;
    int code;
    (void)state;
    NEED_SSHD();
    assert_int_equal(run_cmd("echo out1; echo err1 >&2; echo out2; exit 2", &code, &out, &err, &msg), KUBE_SSH_OK);
    assert_int_equal(code, 2);
    assert_string_equal(out, "out1\nout2\n");
    assert_string_equal(err, "err1\n");
    free(out), free(err);
}

/* The command string goes to the remote shell as ssh gives it: one -c argument. */
static void test_shell_quoting(void **state)
{
    char *out, *err, *msg;
    int code;
    (void)state;
    NEED_SSHD();
    assert_int_equal(run_cmd("printf '%s|' \"a b\" '$HOME' \"\" 'x;y' '*'; echo", &code, &out, &err, &msg), KUBE_SSH_OK);
    assert_int_equal(code, 0);
    assert_string_equal(out, "a b|$HOME||x;y|*|\n");
    free(out), free(err);
}

/* The longest command libssh2 can send in one exec request arrives whole. */
static void test_long_command(void **state)
{
    char *out, *err, *msg, *cmd = malloc(34701);
    int code;
    (void)state;
    NEED_SSHD();
    assert_non_null(cmd);
    memcpy(cmd, "printf %s ", 10);
    memset(cmd + 10, 'y', 34700 - 10 - 8);
    memcpy(cmd + 34700 - 8, " | wc -c", 9);
    assert_int_equal(run_cmd(cmd, &code, &out, &err, &msg), KUBE_SSH_OK);
    assert_int_equal(code, 0);
    assert_int_equal(atol(out), 34700 - 18);
    free(out), free(err), free(cmd);
}

static void test_killed_by_signal(void **state)
{
    char *out, *err, *msg;
    int code = 0;
    (void)state;
    NEED_SSHD();
    assert_int_equal(run_cmd("echo before; kill -9 $$", &code, &out, &err, &msg), KUBE_SSH_ERR_NOSTATUS);
    assert_int_equal(code, 255);
    assert_string_equal(out, "before\n");
    assert_non_null(strstr(msg, "signal KILL"));
    assert_non_null(strstr(msg, "127.0.0.1"));
    free(out), free(err), free(msg);
}

/* A child process writes n bytes (a counter pattern) into a pipe; returns the read end. */
static int feeder(size_t n, pid_t *pid)
{
    int p[2];
    assert_int_equal(pipe(p), 0);
    *pid = fork();
    assert_true(*pid >= 0);
    if (*pid == 0) {
        char buf[65536];
        close(p[0]);
        for (size_t off = 0; off < n;) {
            size_t k = n - off < sizeof(buf) ? n - off : sizeof(buf);
            for (size_t i = 0; i < k; i++)
                buf[i] = (char)('a' + (off + i) % 26);
            ssize_t w = write(p[1], buf, k);
            if (w <= 0)
                _exit(1);
            off += (size_t)w;
        }
        _exit(0);
    }
    close(p[1]);
    return p[0];
}

static void test_stdin_eof(void **state)
{
    char po[128], pe[128], *out, *msg = NULL;
    int code, st;
    pid_t pid;
    (void)state;
    NEED_SSHD();
    struct kube_ssh_opts o = opts();
    int fin = feeder(10 * 1024 * 1024, &pid);
    int fo = tmpfile_fd("out", po, sizeof(po)), fe = tmpfile_fd("err", pe, sizeof(pe));
    assert_int_equal(kube_ssh_run(&o, "127.0.0.1", "wc -c", fin, fo, fe, &code, &msg), 0);
    assert_int_equal(code, 0);
    close(fin), close(fo), close(fe);
    assert_int_equal(waitpid(pid, &st, 0), pid);
    out = fx_read(po, NULL);
    assert_int_equal(atol(out), 10 * 1024 * 1024);
    free(out);
}

/* SHA-256 (hex) of a file. */
static void sha256_file(const char *path, char hex[65])
{
    unsigned char md[32], buf[65536];
    unsigned int mdlen = 0;
    size_t n;
    FILE *f = fopen(path, "rb");
    EVP_MD_CTX *c = EVP_MD_CTX_new();
    assert_non_null(f);
    assert_int_equal(EVP_DigestInit_ex(c, EVP_sha256(), NULL), 1);
    while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
        assert_int_equal(EVP_DigestUpdate(c, buf, n), 1);
    assert_int_equal(EVP_DigestFinal_ex(c, md, &mdlen), 1);
    EVP_MD_CTX_free(c);
    fclose(f);
    for (int i = 0; i < 32; i++)
        snprintf(hex + 2 * i, 3, "%02x", md[i]);
}

static long big_mb(void)
{
    const char *e = getenv("SSH_TEST_BIG_MB");
    return e && atol(e) > 0 ? atol(e) : 100;
}

/* Remote and local run the same deterministic generator; the bytes must match exactly. */
static void test_big_stdout_intact(void **state)
{
    char po[128], pe[128], gen[160], cmd[320], want[65], got[65], *msg = NULL;
    int code;
    struct stat st;
    (void)state;
    NEED_SSHD();
    /* 9 bytes per line (8 digits, padded): big_mb MiB of distinct, ordered lines */
    snprintf(gen, sizeof(gen), "seq -f %%08.0f 1 %ld", big_mb() * 1024 * 1024 / 9 + 1000);
    struct kube_ssh_opts o = opts();
    int fo = tmpfile_fd("big", po, sizeof(po)), fe = tmpfile_fd("err", pe, sizeof(pe));
    assert_int_equal(kube_ssh_run(&o, "127.0.0.1", gen, -1, fo, fe, &code, &msg), 0);
    assert_int_equal(code, 0);
    close(fo), close(fe);
    assert_int_equal(stat(po, &st), 0);
    assert_true(st.st_size >= big_mb() * 1024 * 1024);
    sha256_file(po, got);
    snprintf(cmd, sizeof(cmd), "%s > '%s'", gen, po);
    assert_int_equal(system(cmd), 0);
    sha256_file(po, want);
    assert_string_equal(got, want);
    unlink(po);
}

/* stdin and stdout flowing at once (remote cat): exercises the libssh2 send/recv interplay. */
static void test_full_duplex_cat(void **state)
{
    char po[128], pe[128], *out, *msg = NULL;
    size_t len;
    int code, st;
    pid_t pid;
    (void)state;
    NEED_SSHD();
    size_t n = 20 * 1024 * 1024;
    struct kube_ssh_opts o = opts();
    int fin = feeder(n, &pid);
    int fo = tmpfile_fd("cat", po, sizeof(po)), fe = tmpfile_fd("err", pe, sizeof(pe));
    assert_int_equal(kube_ssh_run(&o, "127.0.0.1", "cat", fin, fo, fe, &code, &msg), 0);
    assert_int_equal(code, 0);
    close(fin), close(fo), close(fe);
    assert_int_equal(waitpid(pid, &st, 0), pid);
    out = fx_read(po, &len);
    assert_int_equal(len, n);
    for (size_t i = 0; i < n; i += 4093)
        assert_int_equal(out[i], (char)('a' + i % 26));
    free(out);
    unlink(po);
}

/* The sshd serving the session dies mid-output: never a success, exit 255, a reason. */
static void test_connection_cut(void **state)
{
    char *out, *err, *msg;
    int code = 0;
    (void)state;
    NEED_SSHD();
    int rc = run_cmd("echo start; sleep 0.2; kill -9 $PPID; sleep 5; echo never", &code, &out, &err, &msg);
    assert_int_equal(rc, KUBE_SSH_ERR_SESSION);
    assert_int_equal(code, 255);
    assert_string_equal(out, "start\n");
    assert_non_null(strstr(msg, "127.0.0.1"));
    free(out), free(err), free(msg);
}

/* cancel_fd: we return promptly, and the remote command, which keeps writing, dies of
 * the closed channel (libssh2 1.10 cannot send a "signal" request; see docs/ssh.md). */
static void test_cancel(void **state)
{
    char po[128], pe[128], mark[160], cmd[320], *msg = NULL, *pidtext;
    int code = 0, p[2];
    (void)state;
    NEED_SSHD();
    snprintf(mark, sizeof(mark), "%s/remote.pid", fx.dir);
    snprintf(cmd, sizeof(cmd), "echo $$ > %s; while :; do echo tick; sleep 0.1; done", mark);
    assert_int_equal(pipe(p), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) { /* cancel once the remote command is running (slow shells) */
        for (int i = 0; i < 600 && access(mark, F_OK) != 0; i++)
            usleep(100 * 1000);
        usleep(300 * 1000);
        _exit(write(p[1], "x", 1) == 1 ? 0 : 1);
    }
    struct kube_ssh_opts o = opts();
    o.cancel_fd = p[0];
    int fo = tmpfile_fd("out", po, sizeof(po)), fe = tmpfile_fd("err", pe, sizeof(pe));
    assert_int_equal(kube_ssh_run(&o, "127.0.0.1", cmd, -1, fo, fe, &code, &msg), KUBE_SSH_ERR_CANCELLED);
    assert_int_equal(code, 255);
    assert_non_null(strstr(msg, "cancelled"));
    free(msg);
    waitpid(pid, NULL, 0);
    close(p[0]), close(p[1]), close(fo), close(fe);
    pidtext = fx_read(mark, NULL);
    pid_t remote = (pid_t)atol(pidtext);
    free(pidtext);
    assert_true(remote > 1);
    for (int i = 0; i < 200 && kill(remote, 0) == 0; i++)
        usleep(100 * 1000);
    assert_int_not_equal(kill(remote, 0), 0);
}

/* Idle for 3 keepalive intervals: keepalives are sent and answered, the run ends normally. */
static void test_keepalive_idle(void **state)
{
    char po[128], pe[128], *out, *msg = NULL;
    int code = -1;
    (void)state;
    NEED_SSHD();
    struct kube_ssh_opts o = opts();
    o.keepalive_s = 1;
    int fo = tmpfile_fd("out", po, sizeof(po)), fe = tmpfile_fd("err", pe, sizeof(pe));
    assert_int_equal(kube_ssh_run(&o, "127.0.0.1", "sleep 3; echo alive", -1, fo, fe, &code, &msg), KUBE_SSH_OK);
    assert_int_equal(code, 0);
    close(fo), close(fe);
    out = fx_read(po, NULL);
    assert_string_equal(out, "alive\n");
    free(out);
}

/* The sshd serving us freezes (SIGSTOP; the kernel still ACKs TCP): after 4 unanswered
 * keepalives the run gives up with exit 255 instead of waiting forever. */
static void test_frozen_peer_detected(void **state)
{
    char po[128], pe[128], mark[160], cmd[256], *msg = NULL, *pidtext;
    int code = 0;
    (void)state;
    NEED_SSHD();
    snprintf(mark, sizeof(mark), "%s/sshd-session.pid", fx.dir);
    snprintf(cmd, sizeof(cmd), "echo $PPID > %s; kill -STOP $PPID; sleep 60", mark);
    struct kube_ssh_opts o = opts();
    o.keepalive_s = 1;
    int fo = tmpfile_fd("out", po, sizeof(po)), fe = tmpfile_fd("err", pe, sizeof(pe));
    time_t t0 = time(NULL);
    int rc = kube_ssh_run(&o, "127.0.0.1", cmd, -1, fo, fe, &code, &msg);
    time_t took = time(NULL) - t0;
    pidtext = fx_read(mark, NULL);
    pid_t session = (pid_t)atol(pidtext);
    free(pidtext);
    if (session > 1)
        kill(session, SIGCONT); /* let the stopped sshd session see the close and exit */
    close(fo), close(fe);
    assert_int_equal(rc, KUBE_SSH_ERR_SESSION);
    assert_int_equal(code, 255);
    assert_non_null(strstr(msg, "keepalives unanswered"));
    assert_true(took < 40);
    free(msg);
}

/* OpenSSH's own client, with the same generated key and pinned host key, on the same cases. */
static void test_openssh_client_agrees(void **state)
{
    char kh[160], cmd[768];
    (void)state;
    NEED_SSHD();
    if (access("/usr/bin/ssh", X_OK) != 0)
        skip();
    snprintf(kh, sizeof(kh), "%s/known_hosts", fx.dir);
    char *line = NULL;
    assert_true(asprintf(&line, "[127.0.0.1]:%d %s", fx.port, fx.pub) > 0);
    fx_write(kh, line, 0644);
    free(line);
    static const char *const cmds[] = { "exit 0", "exit 3", "kill -9 $$" };
    static const int want[] = { 0, 3, 255 };
    for (int i = 0; i < 3; i++) {
        snprintf(cmd, sizeof(cmd),
                 "ssh -q -p %d -i %s/ssh-privatekey -o UserKnownHostsFile=%s "
                 "-o StrictHostKeyChecking=yes -o BatchMode=yes 127.0.0.1 '%s' </dev/null",
                 fx.port, fx.keydir, kh, cmds[i]);
        int st = system(cmd);
        assert_true(WIFEXITED(st));
        assert_int_equal(WEXITSTATUS(st), want[i]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exit_codes),
        cmocka_unit_test(test_stdout_stderr_apart),
        cmocka_unit_test(test_shell_quoting),
        cmocka_unit_test(test_long_command),
        cmocka_unit_test(test_killed_by_signal),
        cmocka_unit_test(test_stdin_eof),
        cmocka_unit_test(test_big_stdout_intact),
        cmocka_unit_test(test_full_duplex_cat),
        cmocka_unit_test(test_connection_cut),
        cmocka_unit_test(test_cancel),
        cmocka_unit_test(test_keepalive_idle),
        cmocka_unit_test(test_frozen_peer_detected),
        cmocka_unit_test(test_openssh_client_agrees),
    };
    signal(SIGPIPE, SIG_IGN);
    return cmocka_run_group_tests(tests, setup, teardown);
}
