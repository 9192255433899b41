/* test_agent_deliver.c - bundle delivery: contents, modes, symlinks, nested
 * directories, idempotence, replacing stale files, no temp files left, errors. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <dirent.h>
#include <unistd.h>
#include <cmocka.h>

#include "../../agent/deliver.h"
#include "kube/util.h"

static char root[64];

static void put(const char *rel, const char *text, mode_t mode)
{
    char *p = kube_strdup_printf("%s/%s", root, rel);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    chmod(p, mode);
    free(p);
}

static void expect_file(const char *rel, const char *text, mode_t mode)
{
    char *p = kube_strdup_printf("%s/%s", root, rel), *got = NULL, *err = NULL;
    size_t len;
    assert_int_equal(kube_read_file(p, 4096, &got, &len, &err), 0);
    assert_string_equal(got, text);
    struct stat st;
    assert_int_equal(stat(p, &st), 0);
    assert_int_equal(st.st_mode & 07777, mode);
    free(got);
    free(p);
}

static int setup(void **s)
{
    (void)s;
    strcpy(root, "/tmp/agent-deliver-XXXXXX");
    assert_non_null(mkdtemp(root));
    char *d = kube_strdup_printf("%s/src/lib/sub", root);
    char *cmd = kube_strdup_printf("mkdir -p %s %s/dst", d, root);
    assert_int_equal(system(cmd), 0);
    free(cmd);
    free(d);
    put("src/mpi-rsh", "#!/bin/sh\necho rsh\n", 0755);
    put("src/lib/libx.so.1", "ELF", 0644);
    put("src/lib/sub/ld.so", "loader", 0700);
    char *t = kube_strdup_printf("%s/src/lib/libx.so", root);
    assert_int_equal(symlink("libx.so.1", t), 0);
    free(t);
    return 0;
}

static int teardown(void **s)
{
    (void)s;
    char *cmd = kube_strdup_printf("rm -rf %s", root);
    int rc = system(cmd);
    free(cmd);
    return rc == 0 ? 0 : -1;
}

static void test_deliver(void **s)
{
    (void)s;
    char *src = kube_strdup_printf("%s/src", root), *dst = kube_strdup_printf("%s/dst/kube", root);
    char *err = NULL;
    int n = 0;
    assert_int_equal(agent_deliver(src, dst, &n, &err), 0);
    assert_int_equal(n, 3);
    expect_file("dst/kube/mpi-rsh", "#!/bin/sh\necho rsh\n", 0755);
    expect_file("dst/kube/lib/libx.so.1", "ELF", 0644);
    expect_file("dst/kube/lib/sub/ld.so", "loader", 0700);
    char *l = kube_strdup_printf("%s/lib/libx.so", dst), target[64];
    ssize_t tl = readlink(l, target, sizeof(target) - 1);
    assert_int_equal(tl, 9);
    target[tl] = '\0';
    assert_string_equal(target, "libx.so.1");
    free(l);
    /* a stale copy is replaced; a second delivery is harmless */
    put("dst/kube/mpi-rsh", "stale", 0600);
    assert_int_equal(agent_deliver(src, dst, &n, &err), 0);
    expect_file("dst/kube/mpi-rsh", "#!/bin/sh\necho rsh\n", 0755);
    DIR *d = opendir(dst);
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        assert_null(strstr(e->d_name, ".tmp."));
    closedir(d);
    free(src);
    free(dst);
}

/* A symlink planted at the temp name a delivery used to pick (<file>.tmp.<pid>) is not followed:
 * the file it points to stays untouched and the delivered file is a fresh regular file. */
static void test_planted_symlink(void **s)
{
    (void)s;
    char *src = kube_strdup_printf("%s/src", root), *dst = kube_strdup_printf("%s/dst/planted", root);
    char *victim = kube_strdup_printf("%s/victim", root);
    char *trap = kube_strdup_printf("%s/mpi-rsh.tmp.%ld", dst, (long)getpid());
    put("victim", "precious", 0644);
    assert_int_equal(mkdir(dst, 0755), 0);
    assert_int_equal(symlink(victim, trap), 0);
    char *err = NULL;
    int n = 0;
    assert_int_equal(agent_deliver(src, dst, &n, &err), 0);
    expect_file("victim", "precious", 0644);
    expect_file("dst/planted/mpi-rsh", "#!/bin/sh\necho rsh\n", 0755);
    char *rsh = kube_strdup_printf("%s/mpi-rsh", dst);
    struct stat st;
    assert_int_equal(lstat(rsh, &st), 0);
    assert_true(S_ISREG(st.st_mode));
    assert_int_equal(lstat(trap, &st), 0); /* someone else's file: left alone */
    assert_true(S_ISLNK(st.st_mode));
    free(rsh);
    free(trap);
    free(victim);
    free(src);
    free(dst);
}

static void test_errors(void **s)
{
    (void)s;
    char *err = NULL;
    int n;
    assert_int_equal(agent_deliver("/nonexistent/bundle", "/tmp/x", &n, &err), -1);
    assert_non_null(strstr(err, "/nonexistent/bundle"));
    free(err);
    err = NULL;
    char *src = kube_strdup_printf("%s/src", root);
    assert_int_equal(agent_deliver(src, "/proc/nope/kube", &n, &err), -1);
    assert_non_null(strstr(err, "/proc/nope/kube"));
    free(err);
    free(src);
    setenv("MPI_AGENT_BUNDLE_DIR", "/x/bundle", 1);
    char *b = agent_bundle_dir(&err);
    assert_string_equal(b, "/x/bundle");
    free(b);
    unsetenv("MPI_AGENT_BUNDLE_DIR");
    b = agent_bundle_dir(&err);
    assert_non_null(strstr(b, "/../lib/mpi-k8s/bundle"));
    free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_deliver),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_planted_symlink),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
