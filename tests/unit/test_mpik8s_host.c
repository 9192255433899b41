/* test_mpik8s_host.c - the one host -> pod rule (mpik8s_host_to_pod, mpik8s/host.c) that the agent's
 * hostfile, mpi-rsh and the stream holder share, as a table: each host, the pod it names or the
 * words its error must hold (one line, naming the host). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "mpik8s/contract.h"

struct host_case {
    const char *host;
    const char *pod;  /* the pod it names; NULL: refused */
    const char *want; /* refused: a part of the message */
};

#define L63 "abcdefghij-abcdefghij-abcdefghij-abcdefghij-abcdefghij-abcdefgh" /* 63 characters */

static const struct host_case cases[] = {
    /* short names and FQDNs, with and without the cluster domain, with a trailing dot */
    { "w-0", "w-0", NULL },
    { "job-worker-0", "job-worker-0", NULL },
    { "job-worker-0.job-worker.team-a.svc", "job-worker-0", NULL },
    { "job-worker-0.job-worker.team-a.svc.cluster.local", "job-worker-0", NULL },
    { "job-worker-0.job-worker.team-a.svc.cluster.local.", "job-worker-0", NULL },
    { "w-0.", "w-0", NULL },
    { "0w", "0w", NULL }, /* a digit may start a label */
    { "123a", "123a", NULL },
    { "w-0.J-Worker.ns.svc", "w-0", NULL }, /* the domain's case does not matter (DNS) */
    { "w-0.123.svc", "w-0", NULL },
    /* upper case: a pod name is lower-case; refused, not lower-cased */
    { "Worker-0", NULL, "pod name must be lower-case letters, digits and '-' (got 'W')" },
    { "Job-Worker-1.job-worker.ns.svc.cluster.local", NULL, "lower-case" },
    { "w_0", NULL, "(got '_')" },
    { "w\xc3\xa9", NULL, "(got byte 0xc3)" },
    { "w 0", NULL, "(got byte 0x20)" },
    /* digits only: an IPv4 address to a resolver */
    { "123", NULL, "\"123\" is not a pod name (all digits" },
    { "123.job-worker.ns.svc", NULL, "IP addresses cannot be mapped to pods" },
    /* IP literals */
    { "10.0.0.1", NULL, "host \"10.0.0.1\": an IP address" },
    { "fd00::2", NULL, "host \"fd00::2\": an IP address" },
    { "::1", NULL, "an IP address" },
    { "[fd00::2]", NULL, "an IP address" },
    { "[x]", NULL, "(got '[')" },
    /* hyphens at either end */
    { "-a", NULL, "\"-a\" is not a pod name (expected it to start and end with a letter or digit)" },
    { "a-", NULL, "is not a pod name" },
    { "a-.svc", NULL, "is not a pod name" },
    /* label lengths: 63 is the most */
    { L63, L63, NULL },
    { L63 ".job-worker.ns.svc", L63, NULL },
    { L63 "h", NULL, "first label (the pod name) is 1-63 characters" },
    { L63 "h.job-worker.ns.svc", NULL, "1-63 characters" },
    { "w-0." L63, "w-0", NULL },
    { "w-0." L63 "h", NULL, "expected a DNS name (labels of 1-63" },
    /* empty, or empty labels */
    { "", NULL, "host \"\": expected a DNS name whose first label" },
    { NULL, NULL, "host \"\"" },
    { ".svc", NULL, "first label" },
    { ".", NULL, "first label" },
    { "w-0..svc", NULL, "expected a DNS name" },
    { "w-0.svc..", NULL, "expected a DNS name" },
    { "w-0.a_b.svc", NULL, "expected a DNS name" },
    { "w-0.-a.svc", NULL, "expected a DNS name" },
    /* the whole name: 253 characters, plus a trailing dot */
    { "w-0." L63 "." L63 "." L63 "."
      "abcdefghij-abcdefghij-abcdefghij-abcdefghij-abcdefghij-ab",
      "w-0", NULL },
    { "w-0." L63 "." L63 "." L63 "."
      "abcdefghij-abcdefghij-abcdefghij-abcdefghij-abcdefghij-ab.",
      "w-0", NULL },
    { "w-0." L63 "." L63 "." L63 "."
      "abcdefghij-abcdefghij-abcdefghij-abcdefghij-abcdefghij-abc",
      NULL, "longer than 253 characters" },
};

static void test_table(void **st)
{
    (void)st;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const struct host_case *c = &cases[i];
        char *err = NULL, *pod = mpik8s_host_to_pod(c->host, &err);
        if (c->pod && (!pod || strcmp(pod, c->pod) != 0))
            fail_msg("host \"%s\": want pod \"%s\", got %s", c->host, c->pod, pod ? pod : err ? err : "(none)");
        if (!c->pod && (pod || !err || !strstr(err, c->want)))
            fail_msg("host \"%s\": want an error with \"%s\", got %s", c->host ? c->host : "(NULL)", c->want,
                     pod   ? pod
                     : err ? err
                           : "(none)");
        if (err && (strchr(err, '\n') || strncmp(err, "host \"", 6) != 0))
            fail_msg("host \"%s\": the message is not one line naming the host: %s", c->host, err);
        if (c->pod)
            assert_null(err);
        free(pod);
        free(err);
    }
}

/* A host longer than a message quotes is cut short: the message stays one bounded line. */
static void test_long_host(void **st)
{
    (void)st;
    char big[600];
    memset(big, 'a', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    char *err = NULL;
    assert_null(mpik8s_host_to_pod(big, &err));
    assert_non_null(err);
    assert_non_null(strstr(err, "aaa...\""));
    assert_true(strlen(err) < 300);
    free(err);
    assert_null(mpik8s_host_to_pod("Worker-0", NULL)); /* no message wanted */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_long_host),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
