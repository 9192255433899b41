/* test_lib_watch.c - unit tests for the watch stream parser: one event per
 * line, events split across chunks at every byte, several per chunk, blank
 * lines, CRLF, malformed and overlong lines, truncation and early stop. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/json.h"
#include "kube/watch.h"

#define EV_ADD "{\"type\":\"ADDED\",\"object\":{\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"1\"}}}"
#define EV_MOD                                                                                                              \
    "{\"type\":\"MODIFIED\",\"object\":{\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"2\"}}}"
#define EV_DEL "{\"type\":\"DELETED\",\"object\":{\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"3\"}}}"
#define EV_BM "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"Pod\",\"metadata\":{\"resourceVersion\":\"9\"}}}"
#define EV_ERR "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"code\":410,\"reason\":\"Expired\"}}"

struct seen {
    char log[1024];
    int n;
    int stop_after;
};

static int record(const struct kube_watch_event *ev, void *ud)
{
    struct seen *s = ud;
    const char *rv = kube_obj_resource_version(ev->object);
    size_t l = strlen(s->log);
    snprintf(s->log + l, sizeof s->log - l, "%s:%s;", kube_event_type_name(ev->type), rv ? rv : "-");
    s->n++;
    return s->stop_after && s->n >= s->stop_after;
}

static const char *stream = EV_ADD "\n" EV_MOD "\r\n\n" EV_BM "\n" EV_DEL "\n" EV_ERR "\n";
static const char *expect = "ADDED:1;MODIFIED:2;BOOKMARK:9;DELETED:3;ERROR:-;";

static void test_whole_stream(void **st)
{
    (void)st;
    struct kube_watch_parser *p = kube_watch_parser_new(0);
    struct seen s = { 0 };
    char *err = NULL;
    assert_int_equal(kube_watch_parser_feed(p, stream, strlen(stream), record, &s, &err), 0);
    assert_string_equal(s.log, expect);
    assert_int_equal(kube_watch_parser_pending(p), 0);
    kube_watch_parser_free(p);
}

/* Every split point into two chunks, and byte-at-a-time. */
static void test_split_everywhere(void **st)
{
    (void)st;
    size_t n = strlen(stream);
    for (size_t cut = 0; cut <= n; cut++) {
        struct kube_watch_parser *p = kube_watch_parser_new(0);
        struct seen s = { 0 };
        assert_int_equal(kube_watch_parser_feed(p, stream, cut, record, &s, NULL), 0);
        assert_int_equal(kube_watch_parser_feed(p, stream + cut, n - cut, record, &s, NULL), 0);
        assert_string_equal(s.log, expect);
        kube_watch_parser_free(p);
    }
    struct kube_watch_parser *p = kube_watch_parser_new(0);
    struct seen s = { 0 };
    for (size_t i = 0; i < n; i++)
        assert_int_equal(kube_watch_parser_feed(p, stream + i, 1, record, &s, NULL), 0);
    assert_string_equal(s.log, expect);
    kube_watch_parser_free(p);
}

static void test_truncated_and_pending(void **st)
{
    (void)st;
    struct kube_watch_parser *p = kube_watch_parser_new(0);
    struct seen s = { 0 };
    const char *part = EV_ADD "\n{\"type\":\"MODIF";
    assert_int_equal(kube_watch_parser_feed(p, part, strlen(part), record, &s, NULL), 0);
    assert_int_equal(s.n, 1);
    assert_int_equal(kube_watch_parser_pending(p), strlen("{\"type\":\"MODIF"));
    kube_watch_parser_free(p);
    p = kube_watch_parser_new(0);
    assert_int_equal(kube_watch_parser_feed(p, "\n  \r\n  ", 7, record, &s, NULL), 0);
    assert_int_equal(kube_watch_parser_pending(p), 0);
    kube_watch_parser_free(p);
}

static void expect_bad(const char *line, const char *why)
{
    struct kube_watch_parser *p = kube_watch_parser_new(0);
    struct seen s = { 0 };
    char *err = NULL;
    assert_int_equal(kube_watch_parser_feed(p, line, strlen(line), record, &s, &err), -1);
    assert_non_null(err);
    if (!strstr(err, why))
        fail_msg("error \"%s\" lacks \"%s\"", err, why);
    free(err);
    kube_watch_parser_free(p);
}

static void test_malformed(void **st)
{
    (void)st;
    expect_bad("{\"type\":\"ADDED\",\"object\":{}\n", "not JSON");
    expect_bad("[1,2]\n", "not a JSON object");
    expect_bad("{\"object\":{}}\n", "missing \"type\"");
    expect_bad("{\"type\":\"RENAMED\",\"object\":{}}\n", "unknown \"type\"");
    expect_bad("{\"type\":\"ADDED\",\"object\":\"x\"}\n", "\"object\" is not");
    expect_bad("{\"type\":\"ADDED\"}\n", "\"object\" is not");
    expect_bad("garbage\n", "not JSON");
    expect_bad("{\"type\":\"ADDED\",\"object\":{}} trailing\n", "not JSON");
}

static void test_overlong(void **st)
{
    (void)st;
    struct kube_watch_parser *p = kube_watch_parser_new(64);
    char *err = NULL;
    char big[100];
    memset(big, 'x', sizeof big);
    /* held across chunks */
    assert_int_equal(kube_watch_parser_feed(p, big, 50, record, NULL, &err), 0);
    assert_int_equal(kube_watch_parser_feed(p, big, 50, record, NULL, &err), -1);
    assert_non_null(strstr(err, "longer than 64"));
    free(err);
    kube_watch_parser_free(p);
    /* a complete line in one chunk */
    p = kube_watch_parser_new(64);
    err = NULL;
    big[99] = '\n';
    assert_int_equal(kube_watch_parser_feed(p, big, 100, record, NULL, &err), -1);
    free(err);
    kube_watch_parser_free(p);
}

static void test_stop_early(void **st)
{
    (void)st;
    struct kube_watch_parser *p = kube_watch_parser_new(0);
    struct seen s = { .stop_after = 2 };
    assert_int_equal(kube_watch_parser_feed(p, stream, strlen(stream), record, &s, NULL), 1);
    assert_string_equal(s.log, "ADDED:1;MODIFIED:2;");
    kube_watch_parser_free(p);
}

static void test_parse_line(void **st)
{
    (void)st;
    struct kube_watch_event ev = { 0 };
    char *err = NULL;
    assert_int_equal(kube_watch_parse_line("   ", 3, &ev, &err), 1);
    assert_int_equal(kube_watch_parse_line(EV_ERR, strlen(EV_ERR), &ev, &err), 0);
    assert_int_equal(ev.type, KUBE_EVENT_ERROR);
    struct kube_error e = KUBE_ERROR_INIT;
    kube_status_decode_json(ev.object, 0, &e);
    assert_int_equal(e.reason, KUBE_GONE);
    assert_int_equal(e.http_code, 410);
    kube_error_clear(&e);
    kube_watch_event_clear(&ev);
    assert_null(ev.object);
    assert_string_equal(kube_event_type_name(KUBE_EVENT_BOOKMARK), "BOOKMARK");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_whole_stream),
        cmocka_unit_test(test_split_everywhere),
        cmocka_unit_test(test_truncated_and_pending),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_overlong),
        cmocka_unit_test(test_stop_early),
        cmocka_unit_test(test_parse_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
