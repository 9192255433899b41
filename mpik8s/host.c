/* host.c - the one host -> pod rule (include/mpik8s/contract.h): which pod a hostfile line, or
 * the HOST mpirun hands mpi-rsh, names; the agent, mpi-rsh and the stream holder all call it. */
#include "mpik8s/contract.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "kube/str.h"

#define QUOTE_MAX 128 /* bytes of the host quoted in a message */

static int is_pod_char(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'; }

/* Whether s[0..n) is a DNS label of the domain: 1-63 letters (either case), digits and '-', not
 * starting or ending with '-'. */
static int is_domain_label(const char *s, size_t n)
{
    if (n == 0 || n > MPIK8S_DNS_LABEL_MAX || s[0] == '-' || s[n - 1] == '-')
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!is_pod_char((char)tolower((unsigned char)s[i])))
            return 0;
    return 1;
}

/* Whether host is an IPv4 or IPv6 literal, the latter also in brackets ("[fd00::2]"). */
static int is_ip_literal(const char *host)
{
    struct in6_addr a;
    size_t n = strlen(host);
    if (inet_pton(AF_INET, host, &a) == 1 || inet_pton(AF_INET6, host, &a) == 1)
        return 1;
    if (n < 3 || host[0] != '[' || host[n - 1] != ']')
        return 0;
    char *inner = strndup(host + 1, n - 2);
    int v6 = inner && inet_pton(AF_INET6, inner, &a) == 1;
    free(inner);
    return v6;
}

/* Checks the pod label host[0..n); 0 ok, -1 with *errmsg. */
static int check_pod_label(const char *host, size_t n, char **errmsg)
{
    char q[QUOTE_MAX];
    if (n == 0 || n > MPIK8S_DNS_LABEL_MAX)
        return kube_set_err(errmsg, "host \"%s\": expected a DNS name whose first label (the pod name) is 1-63 characters",
                            kube_excerpt(host, q, sizeof q));
    int all_digits = 1;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)host[i];
        if (!is_pod_char((char)c)) {
            char got[16];
            snprintf(got, sizeof got, isgraph(c) ? "'%c'" : "byte 0x%02x", c);
            return kube_set_err(errmsg, "host \"%s\": pod name must be lower-case letters, digits and '-' (got %s)",
                                kube_excerpt(host, q, sizeof q), got);
        }
        all_digits &= isdigit(c) != 0;
    }
    if (host[0] == '-' || host[n - 1] == '-')
        return kube_set_err(errmsg,
                            "host \"%s\": \"%.*s\" is not a pod name (expected it to start and end with a letter or digit)",
                            kube_excerpt(host, q, sizeof q), (int)n, host);
    if (all_digits)
        return kube_set_err(errmsg,
                            "host \"%s\": \"%.*s\" is not a pod name (all digits, which a resolver reads as an IP address; "
                            "IP addresses cannot be mapped to pods)",
                            kube_excerpt(host, q, sizeof q), (int)n, host);
    return 0;
}

/* Checks the labels after the first (dom: the domain of an FQDN, maybe ending in '.'); 0 ok, -1
 * with *errmsg. */
static int check_domain(const char *host, const char *dom, char **errmsg)
{
    char q[QUOTE_MAX];
    size_t total = strlen(host);
    if (total > MPIK8S_DNS_NAME_MAX + (host[total - 1] == '.'))
        return kube_set_err(errmsg, "host \"%s\": longer than %d characters", kube_excerpt(host, q, sizeof q),
                            MPIK8S_DNS_NAME_MAX);
    while (*dom) {
        size_t n = strcspn(dom, ".");
        if (!is_domain_label(dom, n))
            return kube_set_err(
                errmsg, "host \"%s\": expected a DNS name (labels of 1-63 letters, digits and '-', separated by '.')",
                kube_excerpt(host, q, sizeof q));
        dom += n + (dom[n] == '.');
    }
    return 0;
}

char *mpik8s_host_to_pod(const char *host, char **errmsg)
{
    char q[QUOTE_MAX];
    if (!host)
        host = "";
    if (*host && is_ip_literal(host)) {
        kube_set_err(
            errmsg,
            "host \"%s\": an IP address (IP addresses cannot be mapped to pods: expected a pod name or its DNS name)",
            kube_excerpt(host, q, sizeof q));
        return NULL;
    }
    size_t n = strcspn(host, ".");
    if (check_pod_label(host, n, errmsg) < 0 || (host[n] == '.' && check_domain(host, host + n + 1, errmsg) < 0))
        return NULL;
    char *pod = strndup(host, n);
    if (!pod)
        kube_set_err(errmsg, "out of memory");
    return pod;
}
