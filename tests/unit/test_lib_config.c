/* test_lib_config.c - unit tests for kubeconfig loading: fields, contexts,
 * relative paths, KUBECONFIG merging, malformed files (errors name the file
 * and field), in-cluster config from a temporary SA dir, token rotation. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "kube/config.h"
#include "../../lib/curl_setup.h"
#include "kube/util.h"

static char g_dir[256];

/* "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n" in base64 */
static char *g_pem_b64;
static const char *PEM = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";

static char *write_file(const char *name, const char *content)
{
    char *path = kube_strdup_printf("%s/%s", g_dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(content, f);
    fclose(f);
    return path;
}

static int setup(void **st)
{
    (void)st;
    snprintf(g_dir, sizeof g_dir, "/tmp/lib-test-config-XXXXXX");
    if (!mkdtemp(g_dir))
        return -1;
    g_pem_b64 = kube_base64_encode(PEM, strlen(PEM));
    unsetenv("KUBECONFIG");
    unsetenv("KUBERNETES_SERVICE_HOST");
    unsetenv("KUBERNETES_SERVICE_PORT");
    return 0;
}

static int teardown(void **st)
{
    (void)st;
    char *cmd = kube_strdup_printf("rm -rf '%s'", g_dir);
    int rc = system(cmd);
    free(cmd);
    free(g_pem_b64);
    return rc == 0 ? 0 : -1;
}

#define BASIC                                                                                                               \
    "apiVersion: v1\nkind: Config\ncurrent-context: dev\n"                                                                  \
    "clusters:\n- name: c1\n  cluster:\n    server: https://127.0.0.1:6443/\n"                                              \
    "    certificate-authority-data: %s\n    tls-server-name: kubernetes\n"                                                 \
    "contexts:\n- name: dev\n  context: {cluster: c1, user: u1, namespace: team-a}\n"                                       \
    "- name: other\n  context:\n    cluster: c1\n"                                                                          \
    "users:\n- name: u1\n  user:\n    token: s3cr3t\n"

/* Loads content written to name; returns cfg or NULL with *err. */
static struct kube_config *load(const char *name, const char *content, const char *ctx, char **err)
{
    char *path = write_file(name, content);
    struct kube_config *cfg = NULL;
    *err = NULL;
    int rc = kube_config_load(path, ctx, &cfg, err);
    free(path);
    if (rc)
        assert_null(cfg);
    return cfg;
}

static void expect_error(const char *content, const char *ctx, const char *needle)
{
    char *err = NULL;
    struct kube_config *cfg = load("bad.yaml", content, ctx, &err);
    assert_null(cfg);
    assert_non_null(err);
    if (!strstr(err, needle))
        fail_msg("error \"%s\" lacks \"%s\"", err, needle);
    assert_null(strchr(err, '\n'));
    free(err);
}

static void test_basic(void **st)
{
    (void)st;
    char *content = kube_strdup_printf(BASIC, g_pem_b64), *err = NULL;
    struct kube_config *cfg = load("basic.yaml", content, NULL, &err);
    assert_non_null(cfg);
    assert_string_equal(cfg->server, "https://127.0.0.1:6443");
    assert_int_equal(cfg->ca_data_len, strlen(PEM));
    assert_memory_equal(cfg->ca_data, PEM, strlen(PEM));
    assert_string_equal(cfg->namespace, "team-a");
    assert_string_equal(cfg->context, "dev");
    assert_string_equal(cfg->tls_server_name, "kubernetes");
    assert_int_equal(cfg->insecure, 0);
    char *tok = kube_config_token(cfg, &err);
    assert_string_equal(tok, "s3cr3t");
    free(tok);
    char *url = Kube_http_url(cfg, "/api/v1/pods", "limit=1");
    assert_string_equal(url, "https://127.0.0.1:6443/api/v1/pods?limit=1"); /* the server, not tls-server-name */
    free(url);
    assert_non_null(strstr(cfg->origin, "basic.yaml, context dev"));
    kube_config_free(cfg);
    /* --context: no user, default namespace */
    cfg = load("basic.yaml", content, "other", &err);
    assert_non_null(cfg);
    assert_string_equal(cfg->namespace, "default");
    assert_null(kube_config_token(cfg, &err));
    assert_null(err);
    kube_config_free(cfg);
    free(content);
}

/* The IPv6 twin of test_basic's server with tls-server-name: the URL libcurl is given names
 * tls-server-name (the certificate's name) with the server's port, and the plain URL keeps the
 * bracketed literal. */
static void test_ipv6_server_tls_name(void **st)
{
    (void)st;
    char *content = kube_strdup_printf(BASIC, g_pem_b64), *err = NULL;
    char *at = strstr(content, "127.0.0.1");
    assert_non_null(at);
    char *v6 = kube_strdup_printf("%.*s[fd00:10:96::1]%s", (int)(at - content), content, at + strlen("127.0.0.1"));
    struct kube_config *cfg = load("basic6.yaml", v6, NULL, &err);
    assert_non_null(cfg);
    assert_string_equal(cfg->server, "https://[fd00:10:96::1]:6443");
    char *url = Kube_http_url(cfg, "/api/v1/pods", NULL);
    assert_string_equal(url, "https://[fd00:10:96::1]:6443/api/v1/pods");
    free(url);
    url = Kube_curl_url(cfg, "/api/v1/pods", "limit=1");
    assert_string_equal(url, "https://kubernetes:6443/api/v1/pods?limit=1");
    free(url);
    kube_config_free(cfg);
    free(v6);
    free(content);
}

static void test_relative_paths_and_files(void **st)
{
    (void)st;
    char *sub = kube_strdup_printf("%s/sub", g_dir);
    mkdir(sub, 0700);
    free(write_file("sub/ca.crt", PEM));
    free(write_file("sub/tok", "  file-token\n"));
    free(write_file("sub/c.crt", PEM));
    free(write_file("sub/c.key", "-----BEGIN PRIVATE KEY-----\n"));
    const char *content = "current-context: x\nclusters:\n- name: k\n  cluster:\n    server: 10.1.2.3:443\n"
                          "    certificate-authority: ca.crt\n    insecure-skip-tls-verify: false\n"
                          "contexts:\n- name: x\n  context: {cluster: k, user: me}\n"
                          "users:\n- name: me\n  user:\n    tokenFile: tok\n    client-certificate: c.crt\n"
                          "    client-key: ./c.key\n";
    char *err = NULL;
    struct kube_config *cfg = load("sub/config", content, NULL, &err);
    if (!cfg)
        fail_msg("%s", err);
    char *want = kube_strdup_printf("%s/ca.crt", sub);
    assert_string_equal(cfg->ca_file, want);
    free(want);
    want = kube_strdup_printf("%s/./c.key", sub);
    assert_string_equal(cfg->key_file, want);
    free(want);
    assert_string_equal(cfg->server, "https://10.1.2.3:443");
    char *tok = kube_config_token(cfg, &err);
    assert_string_equal(tok, "file-token");
    free(tok);
    kube_config_free(cfg);
    free(sub);
}

static void test_malformed(void **st)
{
    (void)st;
    expect_error("clusters: [\n", NULL, "bad.yaml: invalid YAML: line");
    expect_error("- a\n- b\n", NULL, "bad.yaml: not a kubeconfig");
    expect_error("", NULL, "current-context is not set");
    expect_error("current-context: x\n", NULL, "context \"x\" not found");
    expect_error("current-context: [1]\n", NULL, "current-context: expected a string");
    expect_error("clusters: {a: b}\n", NULL, "bad.yaml: clusters: expected a list");
    expect_error("clusters:\n- cluster: {}\n", NULL, "clusters[0].name: expected a string");
    expect_error("clusters:\n- name: c\n  cluster: [1]\n", NULL, "clusters[0].cluster: expected a mapping");
    const char *base = "current-context: x\ncontexts:\n- name: x\n  context: {cluster: k, user: u}\n";
    char *s = kube_strdup_printf("%s", base);
    expect_error(s, NULL, "contexts[0].context.cluster: cluster \"k\" not found");
    free(s);
    s = kube_strdup_printf("%sclusters:\n- name: k\n  cluster: {tls-server-name: abc}\n", base);
    expect_error(s, NULL, "clusters[0].cluster.server: missing");
    free(s);
    s = kube_strdup_printf("%sclusters:\n- name: k\n  cluster: {server: ftp://x}\n", base);
    expect_error(s, NULL, "expected an http:// or https:// URL");
    free(s);
    s = kube_strdup_printf("%sclusters:\n- name: k\n  cluster: {server: 'https://x', certificate-authority-data: "
                           "'not base64!'}\n",
                           base);
    expect_error(s, NULL, "bad.yaml: clusters[0].cluster.certificate-authority-data: not valid base64");
    free(s);
    s = kube_strdup_printf("%sclusters:\n- name: k\n  cluster: {server: 'https://x', certificate-authority-data: "
                           "aGVsbG8=}\n",
                           base);
    expect_error(s, NULL, "certificate-authority-data: decoded data is not PEM");
    free(s);
    s = kube_strdup_printf("%sclusters:\n- name: k\n  cluster: {server: 'https://x', certificate-authority: "
                           "/nonexistent/ca.crt}\n",
                           base);
    expect_error(s, NULL, "clusters[0].cluster.certificate-authority: /nonexistent/ca.crt: No such file");
    free(s);
    s = kube_strdup_printf("%sclusters:\n- name: k\n  cluster: {server: 'https://x', insecure-skip-tls-verify: "
                           "maybe}\n",
                           base);
    expect_error(s, NULL, "insecure-skip-tls-verify: expected true or false");
    free(s);
    const char *cl = "clusters:\n- name: k\n  cluster: {server: 'https://x'}\n";
    s = kube_strdup_printf("%s%s", base, cl);
    expect_error(s, NULL, "contexts[0].context.user: user \"u\" not found");
    free(s);
    s = kube_strdup_printf("%s%susers:\n- name: u\n  user:\n    exec: {command: aws}\n", base, cl);
    expect_error(s, NULL, "users[0].user.exec.apiVersion: missing");
    free(s);
    s = kube_strdup_printf("%s%susers:\n- name: u\n  user:\n    exec: {command: aws, apiVersion: "
                           "client.authentication.k8s.io/v1}\n",
                           base, cl);
    expect_error(s, NULL, "users[0].user.exec.interactiveMode: must be specified for aws");
    free(s);
    s = kube_strdup_printf("%s%susers:\n- name: u\n  user:\n    exec: {command: aws, apiVersion: "
                           "client.authentication.k8s.io/v1alpha1}\n",
                           base, cl);
    expect_error(s, NULL, "users[0].user.exec.apiVersion: \"client.authentication.k8s.io/v1alpha1\": expected");
    free(s);
    s = kube_strdup_printf("%s%susers:\n- name: u\n  user:\n    auth-provider: {name: gcp}\n", base, cl);
    expect_error(s, NULL,
                 "users[0].user.auth-provider: the gcp auth provider was removed from client-go (and "
                 "kubectl); use an exec credential plugin instead (users[].user.exec, e.g. "
                 "gke-gcloud-auth-plugin)");
    free(s);
    s = kube_strdup_printf("%s%susers:\n- name: u\n  user:\n    as-groups: [admins]\n", base, cl);
    expect_error(s, NULL, "users[0].user: as-groups, as-uid and as-user-extra need \"as\"");
    free(s);
    s = kube_strdup_printf("%s%susers:\n- name: u\n  user:\n    exec: {command: aws, apiVersion: "
                           "client.authentication.k8s.io/v1beta1, argz: [x]}\n",
                           base, cl);
    expect_error(s, NULL, "users[0].user.exec.argz: unknown field");
    free(s);
    static const char *const lists[][2] = {
        { "args: x", "users[0].user.exec.args: expected a list of strings" },
        { "args: [a, [1]]", "users[0].user.exec.args[1]: expected a string" },
        { "env: {a: b}", "users[0].user.exec.env: expected a list of {name, value}" },
        { "env: [{name: A}]", "users[0].user.exec.env[0]: expected {name: NAME, value: STRING}" },
        { "env: [{name: A, value: b}, {name: 'B=', value: c}]", "users[0].user.exec.env[1]: expected {name" },
    };
    for (size_t i = 0; i < sizeof lists / sizeof lists[0]; i++) {
        s = kube_strdup_printf("%s%susers:\n- name: u\n  user:\n    exec: {command: aws, apiVersion: "
                               "client.authentication.k8s.io/v1beta1, %s}\n",
                               base, cl, lists[i][0]);
        expect_error(s, NULL, lists[i][1]);
        free(s);
    }
    s = kube_strdup_printf("%s%susers:\n- name: u\n  user:\n    tokn: x\n", base, cl);
    expect_error(s, NULL, "users[0].user.tokn: unknown field");
    free(s);
    s = kube_strdup_printf("%sclusters:\n- name: k\n  cluster: {server: 'https://x', proxy-url: 'ftp://p'}\n", base);
    expect_error(s, NULL, "clusters[0].cluster.proxy-url: \"ftp://p\": expected an http://, https:// or socks5://");
    free(s);
    s = kube_strdup_printf("%sclusters:\n- name: k\n  cluster: {server: 'https://x', insecure-skip-tls-verify: "
                           "true, certificate-authority-data: %s}\n",
                           base, g_pem_b64);
    expect_error(s, NULL, "specifying a root certificates file with the insecure flag is not allowed");
    free(s);
    s = kube_strdup_printf("%s%susers:\n- name: u\n  user:\n    client-key-data: '%%%%%%'\n", base, cl);
    expect_error(s, NULL, "bad.yaml: users[0].user.client-key-data: not valid base64");
    free(s);
    s = kube_strdup_printf("%s%susers:\n- name: u\n  user:\n    client-certificate-data: %s\n", base, cl, g_pem_b64);
    expect_error(s, NULL, "client-certificate is set but client-key is missing");
    free(s);
    s = kube_strdup_printf("%s%susers:\n- name: u\n  user:\n    tokenFile: /nonexistent/token\n", base, cl);
    expect_error(s, NULL, "users[0].user.tokenFile: /nonexistent/token: No such file");
    free(s);
    s = kube_strdup_printf("%s%susers:\n- name: u\n  user:\n    token: [a]\n", base, cl);
    expect_error(s, NULL, "users[0].user.token: expected a string");
    free(s);
    expect_error("a: &a [*a]\n", NULL, "invalid YAML");
    /* names quoted in messages cannot break the one-line rule */
    expect_error("current-context: x\ncontexts:\n- name: x\n  context: {cluster: \"a\\nb\"}\n", NULL,
                 "cluster \"a b\" not found");
    /* alias bombs are bounded */
    expect_error("a: &a [x,x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
                 "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\n"
                 "e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: [*e,*e,*e,*e,*e,*e,*e,*e,*e,*e]\n",
                 NULL, "more than");
    char *err = NULL;
    struct kube_config *cfg = NULL;
    assert_int_equal(kube_config_load("/nonexistent/kubeconfig", NULL, &cfg, &err), -1);
    assert_non_null(strstr(err, "kubeconfig /nonexistent/kubeconfig: No such file"));
    free(err);
}

static void test_merge(void **st)
{
    (void)st;
    char *f1 = write_file("m1.yaml", "current-context: one\n"
                                     "clusters:\n- name: shared\n  cluster: {server: 'https://first:1'}\n"
                                     "contexts:\n- name: one\n  context: {cluster: shared}\n");
    char *f2 = write_file("m2.yaml", "current-context: two\n"
                                     "clusters:\n- name: shared\n  cluster: {server: 'https://second:2'}\n"
                                     "- name: own\n  cluster: {server: 'https://own:3'}\n"
                                     "contexts:\n- name: two\n  context: {cluster: own, namespace: ns2}\n"
                                     "- name: one\n  context: {cluster: own}\n");
    char *list = kube_strdup_printf("%s/missing.yaml:%s::%s", g_dir, f1, f2);
    setenv("KUBECONFIG", list, 1);
    struct kube_config *cfg = NULL;
    char *err = NULL;
    assert_int_equal(kube_config_load(NULL, NULL, &cfg, &err), 0);
    assert_string_equal(cfg->context, "one");
    assert_string_equal(cfg->server, "https://first:1");
    kube_config_free(cfg);
    assert_int_equal(kube_config_load(NULL, "two", &cfg, &err), 0);
    assert_string_equal(cfg->server, "https://own:3");
    assert_string_equal(cfg->namespace, "ns2");
    kube_config_free(cfg);
    /* order matters: f2 first */
    char *rev = kube_strdup_printf("%s:%s", f2, f1);
    setenv("KUBECONFIG", rev, 1);
    assert_int_equal(kube_config_load(NULL, NULL, &cfg, &err), 0);
    assert_string_equal(cfg->context, "two");
    kube_config_free(cfg);
    assert_int_equal(kube_config_load(NULL, "one", &cfg, &err), 0);
    assert_string_equal(cfg->server, "https://own:3"); /* context "one" from f2 wins */
    kube_config_free(cfg);
    /* an explicit path beats KUBECONFIG */
    assert_int_equal(kube_config_load(f1, NULL, &cfg, &err), 0);
    assert_string_equal(cfg->server, "https://first:1");
    kube_config_free(cfg);
    setenv("KUBECONFIG", "/nonexistent/a:/nonexistent/b", 1);
    assert_int_equal(kube_config_load(NULL, NULL, &cfg, &err), -1);
    assert_non_null(strstr(err, "none of these files exists"));
    free(err);
    err = NULL;
    /* a broken file in the list is an error naming it */
    char *bad = write_file("m3.yaml", "clusters: 3\n");
    char *withbad = kube_strdup_printf("%s:%s", f1, bad);
    setenv("KUBECONFIG", withbad, 1);
    assert_int_equal(kube_config_load(NULL, NULL, &cfg, &err), -1);
    assert_non_null(strstr(err, "m3.yaml: clusters: expected a list"));
    free(err);
    unsetenv("KUBECONFIG");
    free(withbad);
    free(bad);
    free(rev);
    free(list);
    free(f1);
    free(f2);
}

static void set_mtime(const char *path, long sec)
{
    struct timeval tv[2] = { { sec, 0 }, { sec, 0 } };
    assert_int_equal(utimes(path, tv), 0);
}

static void test_in_cluster(void **st)
{
    (void)st;
    char *sa = kube_strdup_printf("%s/sa", g_dir);
    mkdir(sa, 0700);
    char *tokp = write_file("sa/token", "tok-1\n");
    set_mtime(tokp, 1000);
    free(write_file("sa/ca.crt", PEM));
    free(write_file("sa/namespace", "jobs\n"));
    setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
    setenv("KUBERNETES_SERVICE_PORT", "443", 1);
    setenv("KUBE_SA_DIR", sa, 1);
    char *oldhome = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
    struct kube_config *cfg = NULL;
    char *err = NULL;
    assert_int_equal(kube_config_load(NULL, NULL, &cfg, &err), 0);
    assert_int_equal(cfg->in_cluster, 1);
    assert_string_equal(cfg->server, "https://10.96.0.1:443");
    assert_string_equal(cfg->namespace, "jobs");
    char *t = kube_config_token(cfg, &err);
    assert_string_equal(t, "tok-1");
    free(t);
    /* rotation: same size, new mtime */
    free(write_file("sa/token", "tok-2\n"));
    set_mtime(tokp, 2000);
    t = kube_config_token(cfg, &err);
    assert_string_equal(t, "tok-2");
    free(t);
    /* file vanishes: a clear error */
    unlink(tokp);
    t = kube_config_token(cfg, &err);
    assert_null(t);
    assert_non_null(strstr(err, "sa/token"));
    free(err);
    err = NULL;
    kube_config_free(cfg);
    assert_int_equal(kube_config_load(NULL, NULL, &cfg, &err), -1);
    assert_non_null(strstr(err, "sa/token: No such file"));
    free(err);
    err = NULL;
    free(write_file("sa/token", "tok-3"));
    setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
    assert_int_equal(kube_config_in_cluster(NULL, &cfg, &err), 0);
    assert_string_equal(cfg->server, "https://[fd00::1]:443");
    kube_config_free(cfg);
    /* missing env */
    unsetenv("KUBERNETES_SERVICE_PORT");
    assert_int_equal(kube_config_in_cluster(NULL, &cfg, &err), -1);
    assert_non_null(strstr(err, "KUBERNETES_SERVICE_PORT"));
    free(err);
    err = NULL;
    /* nothing configured at all: HOME without .kube/config */
    unsetenv("KUBERNETES_SERVICE_HOST");
    setenv("HOME", g_dir, 1);
    assert_int_equal(kube_config_load(NULL, NULL, &cfg, &err), -1);
    assert_non_null(strstr(err, "no Kubernetes configuration"));
    free(err);
    if (oldhome)
        setenv("HOME", oldhome, 1);
    free(oldhome);
    unsetenv("KUBE_SA_DIR");
    free(tokp);
    free(sa);
}

static void test_parse_memory(void **st)
{
    (void)st;
    const char *doc =
        "{\"current-context\":\"j\",\"clusters\":[{\"name\":\"c\",\"cluster\":{\"server\":\"http://h:8\","
        "\"insecure-skip-tls-verify\":true}}],\"contexts\":[{\"name\":\"j\",\"context\":{\"cluster\":\"c\"}}]}";
    struct kube_config *cfg = NULL;
    char *err = NULL;
    assert_int_equal(kube_config_parse(doc, strlen(doc), "inline", NULL, NULL, &cfg, &err), 0);
    assert_string_equal(cfg->server, "http://h:8");
    assert_int_equal(cfg->insecure, 1);
    kube_config_free(cfg);
    cfg = kube_config_new_server("http://127.0.0.1:1/");
    assert_string_equal(cfg->server, "http://127.0.0.1:1");
    assert_string_equal(cfg->namespace, "default");
    kube_config_free(cfg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_basic),
        cmocka_unit_test(test_ipv6_server_tls_name),
        cmocka_unit_test(test_relative_paths_and_files),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_merge),
        cmocka_unit_test(test_in_cluster),
        cmocka_unit_test(test_parse_memory),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
