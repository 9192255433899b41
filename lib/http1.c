/* http1.c - one HTTP/1.1 request/response over a kube_conn (tls_conn.c: a non-blocking
 * socket, plain or TLS): the request head (Host, User-Agent, Accept, bearer token,
 * Content-Type/-Length), writing it and the body, then reading the reply through the
 * parser (http1_parse.c) into the caller's body callback. Every wait is a poll() bounded
 * by the call's deadline that also wakes on the cancel tokens' eventfds. */
#include "http1.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "tls_conn.h"
#include "kube/util.h"

#define RECV_BUF (16 * 1024)

/* Waits until k is ready for what it last blocked on. 1 ready, 0 deadline passed,
 * -1 poll failed, -2 a cancel token triggered. */
static int wait_conn(struct kube_conn *k, const struct http1_call *x)
{
    for (;;) {
        if (kube_cancel_requested(x->c1) || kube_cancel_requested(x->c2))
            return -2;
        int64_t left = x->deadline ? x->deadline - kube_now_ms() : 1000;
        if (left <= 0)
            return 0;
        struct pollfd pf[3] = {{.fd = kube_conn_fd(k), .events = kube_conn_events(k)}};
        nfds_t n = 1;
        if (x->c1)
            pf[n++] = (struct pollfd){.fd = kube_cancel_fd(x->c1), .events = POLLIN};
        if (x->c2)
            pf[n++] = (struct pollfd){.fd = kube_cancel_fd(x->c2), .events = POLLIN};
        int r = poll(pf, n, left > 1000 ? 1000 : (int)left);
        if (r < 0 && errno != EINTR)
            return -1;
        if (r > 0 && pf[0].revents)
            return 1;
    }
}

/* Maps a failed wait to an outcome and message. */
static int wait_failed(int w, const char *doing, char **errmsg)
{
    if (w == -2)
        return HTTP1_CANCELLED;
    if (w == 0) {
        kube_set_err(errmsg, "%s", doing);
        return HTTP1_TIMEOUT;
    }
    kube_set_err(errmsg, "poll: %s", strerror(errno));
    return HTTP1_BROKEN;
}

static int send_all(struct kube_conn *k, struct http1_call *x, const char *p, size_t len, char **errmsg)
{
    while (len > 0) {
        ssize_t n = kube_conn_send(k, p, len);
        if (n < 0) {
            kube_set_err(errmsg, "%s", *kube_conn_error(k) ? kube_conn_error(k) : "send failed");
            return HTTP1_BROKEN;
        }
        if (n == 0) {
            int w = wait_conn(k, x);
            if (w <= 0)
                return wait_failed(w, "sending the request", errmsg);
            continue;
        }
        p += n;
        len -= (size_t)n;
    }
    return HTTP1_OK;
}

/* Reads until the reply is complete. */
static int recv_reply(struct kube_conn *k, struct http1_call *x, char *buf, char **errmsg)
{
    for (;;) {
        if (kube_cancel_requested(x->c1) || kube_cancel_requested(x->c2))
            return HTTP1_CANCELLED;
        if (x->deadline && kube_now_ms() >= x->deadline) /* also when data never stops coming */
            return wait_failed(0, x->got_bytes ? "reading the reply" : "waiting for the reply", errmsg);
        ssize_t n = kube_conn_recv(k, buf, RECV_BUF);
        if (n > 0) {
            size_t used = 0;
            x->got_bytes = 1;
            int r = http1_parser_feed(&x->p, buf, (size_t)n, &used, x->on_body, x->ud, errmsg);
            if (r == 1 && used < (size_t)n)
                x->p.close = 1; /* bytes after the reply: nothing asked for them */
            if (r == 1)
                return HTTP1_OK;
            if (r == -1)
                return HTTP1_MALFORMED;
            if (r == -2)
                return HTTP1_STOPPED;
            continue;
        }
        if (n == 0)
            return http1_parser_eof(&x->p, errmsg) == 1 ? HTTP1_OK : HTTP1_BROKEN;
        if (n == -1) {
            kube_set_err(errmsg, "%s (%s)", x->got_bytes ? "cut inside the reply" : "no reply",
                         *kube_conn_error(k) ? kube_conn_error(k) : "recv failed");
            return HTTP1_BROKEN;
        }
        int w = wait_conn(k, x);
        if (w <= 0)
            return wait_failed(w, x->got_bytes ? "reading the reply" : "waiting for the reply", errmsg);
    }
}

int http1_exchange(struct kube_conn *k, struct http1_call *x, char **errmsg)
{
    http1_parser_init(&x->p, x->head_only);
    x->got_bytes = x->sent = 0;
    int o = send_all(k, x, x->head, x->head_len, errmsg);
    if (o == HTTP1_OK && x->body_len)
        o = send_all(k, x, x->body, x->body_len, errmsg);
    if (o != HTTP1_OK)
        return o;
    x->sent = 1;
    char *buf = malloc(RECV_BUF);
    if (!buf) {
        kube_set_err(errmsg, "out of memory");
        return HTTP1_BROKEN;
    }
    o = recv_reply(k, x, buf, errmsg);
    free(buf);
    return o;
}

/* 1 when s has no byte that would break a header line (CR, LF, other controls). */
static int header_safe(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            return 0;
    return 1;
}

/* "Authorization: Bearer T\r\n", "" without a token, NULL with *errmsg. */
static char *auth_line(const struct kube_config *cfg, char **errmsg)
{
    char *terr = NULL, *tok = kube_config_token(cfg, &terr), *line = NULL;
    if (!tok && terr) {
        kube_set_err(errmsg, "%s: %s", cfg->origin ? cfg->origin : "config", terr);
        free(terr);
        return NULL;
    }
    if (tok && !header_safe(tok))
        kube_set_err(errmsg, "%s: the bearer token contains a control character (line break?)",
                     cfg->origin ? cfg->origin : "config");
    else
        line = tok ? kube_strdup_printf("Authorization: Bearer %s\r\n", tok) : strdup("");
    if (tok) {
        explicit_bzero(tok, strlen(tok));
        free(tok);
    }
    if (!line && errmsg && !*errmsg)
        kube_set_err(errmsg, "out of memory");
    return line;
}

char *http1_request_head(const struct kube_config *cfg, const char *method, const char *target,
                         const char *user_agent, const char *content_type, int has_body, size_t body_len,
                         char **errmsg)
{
    char *scheme = NULL, *host = NULL, *prefix = NULL, *auth = NULL, *head = NULL, *len = NULL;
    long port;
    if (kube_conn_split_server(cfg->server, &scheme, &host, &port, &prefix) < 0) {
        kube_set_err(errmsg, "%s: server URL \"%s\" is not http(s)://host[:port][/path]",
                     cfg->origin ? cfg->origin : "config", cfg->server);
        return NULL;
    }
    int dflt = port == (strcmp(scheme, "http") ? 443 : 80);
    if (!header_safe(target) || strchr(target, ' ') || !header_safe(user_agent) ||
        (content_type && !header_safe(content_type)) || !header_safe(method)) {
        kube_set_err(errmsg, "%s %s: a space or control character in the request line or headers", method, target);
        goto out;
    }
    if (!(auth = auth_line(cfg, errmsg)))
        goto out;
    int body_method = !strcmp(method, "POST") || !strcmp(method, "PUT") || !strcmp(method, "PATCH");
    len = has_body || body_method ? kube_strdup_printf("Content-Length: %zu\r\n", has_body ? body_len : 0)
                                  : strdup("");
    char port_s[16] = "";
    if (!dflt)
        snprintf(port_s, sizeof port_s, ":%ld", port);
    head = len ? kube_strdup_printf("%s %s%s HTTP/1.1\r\nHost: %s%s\r\nUser-Agent: %s\r\n"
                                    "Accept: application/json\r\n%s%s%s%s%s\r\n",
                                    method, prefix, target, host, port_s, user_agent, auth,
                                    has_body && content_type ? "Content-Type: " : "",
                                    has_body && content_type ? content_type : "",
                                    has_body && content_type ? "\r\n" : "", len)
               : NULL;
    if (!head)
        kube_set_err(errmsg, "out of memory");
out:
    if (auth) {
        explicit_bzero(auth, strlen(auth));
        free(auth);
    }
    free(len);
    free(scheme);
    free(host);
    free(prefix);
    return head;
}

void http1_head_free(char *head)
{
    if (!head)
        return;
    explicit_bzero(head, strlen(head));
    free(head);
}

int http1_conn_idle_ok(struct kube_conn *k)
{
    struct pollfd pf = {.fd = kube_conn_fd(k), .events = POLLIN};
    int r = poll(&pf, 1, 0);
    if (r == 0)
        return 1;
    if (r < 0)
        return 0;
    /* readable: TLS records without data (session tickets) are fine; EOF or bytes are not */
    char b[1];
    return kube_conn_recv(k, b, sizeof b) == -2;
}
