/* exec_conn.c - opening the exec WebSocket: a TCP/TLS connection from tls_conn.c (OpenSSL,
 * http:// CONNECT proxies), then the GET upgrade with the config's credential (bearer token
 * or exec plugin) and Impersonate-* headers, and the reply checked (accept key, subprotocol).
 * Non-101 replies are decoded as metav1.Status for a one-line reason. */
#include "exec_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "kube/util.h"
#include "kube/ws.h"
#include "url_int.h"

#define HEAD_MAX (64 * 1024)
#define BODY_MAX (64 * 1024)

int Kube_exec_send_all(struct exec_conn *c, const void *buf, size_t len, int64_t deadline)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t n = Kube_conn_send(c->k, p, len);
        if (n < 0)
            return -1;
        if (n == 0) {
            if (Kube_wait_fd(c->fd, Kube_conn_events(c->k), deadline) <= 0)
                return -1;
            continue;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

/* Reads more bytes into *buf (growing it up to max); 1 got some, 0 EOF, -1 error/timeout. */
static int recv_more(struct exec_conn *c, char **buf, size_t *len, size_t *cap, size_t max, int64_t deadline)
{
    if (*len + 1 >= *cap) {
        if (*cap >= max)
            return -1;
        size_t ncap = *cap ? *cap * 2 : 8192;
        if (ncap > max)
            ncap = max;
        char *nb = realloc(*buf, ncap);
        if (!nb)
            return -1;
        *buf = nb;
        *cap = ncap;
    }
    for (;;) {
        ssize_t n = Kube_conn_recv(c->k, *buf + *len, *cap - *len - 1);
        if (n == -2) {
            if (Kube_wait_fd(c->fd, Kube_conn_events(c->k), deadline) <= 0)
                return -1;
            continue;
        }
        if (n < 0)
            return -1;
        if (n == 0)
            return 0;
        *len += (size_t)n;
        (*buf)[*len] = 0;
        return 1;
    }
}

/* Builds the upgrade request text: Host is the server's host:port (not tls-server-name). */
static char *build_request(const struct kube_config *cfg, const struct kube_credential *cred, const struct kube_exec_opts *o,
                           const char *key, const char *offered, char **errmsg)
{
    char *scheme = NULL, *host = NULL, *prefix = NULL, *target = kube_exec_target(o), *auth = NULL, *req = NULL;
    long port;
    if (!target) {
        kube_set_err(errmsg, "exec: namespace, pod and command are required");
        return NULL;
    }
    if (Kube_url_split_server(cfg->server, &scheme, &host, &port, &prefix) < 0) {
        kube_set_err(errmsg, "exec: cannot parse server URL \"%s\"", cfg->server);
        goto out;
    }
    auth = kube_config_auth_headers(cfg, cred);
    if (!auth) {
        kube_set_err(errmsg, "exec: an impersonation value in %s holds a line break, or out of memory", cfg->origin);
        goto out;
    }
    req = kube_strdup_printf("GET %s%s HTTP/1.1\r\nHost: %s:%ld\r\nUser-Agent: %s\r\nConnection: Upgrade\r\n"
                             "Upgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: %s\r\n"
                             "Sec-WebSocket-Protocol: %s\r\n%s\r\n",
                             prefix, target, host, port, o->user_agent ? o->user_agent : "mpi-k8s-exec/0.1", key, offered,
                             auth);
out:
    if (auth) {
        explicit_bzero(auth, strlen(auth));
        free(auth);
    }
    free(scheme);
    free(host);
    free(prefix);
    free(target);
    if (!req && errmsg && !*errmsg)
        kube_set_err(errmsg, "exec: out of memory");
    return req;
}

/* Opens the TCP/TLS connection (tls_conn.c). */
static int open_conn(const struct kube_config *cfg, const struct kube_credential *cred, const struct kube_exec_opts *o,
                     struct exec_conn *c, struct exec_attempt *a)
{
    char *msg = NULL;
    long cto = o->connect_timeout_ms > 0 ? o->connect_timeout_ms : 10000;
    c->k = Kube_conn_open(cfg, cred, o->tls_session_dir, kube_now_ms() + cto, &msg, &a->retryable);
    if (!c->k) {
        kube_error_set(&a->err, 0, KUBE_TRANSPORT, "%s", msg ? msg : "exec: cannot connect");
        free(msg);
        return -1;
    }
    c->fd = Kube_conn_fd(c->k);
    return 0;
}

/* Returns 1 when body is a JSON object that looks like a metav1.Status; *msg gets its
 * "message (Reason)" when it has a message. */
static int status_body(const char *body, size_t len, char **msg)
{
    json_t *j = json_loadb(body, len, 0, NULL);
    int yes = json_is_object(j) && (json_object_get(j, "status") || json_object_get(j, "kind"));
    const char *m = yes ? json_string_value(json_object_get(j, "message")) : NULL;
    const char *r = yes ? json_string_value(json_object_get(j, "reason")) : NULL;
    if (m && *m)
        *msg = r && *r ? kube_strdup_printf("%s (%s)", m, r) : kube_strdup_printf("%s", m);
    json_decref(j);
    return yes;
}

/* Reads the body of a refused upgrade and turns it into a's error. */
static void refused(struct exec_conn *c, const struct kube_exec_opts *o, char *buf, size_t len, size_t cap,
                    const struct kube_exec_reply *rep, int64_t deadline, struct exec_attempt *a)
{
    size_t want = rep->content_length >= 0 ? rep->head_len + (size_t)rep->content_length : HEAD_MAX + BODY_MAX;
    int64_t body_deadline = kube_now_ms() + 2000;
    if (deadline && body_deadline > deadline)
        body_deadline = deadline;
    while (len < want && recv_more(c, &buf, &len, &cap, HEAD_MAX + BODY_MAX, body_deadline) > 0) {}
    if (len > want)
        len = want;
    const char *body = buf + rep->head_len;
    size_t blen = len - rep->head_len;
    if (rep->chunked) { /* keep the JSON object inside the chunk framing */
        const char *s = memchr(body, '{', blen), *e = NULL;
        for (const char *p = body + blen; s && p > s; p--)
            if (p[-1] == '}') {
                e = p;
                break;
            }
        if (s && e) {
            blen = (size_t)(e - s);
            body = s;
        }
    }
    char *smsg = NULL;
    int is_status = status_body(body, blen, &smsg);
    kube_status_decode(body, blen, rep->code, &a->err);
    char *m = kube_strdup_printf("exec into pod %s/%s refused (HTTP %d): %s", o->namespace, o->pod, rep->code,
                                 smsg             ? smsg
                                 : a->err.message ? a->err.message
                                                  : "no message");
    for (char *q = m; q && *q; q++)
        if (*q == '\n' || *q == '\r')
            *q = ' ';
    if (m) {
        free(a->err.message);
        a->err.message = m;
    }
    free(smsg);
    if (rep->retry_after_s >= 0)
        a->err.retry_after_s = rep->retry_after_s;
    a->retryable = rep->code == 429 || rep->code >= 500;
    a->proto_refused = (rep->code == 403 || rep->code == 400) && !is_status;
    free(buf);
}

int Kube_exec_connect(const struct kube_config *cfg, const struct kube_exec_opts *o, const char *offered,
                      struct exec_conn *c, struct exec_attempt *a)
{
    char key[25], accept[29], *msg = NULL, *req = NULL, *buf = NULL;
    int rc = -1;
    size_t len = 0, cap = 0;
    struct kube_credential cred = { 0 };
    memset(c, 0, sizeof(*c));
    c->fd = -1;
    Kube_openssl_init(); /* before the key's digest: the first OpenSSL use decides the config */
    if (kube_ws_make_key(key) < 0 || kube_ws_accept_for(key, accept) < 0) {
        kube_error_set(&a->err, 0, KUBE_TRANSPORT, "exec: no randomness for the WebSocket key");
        return -1;
    }
    if (kube_config_credential(cfg, &cred, &msg) < 0) {
        kube_error_set(&a->err, 0, KUBE_UNAUTHORIZED, "%s", msg ? msg : "exec: no credential");
        goto fail;
    }
    req = build_request(cfg, &cred, o, key, offered, &msg);
    if (!req) {
        kube_error_set(&a->err, 0, KUBE_PROTOCOL, "%s", msg);
        goto fail;
    }
    if (open_conn(cfg, &cred, o, c, a) < 0)
        goto fail;
    int64_t deadline = kube_now_ms() + (o->handshake_timeout_ms > 0 ? o->handshake_timeout_ms : 30000);
    if (Kube_exec_send_all(c, req, strlen(req), deadline) < 0) {
        kube_error_set(&a->err, 0, KUBE_TRANSPORT, "exec: sending the upgrade request to %s failed", cfg->server);
        a->retryable = 1;
        goto fail;
    }
    struct kube_exec_reply rep;
    int pr = 0;
    while (pr == 0) {
        int got = recv_more(c, &buf, &len, &cap, HEAD_MAX + 1, deadline);
        if (got <= 0) {
            const char *why = got == 0 ? "connection closed" : *Kube_conn_error(c->k) ? Kube_conn_error(c->k) : "timeout";
            kube_error_set(&a->err, 0, KUBE_TRANSPORT, "exec: %s before the upgrade reply from %s (%s)", why, cfg->server,
                           cfg->origin);
            a->retryable = !Kube_conn_tls_failed(c->k);
            goto fail;
        }
        pr = kube_exec_parse_reply(buf, len, accept, offered, &rep, &msg);
    }
    if (pr < 0) {
        kube_error_set(&a->err, 0, KUBE_PROTOCOL, "exec: %s", msg);
        goto fail;
    }
    if (rep.code != 101) {
        refused(c, o, buf, len, cap, &rep, deadline, a);
        if (rep.code == 401 && kube_config_credential_rejected(cfg, &cred))
            a->retryable = 1; /* the exec plugin runs again on the next attempt */
        buf = NULL;
        kube_exec_reply_free(&rep);
        goto fail;
    }
    c->proto = strcmp(rep.protocol, "v4.channel.k8s.io") == 0 ? 4 : 5;
    kube_exec_reply_free(&rep);
    c->pre_len = len - rep.head_len;
    c->pre = malloc(c->pre_len ? c->pre_len : 1);
    if (!c->pre) {
        kube_error_set(&a->err, 0, KUBE_TRANSPORT, "exec: out of memory");
        goto fail;
    }
    memcpy(c->pre, buf + rep.head_len, c->pre_len);
    rc = 0;
fail:
    free(buf);
    if (req)
        explicit_bzero(req, strlen(req)); /* it holds the bearer token */
    free(req);
    free(msg);
    kube_credential_free(&cred);
    if (rc < 0)
        Kube_exec_conn_close(c);
    return rc;
}

void Kube_exec_conn_close(struct exec_conn *c)
{
    Kube_conn_close(c->k);
    free(c->pre);
    memset(c, 0, sizeof(*c));
    c->fd = -1;
}
