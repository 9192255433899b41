/* proxy.c - which proxy a connection to the API server goes through, decided as client-go
 * decides it: the kubeconfig's proxy-url when set; otherwise the environment as Go's
 * httpproxy reads it (HTTPS_PROXY/https_proxy for https servers, HTTP_PROXY/http_proxy for
 * http, NO_PROXY/no_proxy with names, .domains, *.domains, *, IP addresses, CIDRs and
 * host:port entries; localhost and loopback addresses never go through an environment proxy). */
#include <arpa/inet.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "kube/config.h"
#include "kube/util.h"
#include "url_int.h"

static const char *env2(const char *upper, const char *lower)
{
    const char *v = getenv(upper);
    if (!v || !*v)
        v = getenv(lower);
    return v && *v ? v : NULL;
}

/* cfg->server's host, lowercased and without IPv6 brackets, and its port as text (the URL
 * split as the exec connection splits it, url.c). 0 ok. */
static int server_host_port(const char *server, char *host, size_t hn, char *port, size_t pn)
{
    char *scheme, *h, *prefix;
    long p;
    if (Kube_url_split_server(server, &scheme, &h, &p, &prefix) < 0)
        return -1;
    const char *b = h[0] == '[' ? h + 1 : h;
    size_t l = strlen(b) - (h[0] == '[');
    int ok = l > 0 && l < hn;
    for (size_t i = 0; ok && i < l; i++)
        host[i] = (char)tolower((unsigned char)b[i]);
    if (ok) {
        host[l] = '\0';
        snprintf(port, pn, "%ld", p);
    }
    free(scheme);
    free(h);
    free(prefix);
    return ok ? 0 : -1;
}

/* Parses an IPv4 or IPv6 address into a 16-byte form (v4-mapped); 1 ok. */
static int parse_ip(const char *s, unsigned char ip[16])
{
    struct in_addr a4;
    if (inet_pton(AF_INET, s, &a4) == 1) {
        memset(ip, 0, 10);
        ip[10] = ip[11] = 0xff;
        memcpy(ip + 12, &a4, 4);
        return 1;
    }
    return inet_pton(AF_INET6, s, ip) == 1;
}

static int is_loopback(const unsigned char ip[16])
{
    static const unsigned char v6lo[16] = { [15] = 1 };
    int v4 = !memcmp(ip, "\0\0\0\0\0\0\0\0\0\0\xff\xff", 12);
    return v4 ? ip[12] == 127 : !memcmp(ip, v6lo, 16);
}

/* Does CIDR entry (addr/bits) contain ip? */
static int cidr_match(const char *entry, const unsigned char ip[16])
{
    char addr[64];
    const char *slash = strchr(entry, '/');
    size_t l = (size_t)(slash - entry);
    if (l >= sizeof addr)
        return 0;
    memcpy(addr, entry, l);
    addr[l] = '\0';
    unsigned char net[16];
    long long bits;
    if (kube_parse_int(slash + 1, 0, 128, &bits) < 0 || !parse_ip(addr, net))
        return 0;
    int v4 = strchr(addr, ':') == NULL;
    if (v4)
        bits += 96;
    if (bits < 0 || bits > 128)
        return 0;
    for (long long b = 0; b < bits; b++) {
        unsigned char m = (unsigned char)(0x80 >> (b % 8));
        if ((net[b / 8] & m) != (ip[b / 8] & m))
            return 0;
    }
    return 1;
}

/* Does one NO_PROXY entry (trimmed, lowercased) match host:port? */
static int entry_matches(char *e, const char *host, const char *port, const unsigned char *ip)
{
    if (!strcmp(e, "*"))
        return 1;
    if (strchr(e, '/'))
        return ip && cidr_match(e, ip);
    unsigned char eip[16];
    if (parse_ip(e, eip))
        return ip && !memcmp(eip, ip, 16);
    const char *eport = NULL;
    char *colon = strrchr(e, ':');
    if (colon && !strchr(colon, ']')) { /* host:port */
        *colon = '\0';
        eport = colon + 1;
        if (parse_ip(e, eip))
            return ip && !memcmp(eip, ip, 16) && !strcmp(eport, port);
    }
    if (e[0] == '*' && e[1] == '.')
        e++;
    if (!*e)
        return 0;
    int match_host = e[0] != '.';
    size_t hl = strlen(host), el = strlen(e);
    int suffix = e[0] == '.' ? hl > el && !strcmp(host + hl - el, e)
                             : (hl > el && host[hl - el - 1] == '.' && !strcmp(host + hl - el, e));
    int exact = match_host && !strcmp(host, e);
    return (suffix || exact) && (!eport || !strcmp(eport, port));
}

/* Go's useProxy: 0 when host:port must be reached directly. */
static int use_proxy(const char *host, const char *port)
{
    unsigned char ip[16];
    int have_ip = parse_ip(host, ip);
    if (!strcmp(host, "localhost") || (have_ip && is_loopback(ip)))
        return 0;
    const char *np = env2("NO_PROXY", "no_proxy");
    if (!np)
        return 1;
    char *list = strdup(np), *save = NULL;
    int use = 1;
    for (char *t = list ? strtok_r(list, ",", &save) : NULL; t && use; t = strtok_r(NULL, ",", &save)) {
        while (isspace((unsigned char)*t))
            t++;
        size_t l = strlen(t);
        while (l && isspace((unsigned char)t[l - 1]))
            t[--l] = '\0';
        for (char *q = t; *q; q++)
            *q = (char)tolower((unsigned char)*q);
        if (*t && entry_matches(t, host, port, have_ip ? ip : NULL))
            use = 0;
    }
    free(list);
    return use;
}

char *kube_config_proxy(const struct kube_config *cfg)
{
    if (cfg->proxy_url)
        return strdup(cfg->proxy_url);
    int https = !strncmp(cfg->server, "https://", 8);
    const char *p = https ? env2("HTTPS_PROXY", "https_proxy") : env2("HTTP_PROXY", "http_proxy");
    char host[256], port[16];
    if (!p || server_host_port(cfg->server, host, sizeof host, port, sizeof port) || !use_proxy(host, port))
        return NULL;
    /* Go: a proxy without a scheme is http:// */
    return strstr(p, "://") ? strdup(p) : kube_strdup_printf("http://%s", p);
}

char *kube_proxy_redact(const char *url)
{
    const char *p = strstr(url, "://"), *at = NULL;
    if (p) {
        const char *end = p + 3 + strcspn(p + 3, "/?#");
        for (const char *q = p + 3; q < end; q++)
            if (*q == '@')
                at = q;
    }
    return at ? kube_strdup_printf("%.*s***@%s", (int)(p + 3 - url), url, at + 1) : strdup(url);
}
