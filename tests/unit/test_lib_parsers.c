/* test_lib_parsers.c - unit tests for the library's pure parsers: URL/query
 * encoding, resource paths, Status decoding, label selectors, base64, times,
 * JSON paths and typed field reads, whole writes, retry/backoff decisions and the
 * log line format. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "kube/kube.h"

static void test_url_escape(void **st)
{
    (void)st;
    char *s = kube_url_escape("a b/c?d=e&f~g.h_i-j%");
    assert_string_equal(s, "a%20b%2Fc%3Fd%3De%26f~g.h_i-j%25");
    char *u = kube_url_unescape(s, 0);
    assert_string_equal(u, "a b/c?d=e&f~g.h_i-j%");
    free(s);
    free(u);
    s = kube_url_escape("\xc3\xa9");
    assert_string_equal(s, "%C3%A9");
    free(s);
    assert_null(kube_url_unescape("%zz", 0));
    assert_null(kube_url_unescape("%4", 0));
    u = kube_url_unescape("a+b", 1);
    assert_string_equal(u, "a b");
    free(u);
    s = kube_url_escape("");
    assert_string_equal(s, "");
    free(s);
}

static void test_query_builder(void **st)
{
    (void)st;
    struct kube_query *q = kube_query_new();
    assert_string_equal(kube_query_str(q), "");
    assert_int_equal(kube_query_add(q, "labelSelector", "app=x,role in (a,b)"), 0);
    assert_int_equal(kube_query_add(q, "skip", NULL), 0);
    assert_int_equal(kube_query_add_int(q, "limit", 50), 0);
    assert_int_equal(kube_query_add(q, "k", "1"), 0);
    assert_int_equal(kube_query_add(q, "k", "2"), 0);
    assert_string_equal(kube_query_str(q), "labelSelector=app%3Dx%2Crole%20in%20%28a%2Cb%29&limit=50&k=1&k=2");
    kube_query_free(q);

    q = kube_query_new();
    struct kube_list_opts o = { .label_selector = "a=b",
                                .field_selector = "metadata.name=x",
                                .limit = 10,
                                .continue_token = "tok/+=",
                                .resource_version = "0",
                                .timeout_seconds = 30,
                                .allow_bookmarks = 1 };
    assert_int_equal(kube_query_add_list_opts(q, &o), 0);
    assert_string_equal(kube_query_str(q), "labelSelector=a%3Db&fieldSelector=metadata.name%3Dx&limit=10&"
                                           "continue=tok%2F%2B%3D&resourceVersion=0&timeoutSeconds=30&"
                                           "allowWatchBookmarks=true");
    kube_query_free(q);
    q = kube_query_new();
    struct kube_list_opts empty = { 0 };
    assert_int_equal(kube_query_add_list_opts(q, &empty), 0);
    assert_string_equal(kube_query_str(q), "");
    kube_query_free(q);
}

static void check_path(const struct kube_resource *r, const char *ns, const char *name, const char *sub, const char *want)
{
    char *p = kube_resource_path(r, ns, name, sub);
    if (want) {
        assert_non_null(p);
        assert_string_equal(p, want);
    } else {
        assert_null(p);
    }
    free(p);
}

static void test_resource_path(void **st)
{
    (void)st;
    /* a custom resource: lib/ builds its paths from the descriptor alone */
    static const struct kube_resource mpijobs = { "kubeflow.org", "v2beta1", "mpijobs", "MPIJob", 1 };
    check_path(&KUBE_RES_PODS, "default", NULL, NULL, "/api/v1/namespaces/default/pods");
    check_path(&KUBE_RES_PODS, NULL, NULL, NULL, "/api/v1/pods");
    check_path(&KUBE_RES_PODS, "ns", "p-0", "exec", "/api/v1/namespaces/ns/pods/p-0/exec");
    check_path(&KUBE_RES_JOBS, "ns", "j", "status", "/apis/batch/v1/namespaces/ns/jobs/j/status");
    check_path(&mpijobs, "ns", NULL, NULL, "/apis/kubeflow.org/v2beta1/namespaces/ns/mpijobs");
    check_path(&KUBE_RES_NAMESPACES, "ignored", "kube-system", NULL, "/api/v1/namespaces/kube-system");
    check_path(&KUBE_RES_PODS, "ns", "a/b", NULL, "/api/v1/namespaces/ns/pods/a%2Fb");
    check_path(&KUBE_RES_PODS, "ns", "..", NULL, NULL);
    check_path(&KUBE_RES_PODS, "ns", "", NULL, NULL);
    check_path(&KUBE_RES_PODS, "ns", NULL, "status", NULL);
    char *av = kube_resource_api_version(&KUBE_RES_JOBS);
    assert_string_equal(av, "batch/v1");
    free(av);
    av = kube_resource_api_version(&KUBE_RES_PODS);
    assert_string_equal(av, "v1");
    free(av);
}

static void test_status_decode(void **st)
{
    (void)st;
    struct kube_error e = KUBE_ERROR_INIT;
    const char *nf = "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"message\":\"pods \\\"x\\\" "
                     "not found\",\"reason\":\"NotFound\",\"details\":{\"name\":\"x\",\"kind\":\"pods\"},\"code\":404}";
    kube_status_decode(nf, strlen(nf), 404, &e);
    assert_int_equal(e.reason, KUBE_NOT_FOUND);
    assert_int_equal(e.http_code, 404);
    assert_non_null(strstr(e.message, "pods \"x\" not found"));
    assert_int_equal(e.retry_after_s, -1);

    const char *conflict = "{\"kind\":\"Status\",\"reason\":\"Conflict\",\"code\":409,\"message\":\"the object has "
                           "been modified\"}";
    kube_status_decode(conflict, strlen(conflict), 409, &e);
    assert_int_equal(e.reason, KUBE_CONFLICT);
    const char *exists = "{\"kind\":\"Status\",\"reason\":\"AlreadyExists\",\"code\":409}";
    kube_status_decode(exists, strlen(exists), 409, &e);
    assert_int_equal(e.reason, KUBE_ALREADY_EXISTS);
    assert_non_null(strstr(e.message, "no message"));
    const char *expired = "{\"kind\":\"Status\",\"reason\":\"Expired\",\"code\":410,\"message\":\"too old resource "
                          "version: 1 (5)\"}";
    kube_status_decode(expired, strlen(expired), 200, &e);
    assert_int_equal(e.reason, KUBE_GONE);
    const char *tmr = "{\"kind\":\"Status\",\"reason\":\"TooManyRequests\",\"code\":429,\"details\":"
                      "{\"retryAfterSeconds\":3}}";
    kube_status_decode(tmr, strlen(tmr), 429, &e);
    assert_int_equal(e.reason, KUBE_TOO_MANY_REQUESTS);
    assert_int_equal(e.retry_after_s, 3);
    /* unknown reason: falls back on the code */
    const char *odd = "{\"kind\":\"Status\",\"reason\":\"SomethingNew\",\"code\":503}";
    kube_status_decode(odd, strlen(odd), 503, &e);
    assert_int_equal(e.reason, KUBE_SERVICE_UNAVAILABLE);
    /* not a Status */
    const char *html = "<html>\n<body>Bad Gateway</body></html>";
    kube_status_decode(html, strlen(html), 502, &e);
    assert_int_equal(e.reason, KUBE_UNKNOWN);
    assert_int_equal(e.http_code, 502);
    assert_non_null(strstr(e.message, "Bad Gateway"));
    assert_null(strchr(e.message, '\n'));
    kube_status_decode(NULL, 0, 403, &e);
    assert_int_equal(e.reason, KUBE_FORBIDDEN);
    kube_status_decode("{\"kind\":\"Status\",\"code\":\"x\"}", 27, 401, &e);
    assert_int_equal(e.reason, KUBE_UNAUTHORIZED);
    kube_error_clear(&e);
    assert_int_equal(e.reason, KUBE_OK);
    assert_null(e.message);
    assert_string_equal(kube_reason_name(KUBE_TRANSPORT), "Transport");
    assert_string_equal(kube_reason_name((enum kube_reason)999), "Unknown");
    assert_int_equal(kube_reason_from_http(422), KUBE_INVALID);
    assert_int_equal(kube_reason_from_http(204), KUBE_OK);
}

static int sel_match(const char *sel, const char *labels_json)
{
    char *err = NULL;
    struct kube_selector *s = kube_selector_parse(sel, &err);
    if (!s) {
        free(err);
        return -1;
    }
    json_t *labels = json_loads(labels_json, 0, NULL);
    int m = kube_selector_matches(s, labels);
    json_decref(labels);
    kube_selector_free(s);
    return m;
}

static void test_selector(void **st)
{
    (void)st;
    const char *l = "{\"app\":\"mpi\",\"role\":\"worker\",\"idx\":\"3\"}";
    assert_int_equal(sel_match("", l), 1);
    assert_int_equal(sel_match(NULL, l), 1);
    assert_int_equal(sel_match("app=mpi", l), 1);
    assert_int_equal(sel_match("app==mpi,role=worker", l), 1);
    assert_int_equal(sel_match("app=mpi,role=launcher", l), 0);
    assert_int_equal(sel_match("role!=launcher", l), 1);
    assert_int_equal(sel_match("missing!=x", l), 1);
    assert_int_equal(sel_match("role in (worker, launcher)", l), 1);
    assert_int_equal(sel_match("role notin (worker)", l), 0);
    assert_int_equal(sel_match("missing notin (worker)", l), 1);
    assert_int_equal(sel_match("idx", l), 1);
    assert_int_equal(sel_match("!idx", l), 0);
    assert_int_equal(sel_match(" !gone , app = mpi ", l), 1);
    assert_int_equal(sel_match("training.kubeflow.org/job-role=worker", "{\"training.kubeflow.org/job-role\":\"worker\"}"),
                     1);
    assert_int_equal(sel_match("app=", "{\"app\":\"\"}"), 1);
    assert_int_equal(sel_match("app=mpi", "null"), 0);
    char *err = NULL;
    assert_null(kube_selector_parse("app=mpi,", &err));
    assert_non_null(strstr(err, "expected a label key"));
    free(err);
    err = NULL;
    assert_null(kube_selector_parse("role in worker", &err));
    assert_non_null(strstr(err, "'('"));
    free(err);
    err = NULL;
    assert_null(kube_selector_parse("role in (a b)", &err));
    free(err);
    err = NULL;
    assert_null(kube_selector_parse("a>b", &err));
    free(err);
}

static void test_parse_int(void **st)
{
    (void)st;
    long long v = 7;
    assert_int_equal(kube_parse_int("42", 0, 100, &v), 0);
    assert_int_equal(v, 42);
    assert_int_equal(kube_parse_int("-5", -10, 10, &v), 0);
    assert_int_equal(v, -5);
    assert_int_equal(kube_parse_int("9223372036854775807", 0, LLONG_MAX, &v), 0);
    assert_true(v == LLONG_MAX);
    assert_int_equal(kube_parse_int("-9223372036854775808", LLONG_MIN, 0, &v), 0);
    assert_true(v == LLONG_MIN);
    v = 7;
    static const char *const bad[] = { "", "-5", "+5", " 5", "5 ", "5x", "0x10", "101", "-", "9223372036854775808" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(kube_parse_int(bad[i], 0, 100, &v), -1);
    assert_int_equal(kube_parse_int(NULL, 0, 100, &v), -1);
    assert_int_equal(kube_parse_int("-9223372036854775809", LLONG_MIN, 0, &v), -1);
    assert_int_equal(v, 7);
    errno = 0;
    assert_int_equal(kube_parse_int("99999999999999999999", 0, LLONG_MAX, &v), -1);
    assert_int_equal(errno, 0);
    assert_int_equal(kube_parse_int_n("12ab", 2, 0, 100, &v), 0); /* reads only len bytes */
    assert_int_equal(v, 12);
    assert_int_equal(kube_parse_int_n("1\0", 3, 0, 100, &v), -1); /* stops at the NUL */
}

static void test_base64_time(void **st)
{
    (void)st;
    char *out = NULL;
    size_t n = 0;
    assert_int_equal(kube_base64_decode("aGVsbG8=", 8, &out, &n), 0);
    assert_int_equal(n, 5);
    assert_string_equal(out, "hello");
    free(out);
    assert_int_equal(kube_base64_decode("aGVs\nbG8", 8, &out, &n), 0);
    assert_string_equal(out, "hello");
    free(out);
    assert_int_equal(kube_base64_decode("", 0, &out, &n), 0);
    assert_int_equal(n, 0);
    free(out);
    assert_int_equal(kube_base64_decode("a", 1, &out, &n), -1);
    assert_int_equal(kube_base64_decode("aGVs*G8=", 8, &out, &n), -1);
    assert_int_equal(kube_base64_decode("aG=Vs", 5, &out, &n), -1);
    char *enc = kube_base64_encode("hello!?", 7);
    assert_string_equal(enc, "aGVsbG8hPw==");
    free(enc);
    assert_int_equal(kube_base64_decode("QR==", 4, &out, &n), -1); /* unused bits set */
    assert_int_equal(kube_base64_decode("a-_w", 4, &out, &n), 0);  /* URL-safe letters */
    assert_int_equal(n, 3);
    free(out);
    unsigned char *blob = NULL;
    assert_int_equal(kube_base64_decode_strict("aGVsbG8=", 8, &blob, &n), 0);
    assert_int_equal(n, 5);
    free(blob);
    assert_int_equal(kube_base64_decode_strict("aGVsbG8", 7, &blob, &n), -1);
    assert_int_equal(kube_base64_decode_strict("aG=sbG8=", 8, &blob, &n), -1);
    assert_int_equal(kube_base64_decode_strict("", 0, &blob, &n), -1);
    char key[25];
    assert_int_equal(kube_base64_encode_to(key, "0123456789abcdef", 16), 24);
    assert_string_equal(key, "MDEyMzQ1Njc4OWFiY2RlZg==");

    int64_t ms = 0;
    assert_int_equal(kube_time_parse_ms("2026-11-30T06:01:02Z", &ms), 0);
    char buf[40];
    assert_string_equal(kube_time_format_ms(ms, buf, sizeof buf), "2026-11-30T06:01:02.000Z");
    assert_int_equal(kube_time_parse_ms("2026-11-30T07:01:02.5+01:00", &ms), 0);
    assert_string_equal(kube_time_format_ms(ms, buf, sizeof buf), "2026-11-30T06:01:02.500Z");
    assert_int_equal(kube_time_parse_ms("1970-01-01T00:00:00.123456Z", &ms), 0);
    assert_int_equal(ms, 123);
    assert_int_equal(kube_time_parse_ms("2026-13-30T06:01:02Z", &ms), -1);
    assert_int_equal(kube_time_parse_ms("2026-11-30T06:01:02", &ms), -1);
    assert_int_equal(kube_time_parse_ms("2026-11-30T06:01:02Zjunk", &ms), -1);
    assert_int_equal(kube_time_parse_ms("", &ms), -1);
    assert_int_equal(kube_time_parse_ms("2026-11-30T06:01:02.999Z", &ms), 0);
    assert_string_equal(kube_time_format(ms, buf, sizeof buf), "2026-11-30T06:01:02Z");
}

/* The typed reads name the field in their errors; the key-list and array lookups. */
static void test_json_fields(void **st)
{
    (void)st;
    json_t *o = json_loads("{\"metadata\":{\"labels\":{\"a.b/c\":\"v\"}},\"n\":2.0,\"f\":2.5,"
                           "\"s\":\"x\",\"b\":true,\"z\":null,"
                           "\"conds\":[{\"type\":\"A\"},{\"type\":\"Ready\",\"status\":\"True\"}]}",
                           0, NULL);
    assert_non_null(o);
    assert_string_equal(kube_json_at_str(o, "metadata", "labels", "a.b/c"), "v");
    assert_null(kube_json_at(o, "metadata", "missing", "x"));
    long long n = -1;
    char *err = NULL;
    assert_int_equal(kube_json_get_int(o, "n", "spec", &n, &err), 0);
    assert_int_equal(n, 2);
    assert_int_equal(kube_json_get_int(o, "z", "spec", &n, &err), 0);
    assert_int_equal(n, 2);
    assert_int_equal(kube_json_get_int(o, "f", "spec", &n, &err), -1);
    assert_string_equal(err, "spec.f: expected an integer, got a number with a fraction");
    int b = 0;
    assert_int_equal(kube_json_get_bool(o, "s", "spec", &b, &err), -1);
    assert_string_equal(err, "spec.s: expected a boolean, got a string");
    const char *s = NULL;
    assert_int_equal(kube_json_get_str(o, "s", "spec", &s, &err), 0);
    assert_string_equal(s, "x");
    assert_int_equal(kube_json_type_err(&err, "spec.x", "an object", NULL), -1);
    assert_string_equal(err, "spec.x: expected an object, got nothing");
    assert_int_equal(kube_set_err(&err, "%s=%d", "k", 7), -1);
    assert_string_equal(err, "k=7");
    free(err);
    json_t *c = kube_json_find(json_object_get(o, "conds"), "type", "Ready");
    assert_string_equal(json_string_value(json_object_get(c, "status")), "True");
    assert_null(kube_json_find(json_object_get(o, "conds"), "type", "B"));
    assert_true(kube_json_equal(NULL, NULL));
    assert_false(kube_json_equal(o, NULL));
    kube_json_set_str(kube_json_obj(o, "s"), "k", NULL); /* "s" was a string: becomes an object */
    assert_string_equal(kube_json_at_str(o, "s", "k"), "");
    assert_int_equal(json_array_size(kube_json_arr(o, "conds")), 2);
    json_decref(o);
}

/* kube_write_all delivers more than a pipe holds; the cancel form stops at the cancel fd. */
static void test_write_all(void **st)
{
    (void)st;
    int p[2], c[2];
    signal(SIGPIPE, SIG_IGN);
    assert_int_equal(pipe(p), 0);
    assert_int_equal(pipe(c), 0);
    size_t len = 40000; /* < 64 KiB pipe buffer: fits without a reader */
    char *buf = malloc(len);
    assert_non_null(buf);
    memset(buf, 'x', len);
    assert_int_equal(kube_write_all(p[1], buf, len), 0);
    size_t got = 0;
    while (got < len) {
        ssize_t r = read(p[0], buf, len - got);
        assert_true(r > 0);
        got += (size_t)r;
    }
    assert_int_equal(write(c[1], "!", 1), 1);
    /* 1 MiB into a 64 KiB pipe nobody reads: only the cancel fd can end it */
    char *big = calloc(1, 1 << 20);
    assert_non_null(big);
    assert_int_equal(kube_write_all_cancel(p[1], c[0], big, 1 << 20), -2);
    close(p[0]);
    assert_int_equal(kube_write_all(p[1], "y", 1), -1);
    assert_int_equal(errno, EPIPE);
    free(big);
    free(buf);
    close(p[1]);
    close(c[0]);
    close(c[1]);
}

static void test_json_at(void **st)
{
    (void)st;
    json_t *o = json_loads("{\"metadata\":{\"name\":\"p\",\"namespace\":\"n\",\"resourceVersion\":\"7\","
                           "\"labels\":{\"a\":\"b\"}},\"spec\":{\"containers\":[{\"name\":\"c0\"},{\"name\":\"c1\"}],"
                           "\"n\":3,\"on\":true}}",
                           0, NULL);
    assert_non_null(o);
    assert_string_equal(kube_obj_name(o), "p");
    assert_string_equal(kube_obj_namespace(o), "n");
    assert_string_equal(kube_obj_resource_version(o), "7");
    assert_null(kube_obj_uid(o));
    assert_string_equal(kube_obj_label(o, "a"), "b");
    assert_string_equal(kube_json_at_str(json_array_get(kube_json_at(o, "spec", "containers"), 1), "name"), "c1");
    assert_null(kube_json_at_str(json_array_get(kube_json_at(o, "spec", "containers"), 2), "name"));
    assert_null(kube_json_at(o, "spec", "containers", "x"));
    assert_null(kube_json_at_str(o, "spec", "n"));
    assert_int_equal(kube_json_at_int(o, -1, "spec", "n"), 3);
    assert_int_equal(kube_json_at_int(o, -1, "spec", "missing"), -1);
    assert_int_equal(kube_json_at_int(o, -1, "spec", "on"), -1);
    assert_int_equal(kube_json_at_bool(o, 0, "spec", "on"), 1);
    assert_int_equal(kube_json_at_bool(o, 0, "spec", "n"), 0);
    json_decref(o);
    char *err = NULL;
    assert_null(kube_json_parse("{\"a\":", 5, &err));
    assert_non_null(strstr(err, "invalid JSON"));
    free(err);
}

static void test_backoff(void **st)
{
    (void)st;
    struct kube_retry_policy p;
    kube_retry_policy_default(&p);
    assert_int_equal(kube_backoff_delay_ms(&p, 1, NULL), 200);
    assert_int_equal(kube_backoff_delay_ms(&p, 2, NULL), 400);
    assert_int_equal(kube_backoff_delay_ms(&p, 5, NULL), 3200);
    assert_int_equal(kube_backoff_delay_ms(&p, 6, NULL), 5000);
    assert_int_equal(kube_backoff_delay_ms(&p, 60, NULL), 5000);
    unsigned seed = 42;
    for (int i = 0; i < 200; i++) {
        int64_t d = kube_backoff_delay_ms(&p, 3, &seed);
        assert_true(d >= 400 && d <= 800);
    }
    struct kube_error e = KUBE_ERROR_INIT;
    int64_t delay = 0;
    e.reason = KUBE_TOO_MANY_REQUESTS;
    e.http_code = 429;
    assert_true(kube_retry_retryable(&e, 0));
    e.retry_after_s = 2;
    assert_int_equal(kube_retry_next(&p, &e, 0, 1, 0, NULL, &delay), 1);
    assert_int_equal(delay, 2000);
    assert_int_equal(kube_retry_next(&p, &e, 0, 1, 29000, NULL, &delay), 0); /* over budget */
    assert_int_equal(kube_retry_next(&p, &e, 0, 5, 0, NULL, &delay), 0);     /* attempts used up */
    e.retry_after_s = -1;
    e.reason = KUBE_INTERNAL;
    e.http_code = 500;
    assert_false(kube_retry_retryable(&e, 0));
    assert_true(kube_retry_retryable(&e, 1));
    assert_int_equal(kube_retry_next(&p, &e, 1, 2, 0, NULL, &delay), 1);
    assert_int_equal(delay, 400);
    e.reason = KUBE_TRANSPORT;
    e.http_code = 0;
    assert_false(kube_retry_retryable(&e, 0));
    assert_true(kube_retry_retryable(&e, 1));
    e.permanent = 1; /* e.g. TLS verification failed */
    assert_false(kube_retry_retryable(&e, 1));
    assert_int_equal(kube_retry_next(&p, &e, 1, 1, 0, NULL, &delay), 0);
    e.permanent = 0;
    e.reason = KUBE_CONFLICT;
    e.http_code = 409;
    assert_false(kube_retry_retryable(&e, 1));
    e.reason = KUBE_NOT_FOUND;
    assert_false(kube_retry_retryable(&e, 1));
    e.reason = KUBE_SERVICE_UNAVAILABLE;
    assert_true(kube_retry_retryable(&e, 0));
    assert_int_equal(kube_parse_retry_after(" 7\r\n"), 7);
    assert_int_equal(kube_parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"), -1);
    assert_int_equal(kube_parse_retry_after("99999999999"), 86400);
}

static void test_log_format(void **st)
{
    (void)st;
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    kube_log_set_fd(fds[1]);
    kube_log_set_component("mpi-agent");
    kube_log_set_level(KUBE_LOG_INFO);
    kube_log(KUBE_LOG_INFO, "hello %d\nsecond line\n", 42);
    KLOG_DEBUG("not shown");
    kube_log_set_verbosity(1);
    assert_int_equal(kube_log_get_level(), KUBE_LOG_DEBUG);
    KLOG_DEBUG("shown");
    kube_log_set_fd(2);
    close(fds[1]);
    char buf[512] = { 0 };
    ssize_t n = read(fds[0], buf, sizeof buf - 1);
    close(fds[0]);
    assert_true(n > 0);
    /* 2026-11-30T06:01:02.123Z mpi-agent INFO hello 42 second line */
    assert_int_equal(buf[4], '-');
    assert_int_equal(buf[10], 'T');
    assert_int_equal(buf[23], 'Z');
    assert_memory_equal(buf + 24, " mpi-agent INFO hello 42 second line\n", 37);
    assert_non_null(strstr(buf, "mpi-agent DEBUG shown\n"));
    assert_null(strstr(buf, "not shown"));
    assert_int_equal(kube_log_level_parse("trace"), KUBE_LOG_TRACE);
    assert_int_equal(kube_log_level_parse("WARN"), KUBE_LOG_WARN);
    assert_int_equal(kube_log_level_parse("2"), KUBE_LOG_INFO);
    assert_int_equal(kube_log_level_parse("loud"), -1);
    kube_log_set_level(KUBE_LOG_INFO);
}

static void test_cancel(void **st)
{
    (void)st;
    struct kube_cancel *c = kube_cancel_new();
    assert_non_null(c);
    assert_int_equal(kube_cancel_requested(c), 0);
    int64_t t0 = kube_now_ms();
    assert_int_equal(kube_cancel_sleep_ms(c, 50), 0);
    assert_true(kube_now_ms() - t0 >= 50);
    kube_cancel_trigger(c);
    kube_cancel_trigger(c);
    t0 = kube_now_ms();
    assert_int_equal(kube_cancel_sleep_ms(c, 5000), 1);
    assert_true(kube_now_ms() - t0 < 1000);
    assert_int_equal(kube_cancel_sleep_any_ms(NULL, c, 5000), 1);
    kube_cancel_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_url_escape),    cmocka_unit_test(test_query_builder), cmocka_unit_test(test_resource_path),
        cmocka_unit_test(test_status_decode), cmocka_unit_test(test_selector),      cmocka_unit_test(test_base64_time),
        cmocka_unit_test(test_parse_int),     cmocka_unit_test(test_json_at),       cmocka_unit_test(test_backoff),
        cmocka_unit_test(test_log_format),    cmocka_unit_test(test_cancel),        cmocka_unit_test(test_json_fields),
        cmocka_unit_test(test_write_all),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
