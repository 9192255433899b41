/* test_lib_sshkey.c - Ed25519 key generation and public-key parsing, checked against
 * OpenSSH's own ssh-keygen (derives the same public key and fingerprint from our
 * private key file). Acceptance by sshd/ssh is covered in test_lib_ssh.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "ssh_fixture.h"

static char tmpdir[64];

static int setup(void **state)
{
    (void)state;
    strcpy(tmpdir, "/tmp/sshkey-unit-XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
    char cmd[128];
    (void)state;
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

/* Runs a shell command and returns its stdout (caller frees). */
static char *run_capture(const char *cmd)
{
    char out[256];
    snprintf(out, sizeof(out), "%s/capture", tmpdir);
    char *full = NULL;
    assert_true(asprintf(&full, "%s > '%s'", cmd, out) > 0);
    int rc = system(full);
    free(full);
    assert_int_equal(rc, 0);
    return fx_read(out, NULL);
}

/* The first two fields ("type base64") of a public key line. */
static char *type_and_key(const char *line)
{
    const char *sp = strchr(line, ' ');
    assert_non_null(sp);
    size_t n = strcspn(sp + 1, " \n");
    return strndup(line, (size_t)(sp - line) + 1 + n);
}

static void test_formats(void **state)
{
    char *priv, *pub, *err = NULL;
    (void)state;
    assert_int_equal(kube_sshkey_generate_ed25519(&priv, &pub, "job@ns", &err), 0);
    assert_null(err);
    assert_true(strncmp(priv, "-----BEGIN OPENSSH PRIVATE KEY-----\n", 36) == 0);
    assert_non_null(strstr(priv, "\n-----END OPENSSH PRIVATE KEY-----\n"));
    /* every body line is at most 70 characters, as OpenSSH writes them */
    for (const char *l = strchr(priv, '\n') + 1; *l && *l != '-'; l = strchr(l, '\n') + 1)
        assert_true(strcspn(l, "\n") <= 70);
    assert_true(strncmp(pub, "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI", 37) == 0);
    size_t n = strlen(pub);
    assert_true(n > 8 && strcmp(pub + n - 8, " job@ns\n") == 0);
    free(priv);
    free(pub);
}

static void test_no_comment_and_bad_comment(void **state)
{
    char *priv, *pub, *err = NULL;
    (void)state;
    assert_int_equal(kube_sshkey_generate_ed25519(&priv, &pub, NULL, &err), 0);
    assert_null(strchr(strchr(pub, ' ') + 1, ' ')); /* "type key\n" only */
    free(priv);
    free(pub);
    assert_int_equal(kube_sshkey_generate_ed25519(&priv, &pub, "a\nb", &err), -1);
    assert_null(priv);
    assert_null(pub);
    assert_non_null(strstr(err, "comment"));
    free(err);
}

static void test_keys_differ(void **state)
{
    char *p1, *q1, *p2, *q2, *err = NULL;
    (void)state;
    assert_int_equal(kube_sshkey_generate_ed25519(&p1, &q1, "x", &err), 0);
    assert_int_equal(kube_sshkey_generate_ed25519(&p2, &q2, "x", &err), 0);
    assert_string_not_equal(p1, p2);
    assert_string_not_equal(q1, q2);
    free(p1), free(q1), free(p2), free(q2);
}

/* ssh-keygen -y must derive our public key from our private key file, and
 * ssh-keygen -l must print the fingerprint we compute. */
static void test_openssh_keygen_agrees(void **state)
{
    char *priv, *pub, *err = NULL, path[128], cmd[256], *type, *out;
    unsigned char *blob;
    size_t blen;
    (void)state;
    if (access("/usr/bin/ssh-keygen", X_OK) != 0)
        skip();
    for (int i = 0; i < 5; i++) {
        assert_int_equal(kube_sshkey_generate_ed25519(&priv, &pub, "agree@test", &err), 0);
        snprintf(path, sizeof(path), "%s/id_%d", tmpdir, i);
        fx_write(path, priv, 0600);
        snprintf(cmd, sizeof(cmd), "ssh-keygen -y -f '%s'", path);
        out = run_capture(cmd);
        char *a = type_and_key(out), *b = type_and_key(pub);
        assert_string_equal(a, b);
        free(a), free(b), free(out);

        snprintf(path, sizeof(path), "%s/id_%d.pub", tmpdir, i);
        fx_write(path, pub, 0644);
        snprintf(cmd, sizeof(cmd), "ssh-keygen -l -E sha256 -f '%s' | cut -d' ' -f2", path);
        out = run_capture(cmd);
        assert_int_equal(kube_sshkey_parse_line(pub, strlen(pub), &type, &blob, &blen), 1);
        assert_string_equal(type, "ssh-ed25519");
        char *fp = kube_sshkey_fingerprint(blob, blen);
        out[strcspn(out, "\n")] = '\0';
        assert_string_equal(fp, out);
        free(fp), free(type), free(blob), free(out), free(priv), free(pub);
    }
}

static void expect_line(const char *line, int want, const char *want_type)
{
    char *type;
    unsigned char *blob;
    size_t blen;
    int r = kube_sshkey_parse_line(line, strlen(line), &type, &blob, &blen);
    assert_int_equal(r, want);
    if (want == 1) {
        assert_string_equal(type, want_type);
        assert_true(blen > 4);
        free(type);
        free(blob);
    } else {
        assert_null(type);
        assert_null(blob);
    }
}

static void test_parse_lines(void **state)
{
    char *priv, *pub, *err = NULL, line[512];
    (void)state;
    assert_int_equal(kube_sshkey_generate_ed25519(&priv, &pub, "c", &err), 0);
    const char *key = strchr(pub, ' ') + 1;
    int klen = (int)strcspn(key, " \n");
    expect_line(pub, 1, "ssh-ed25519");
    expect_line("", 0, NULL);
    expect_line("   \n", 0, NULL);
    expect_line("# a comment ssh-ed25519 AAAA", 0, NULL);
    snprintf(line, sizeof(line), "@revoked * ssh-ed25519 %.*s", klen, key);
    expect_line(line, 0, NULL);
    snprintf(line, sizeof(line), "[w-0.j]:2222,10.0.0.1 ssh-ed25519 %.*s\n", klen, key);
    expect_line(line, 1, "ssh-ed25519"); /* known_hosts */
    snprintf(line, sizeof(line), "command=\"echo ssh-rsa x\",no-pty ssh-ed25519 %.*s c", klen, key);
    expect_line(line, 1, "ssh-ed25519"); /* authorized_keys options */
    snprintf(line, sizeof(line), "ssh-rsa %.*s", klen, key);
    expect_line(line, -1, NULL); /* blob says ed25519 */
    expect_line("ssh-ed25519 AAAA!!!=", -1, NULL);
    expect_line("ssh-ed25519 AAA", -1, NULL);
    expect_line("ssh-ed25519", -1, NULL);
    expect_line("not a key at all", -1, NULL);
    free(priv);
    free(pub);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_formats),     cmocka_unit_test(test_no_comment_and_bad_comment),
        cmocka_unit_test(test_keys_differ), cmocka_unit_test(test_openssh_keygen_agrees),
        cmocka_unit_test(test_parse_lines),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
