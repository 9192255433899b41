/* proxy_tunnel.c - the exec connection through an http:// proxy: a CONNECT tunnel to the API
 * server (the proxy's userinfo as Proxy-Authorization: Basic), its reply read up to the blank
 * line so that nothing after it is consumed. Which proxy: proxy.c. */
#include "proxy_tunnel.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "kube/base64.h"
#include "kube/str.h"
#include "tcp_conn.h"
#include "url_int.h"

/* Reads the proxy's reply to CONNECT up to the blank line: 0 on a 2xx, -1 with *errmsg. */
static int proxy_reply(int fd, const struct kube_config *cfg, const char *proxy, int64_t deadline, char **errmsg,
                       int *retryable)
{
    char buf[4096];
    size_t len = 0;
    while (len < sizeof buf - 1) { /* byte by byte: nothing after the reply head may be consumed */
        ssize_t n = recv(fd, buf + len, 1, 0);
        if (n == 1) {
            buf[++len] = '\0';
            if (len >= 4 && !memcmp(buf + len - 4, "\r\n\r\n", 4))
                break;
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
            int w = Kube_wait_fd(fd, POLLIN, deadline);
            if (w > 0)
                continue;
            kube_set_err(errmsg, "proxy %s: no reply to CONNECT for %s (%s)%s", proxy, cfg->server, cfg->origin,
                         w == 0 ? ": timed out" : "");
            *retryable = 1;
            return -1;
        }
        kube_set_err(errmsg, "proxy %s closed the connection before answering CONNECT for %s (%s)", proxy, cfg->server,
                     cfg->origin);
        *retryable = 1;
        return -1;
    }
    int code = 0;
    char *eol = strstr(buf, "\r\n");
    if (eol)
        *eol = '\0';
    if (sscanf(buf, "HTTP/1.%*d %d", &code) != 1 || code < 200 || code > 299) {
        kube_set_err(errmsg, "proxy %s refused CONNECT to %s (%s): %.200s", proxy, cfg->server, cfg->origin,
                     len ? buf : "no reply");
        *retryable = code == 502 || code == 503 || code == 504;
        return -1;
    }
    return 0;
}

/* Splits "scheme://user:pass@host..." into the URL without its credentials (for connecting and
 * for messages) and "Proxy-Authorization: Basic ...\r\n" (percent-decoded, as Go decodes the
 * URL's userinfo), or "" without credentials. 0, or -1 on allocation failure. */
static int proxy_userinfo(const char *proxy, char **bare, char **auth)
{
    const char *p = strstr(proxy, "://"), *at = NULL;
    *bare = *auth = NULL;
    if (p) {
        p += 3;
        const char *end = p + strcspn(p, "/?#");
        for (const char *q = p; q < end; q++)
            if (*q == '@')
                at = q;
    }
    if (!at) {
        *bare = strdup(proxy);
        *auth = strdup("");
        return *bare && *auth ? 0 : -1;
    }
    size_t n = (size_t)(at - p), o = 0;
    char *dec = malloc(n + 1);
    for (size_t i = 0; dec && i < n; i++) {
        unsigned int v;
        if (p[i] == '%' && i + 2 < n + 1 && sscanf(p + i + 1, "%2x", &v) == 1) {
            dec[o++] = (char)v;
            i += 2;
        } else {
            dec[o++] = p[i];
        }
    }
    char *b64 = dec ? kube_base64_encode(dec, o) : NULL;
    *auth = b64 ? kube_strdup_printf("Proxy-Authorization: Basic %s\r\n", b64) : NULL;
    *bare = kube_strdup_printf("%.*s%s", (int)(p - proxy), proxy, at + 1);
    if (dec)
        explicit_bzero(dec, n + 1);
    if (b64)
        explicit_bzero(b64, strlen(b64));
    free(dec);
    free(b64);
    return *bare && *auth ? 0 : -1;
}

int Kube_proxy_tunnel(const struct kube_config *cfg, const char *proxy_url, const char *host, long port, int64_t deadline,
                      char **errmsg, int *retryable)
{
    char *pscheme = NULL, *phost = NULL, *pprefix = NULL, *proxy = NULL, *auth = NULL;
    long pport;
    if (proxy_userinfo(proxy_url, &proxy, &auth) < 0) {
        free(proxy);
        free(auth);
        return kube_set_err(errmsg, "out of memory");
    }
    if (Kube_url_split_server(proxy, &pscheme, &phost, &pport, &pprefix) < 0 || strcmp(pscheme, "http")) {
        kube_set_err(errmsg, "proxy %s for %s (%s): the exec connection supports http:// proxies only", proxy, cfg->server,
                     cfg->origin);
        free(pscheme);
        free(phost);
        free(pprefix);
        free(proxy);
        explicit_bzero(auth, strlen(auth));
        free(auth);
        return -1;
    }
    int fd = Kube_tcp_connect(cfg, "proxy", proxy, phost, pport, deadline, errmsg, retryable);
    char *req = fd >= 0
                    ? kube_strdup_printf("CONNECT %s:%ld HTTP/1.1\r\nHost: %s:%ld\r\n%s\r\n", host, port, host, port, auth)
                    : NULL;
    size_t off = 0, len = req ? strlen(req) : 0;
    while (req && off < len) {
        ssize_t n = send(fd, req + off, len - off, MSG_NOSIGNAL);
        if (n > 0) {
            off += (size_t)n;
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EINTR) && Kube_wait_fd(fd, POLLOUT, deadline) > 0)
            continue;
        break;
    }
    int ok = req && off == len;
    if (fd >= 0 && !ok)
        kube_set_err(errmsg, "proxy %s: cannot send CONNECT for %s (%s)", proxy, cfg->server, cfg->origin);
    if (ok)
        ok = proxy_reply(fd, cfg, proxy, deadline, errmsg, retryable) == 0;
    if (req)
        explicit_bzero(req, strlen(req));
    free(req);
    explicit_bzero(auth, strlen(auth));
    free(auth);
    free(proxy);
    free(pscheme);
    free(phost);
    free(pprefix);
    if (!ok && fd >= 0) {
        close(fd);
        fd = -1;
    }
    return fd;
}
