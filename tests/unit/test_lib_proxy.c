/* test_lib_proxy.c - which proxy kube_config_proxy picks, against the rules of Go's
 * httpproxy (what kubectl does): proxy-url first; HTTPS_PROXY/HTTP_PROXY by scheme, lower
 * case too; NO_PROXY names, domains, *, IPs, CIDRs, host:port; never for loopback. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "kube/config.h"

static void expect(const char *server, const char *proxy_url, const char *want)
{
    struct kube_config *cfg = kube_config_new_server(server);
    assert_non_null(cfg);
    if (proxy_url)
        cfg->proxy_url = strdup(proxy_url);
    char *got = kube_config_proxy(cfg);
    if ((want == NULL) != (got == NULL) || (want && strcmp(want, got)))
        fail_msg("%s (proxy-url %s, HTTPS_PROXY=%s NO_PROXY=%s): got %s, want %s", server, proxy_url ? proxy_url : "-",
                 getenv("HTTPS_PROXY") ? getenv("HTTPS_PROXY") : "-", getenv("NO_PROXY") ? getenv("NO_PROXY") : "-",
                 got ? got : "direct", want ? want : "direct");
    free(got);
    kube_config_free(cfg);
}

static void clear_env(void)
{
    const char *v[] = { "HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy", NULL };
    for (int i = 0; v[i]; i++)
        unsetenv(v[i]);
}

static void test_sources(void **st)
{
    (void)st;
    clear_env();
    expect("https://api.example.com:6443", NULL, NULL);
    expect("https://127.0.0.1:6443", "http://p:3128", "http://p:3128"); /* proxy-url: even for loopback */
    setenv("https_proxy", "p.corp:3128", 1);
    expect("https://api.example.com:6443", NULL, "http://p.corp:3128"); /* no scheme: http:// */
    setenv("HTTPS_PROXY", "http://P:1", 1);
    expect("https://api.example.com:6443", NULL, "http://P:1"); /* upper case first */
    expect("http://api.example.com:8080", NULL, NULL);          /* http: HTTP_PROXY only */
    setenv("HTTP_PROXY", "http://h:2", 1);
    expect("http://api.example.com:8080", NULL, "http://h:2");
    expect("https://localhost:6443", NULL, NULL);
    expect("https://127.0.0.5:6443", NULL, NULL);
    expect("https://[::1]:6443", NULL, NULL);
    expect("https://api.example.com:6443", "socks5://s:1080", "socks5://s:1080");
    clear_env();
}

static void test_no_proxy(void **st)
{
    (void)st;
    clear_env();
    setenv("HTTPS_PROXY", "http://p:3128", 1);
    const char *P = "http://p:3128";
    setenv("NO_PROXY", "example.com", 1);
    expect("https://example.com", NULL, NULL);
    expect("https://api.example.com", NULL, NULL);
    expect("https://notexample.com", NULL, P);
    setenv("NO_PROXY", ".example.com", 1);
    expect("https://example.com", NULL, P);
    expect("https://api.example.com", NULL, NULL);
    setenv("NO_PROXY", "*.example.com", 1);
    expect("https://example.com", NULL, P);
    expect("https://a.b.example.com", NULL, NULL);
    setenv("NO_PROXY", " Other.org , 10.0.0.0/8", 1);
    expect("https://10.96.0.1:443", NULL, NULL);
    expect("https://11.0.0.1:443", NULL, P);
    expect("https://x.other.org", NULL, NULL);
    setenv("NO_PROXY", "192.168.1.10", 1);
    expect("https://192.168.1.10:6443", NULL, NULL);
    expect("https://192.168.1.11:6443", NULL, P);
    setenv("NO_PROXY", "api.example.com:6443", 1);
    expect("https://api.example.com:6443", NULL, NULL);
    expect("https://api.example.com:443", NULL, P);
    setenv("NO_PROXY", "fd00::/8", 1);
    expect("https://[fd00::1]:6443", NULL, NULL);
    expect("https://[fe80::1]:6443", NULL, P);
    setenv("NO_PROXY", "*", 1);
    expect("https://anything.example", NULL, NULL);
    expect("https://anything.example", "http://kc:1", "http://kc:1"); /* NO_PROXY is for the environment */
    clear_env();
}

static void test_redact(void **st)
{
    (void)st;
    const char *cases[][2] = { { "http://u:p%40ss@proxy:3128", "http://***@proxy:3128" },
                               { "http://proxy:3128", "http://proxy:3128" },
                               { "socks5://a@b@h:1/x@y", "socks5://***@h:1/x@y" } };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *r = kube_proxy_redact(cases[i][0]);
        assert_string_equal(r, cases[i][1]);
        free(r);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sources),
        cmocka_unit_test(test_no_proxy),
        cmocka_unit_test(test_redact),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
