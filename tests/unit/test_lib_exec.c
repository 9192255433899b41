/* test_lib_exec.c - unit tests for the exec client's pure parts: the exec URL,
 * the channel-3 Status -> exit code rules and the upgrade reply parser
 * (accept key, subprotocol, malformed heads, refused replies). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kube/exec.h"
#include "kube/ws.h"

static void test_target(void **s)
{
    (void)s;
    struct kube_exec_opts o;
    kube_exec_opts_default(&o);
    o.namespace = "ns1";
    o.pod = "job-worker-0";
    o.container = "main";
    o.command = "echo \"a b\"; ls *.c && x=$HOME";
    char *t = kube_exec_target(&o);
    assert_non_null(t);
    assert_string_equal(t, "/api/v1/namespaces/ns1/pods/job-worker-0/exec?command=%2Fbin%2Fsh&command=-c&"
                           "command=echo%20%22a%20b%22%3B%20ls%20%2A.c%20%26%26%20x%3D%24HOME&container=main&"
                           "stdin=true&stdout=true&stderr=true");
    free(t);
    o.fd_in = -1;
    o.container = NULL;
    o.command = "";
    t = kube_exec_target(&o);
    assert_string_equal(t, "/api/v1/namespaces/ns1/pods/job-worker-0/exec?command=%2Fbin%2Fsh&command=-c&command=&"
                           "stdout=true&stderr=true");
    free(t);
    o.pod = NULL;
    assert_null(kube_exec_target(&o));
}

static int decode(const char *json, char **msg)
{
    *msg = NULL;
    return kube_exec_status_decode(json, strlen(json), msg);
}

static void test_status(void **s)
{
    (void)s;
    char *m;
    assert_int_equal(decode("{\"metadata\":{},\"status\":\"Success\"}", &m), 0);
    assert_null(m);
    const char *nz =
        "{\"metadata\":{},\"status\":\"Failure\",\"message\":\"command terminated with non-zero exit code: x\","
        "\"reason\":\"NonZeroExitCode\",\"details\":{\"causes\":[{\"reason\":\"ExitCode\",\"message\":\"3\"}]}}";
    assert_int_equal(decode(nz, &m), 3);
    assert_null(m);
    assert_int_equal(decode("{\"status\":\"Failure\",\"reason\":\"NonZeroExitCode\",\"details\":{\"causes\":["
                            "{\"reason\":\"Other\",\"message\":\"9\"},{\"reason\":\"ExitCode\",\"message\":\"137\"}]}}",
                            &m),
                     137);
    assert_int_equal(decode("{\"status\":\"Failure\",\"reason\":\"NonZeroExitCode\",\"details\":{\"causes\":"
                            "[{\"reason\":\"ExitCode\",\"message\":\"255\"}]}}",
                            &m),
                     255);
    assert_null(m);
    /* bad causes -> 255 with a reason */
    const char *bad[] = {
        "{\"status\":\"Failure\",\"reason\":\"NonZeroExitCode\"}",
        "{\"status\":\"Failure\",\"reason\":\"NonZeroExitCode\",\"details\":{\"causes\":[{\"reason\":\"ExitCode\","
        "\"message\":\"256\"}]}}",
        "{\"status\":\"Failure\",\"reason\":\"NonZeroExitCode\",\"details\":{\"causes\":[{\"reason\":\"ExitCode\","
        "\"message\":\"-1\"}]}}",
        "{\"status\":\"Failure\",\"reason\":\"NonZeroExitCode\",\"details\":{\"causes\":[{\"reason\":\"ExitCode\","
        "\"message\":\"3x\"}]}}",
        "{\"status\":\"Failure\",\"reason\":\"NonZeroExitCode\",\"details\":{\"causes\":[{\"reason\":\"ExitCode\","
        "\"message\":3}]}}",
        "{\"status\":\"Failure\",\"reason\":\"NonZeroExitCode\",\"details\":{\"causes\":[{\"reason\":\"ExitCode\","
        "\"message\":\"0\"}]}}",
        "{\"status\":\"Weird\"}",
        "{}",
        "[1,2]",
        "not json",
        "",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(decode(bad[i], &m), 255);
        assert_non_null(m);
        assert_null(strchr(m, '\n'));
        free(m);
    }
    assert_int_equal(decode("{\"status\":\"Failure\",\"message\":\"Internal error occurred: error executing command\","
                            "\"reason\":\"InternalError\",\"code\":500}",
                            &m),
                     255);
    assert_string_equal(m, "Internal error occurred: error executing command (InternalError)");
    free(m);
    assert_int_equal(decode("{\"status\":\"Failure\"}", &m), 255);
    assert_string_equal(m, "exec failed without a message");
    free(m);
}

static const char *KEY = "dGhlIHNhbXBsZSBub25jZQ==";
static const char *ACC = "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=";
static const char *OFFER = "v5.channel.k8s.io, v4.channel.k8s.io";

static int parse(const char *head, struct kube_exec_reply *r, char **m)
{
    *m = NULL;
    (void)KEY;
    return kube_exec_parse_reply(head, strlen(head), ACC, OFFER, r, m);
}

static void test_reply_ok(void **s)
{
    (void)s;
    struct kube_exec_reply r;
    char *m;
    const char *h = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: WebSocket\r\nConnection: keep-alive, Upgrade\r\n"
                    "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\nSec-WebSocket-Protocol:v4.channel.k8s.io \r\n\r\n"
                    "\x82\x01\x01";
    assert_int_equal(parse(h, &r, &m), 1);
    assert_int_equal(r.code, 101);
    assert_string_equal(r.protocol, "v4.channel.k8s.io");
    assert_int_equal(strlen(h) - r.head_len, 3);
    kube_exec_reply_free(&r);
    /* incomplete head: need more */
    assert_int_equal(kube_exec_parse_reply(h, 40, ACC, OFFER, &r, &m), 0);
    /* a refusal with a body */
    const char *f =
        "HTTP/1.1 403 Forbidden\r\nContent-Type: application/json\r\nContent-Length: 12\r\nRetry-After: 3\r\n\r\n{\"a\":1}";
    assert_int_equal(parse(f, &r, &m), 1);
    assert_int_equal(r.code, 403);
    assert_int_equal(r.content_length, 12);
    assert_int_equal(r.retry_after_s, 3);
    assert_null(r.protocol);
    kube_exec_reply_free(&r);
    const char *c = "HTTP/1.0 500\r\nTransfer-Encoding: gzip, chunked\r\n\r\n";
    assert_int_equal(parse(c, &r, &m), 1);
    assert_int_equal(r.code, 500);
    assert_int_equal(r.chunked, 1);
    kube_exec_reply_free(&r);
}

/* A huge Retry-After is clamped to a day as on the HTTP path, never multiplied into an overflow;
 * a non-numeric one is ignored. */
static void test_reply_retry_after_bounded(void **s)
{
    (void)s;
    struct kube_exec_reply r;
    char *m;
    assert_int_equal(parse("HTTP/1.1 429 Too Many\r\nRetry-After: 999999999999999999\r\n\r\n", &r, &m), 1);
    assert_int_equal(r.retry_after_s, 86400);
    kube_exec_reply_free(&r);
    assert_int_equal(parse("HTTP/1.1 503 Busy\r\nRetry-After: 99999999999999999999999999\r\n\r\n", &r, &m), 1);
    assert_int_equal(r.retry_after_s, 86400);
    kube_exec_reply_free(&r);
    assert_int_equal(parse("HTTP/1.1 503 Busy\r\nRetry-After: 86400\r\n\r\n", &r, &m), 1);
    assert_int_equal(r.retry_after_s, 86400);
    kube_exec_reply_free(&r);
    assert_int_equal(parse("HTTP/1.1 503 Busy\r\nRetry-After: 0\r\n\r\n", &r, &m), 1);
    assert_int_equal(r.retry_after_s, 0);
    kube_exec_reply_free(&r);
    assert_int_equal(parse("HTTP/1.1 503 Busy\r\nRetry-After: Wed, 21 Oct 2015 07:28:00 GMT\r\n\r\n", &r, &m), 1);
    assert_int_equal(r.retry_after_s, -1);
    kube_exec_reply_free(&r);
}

static void expect_bad(const char *head, const char *needle)
{
    struct kube_exec_reply r;
    char *m = NULL;
    int rc = parse(head, &r, &m);
    if (rc != -1)
        fail_msg("accepted: %s", head);
    assert_non_null(m);
    if (!strstr(m, needle))
        fail_msg("message '%s' lacks '%s'", m, needle);
    assert_null(strchr(m, '\n'));
    free(m);
}

static void test_reply_bad(void **s)
{
    (void)s;
    expect_bad("HTTP/1.1 101 OK\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n"
               "Sec-WebSocket-Protocol: v5.channel.k8s.io\r\n\r\n",
               "Upgrade: websocket");
    expect_bad("HTTP/1.1 101 OK\r\nUpgrade: websocket\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n"
               "Sec-WebSocket-Protocol: v5.channel.k8s.io\r\n\r\n",
               "Connection");
    expect_bad("HTTP/1.1 101 OK\r\nUpgrade: websocket\r\nConnection: upgrade\r\nSec-WebSocket-Accept: "
               "AAAAMBiTxaQ9kYGzzhZRbK+xOo=\r\n"
               "Sec-WebSocket-Protocol: v5.channel.k8s.io\r\n\r\n",
               "does not match");
    expect_bad("HTTP/1.1 101 OK\r\nUpgrade: websocket\r\nConnection: upgrade\r\n"
               "Sec-WebSocket-Protocol: v5.channel.k8s.io\r\n\r\n",
               "missing");
    expect_bad("HTTP/1.1 101 OK\r\nUpgrade: websocket\r\nConnection: upgrade\r\nSec-WebSocket-Accept: "
               "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n",
               "no subprotocol");
    expect_bad("HTTP/1.1 101 OK\r\nUpgrade: websocket\r\nConnection: upgrade\r\nSec-WebSocket-Accept: "
               "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n"
               "Sec-WebSocket-Protocol: channel.k8s.io\r\n\r\n",
               "not offered");
    expect_bad("HTTP/1.1 101 OK\r\nUpgrade: websocket\r\nConnection: upgrade\r\nSec-WebSocket-Accept: "
               "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n"
               "Sec-WebSocket-Protocol: v5.channel.k8s.io, v4.channel.k8s.io\r\n\r\n",
               "not offered");
    expect_bad("HTTP/2 200\r\n\r\n", "status line");
    expect_bad("HTTP/1.1 2x0 OK\r\n\r\n", "status line");
    expect_bad("HTTP/1.1 200OK\r\n\r\n", "status line");
    expect_bad("garbage\r\n\r\n", "status line");
    expect_bad("HTTP/1.1 200 OK\r\nno colon here\r\n\r\n", "malformed header");
    /* an endless head is bounded */
    size_t n = 70000;
    char *big = malloc(n + 1);
    assert_non_null(big);
    memset(big, 'a', n);
    memcpy(big, "HTTP/1.1 200 OK\r\nX: ", 20);
    big[n] = 0;
    struct kube_exec_reply r;
    char *m = NULL;
    assert_int_equal(kube_exec_parse_reply(big, n, ACC, OFFER, &r, &m), -1);
    assert_non_null(strstr(m, "header over"));
    free(m);
    free(big);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_target),
        cmocka_unit_test(test_status),
        cmocka_unit_test(test_reply_ok),
        cmocka_unit_test(test_reply_bad),
        cmocka_unit_test(test_reply_retry_after_bounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
