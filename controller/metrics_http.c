/* metrics_http.c - the monitoring HTTP endpoint: GET /metrics (Prometheus
 * text 0.0.4), /healthz (alive: every watched loop beat within its bound, health.h), /readyz (caches synced, or standing by
 * for the leader lease). Served by Debian's libmicrohttpd on one internal thread with
 * non-blocking sockets: every connection is served as its bytes arrive, so a client that
 * sends half a request or reads nothing never delays another one's /healthz; a connection
 * idle for METRICS_HTTP_TIMEOUT_S is closed, and at most METRICS_HTTP_MAX_CONN are open. */
#include "metrics.h"
#include "health.h"
#include "kube/json.h"
#include "kube/util.h"
#include "kube/log.h"
#include "metrics_http.h"

#include <microhttpd.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A connection with no byte in or out for this long is closed (libmicrohttpd's timeout). */
#define METRICS_HTTP_TIMEOUT_S 5
/* Most connections open at once, and from one address (more are refused at accept). */
#define METRICS_HTTP_MAX_CONN 64
#define METRICS_HTTP_MAX_PER_IP 16
/* Memory for one connection's request (line and headers); larger requests get 431. */
#define METRICS_HTTP_MEM (16 * 1024)

struct metrics_server {
    struct MHD_Daemon *d;
    struct metrics *m; /* borrowed */
};

/* Queues a reply whose body is a copy of body (or, with own, body itself, freed by MHD). */
static enum MHD_Result reply(struct MHD_Connection *conn, unsigned code, const char *ctype, char *body, int own)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer(strlen(body), body, own ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_MUST_COPY);
    if (!r) {
        if (own)
            free(body);
        return MHD_NO;
    }
    enum MHD_Result ok = MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
    if (ok == MHD_YES)
        ok = MHD_queue_response(conn, code, r);
    MHD_destroy_response(r);
    return ok;
}

static enum MHD_Result serve_healthz(struct MHD_Connection *conn)
{
    char *why = NULL;
    if (health_alive(&why))
        return reply(conn, MHD_HTTP_OK, "text/plain", "ok\n", 0);
    char *body = NULL;
    if (!why || asprintf(&body, "%s\n", why) < 0)
        body = NULL;
    free(why);
    if (!body)
        return reply(conn, MHD_HTTP_SERVICE_UNAVAILABLE, "text/plain", "a loop stalled\n", 0);
    return reply(conn, MHD_HTTP_SERVICE_UNAVAILABLE, "text/plain", body, 1);
}

/* libmicrohttpd's request handler: called once the request line and headers are in. */
static enum MHD_Result handle(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
                              const char *version, const char *upload, size_t *upload_size, void **req_cls)
{
    struct metrics *m = cls;
    (void)version, (void)upload, (void)req_cls;
    if (*upload_size) {
        *upload_size = 0; /* a body is ignored; answered once it is read */
        return MHD_YES;
    }
    if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
        return reply(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain", "only GET is served\n", 0);
    if (strcmp(url, "/metrics") == 0) {
        char *body = metrics_render(m);
        if (!body)
            return reply(conn, MHD_HTTP_SERVICE_UNAVAILABLE, "text/plain", "error\n", 0);
        return reply(conn, MHD_HTTP_OK, "text/plain; version=0.0.4", body, 1);
    }
    if (strcmp(url, "/healthz") == 0)
        return serve_healthz(conn);
    if (strcmp(url, "/readyz") == 0) {
        int r = metrics_is_ready(m);
        return reply(conn, r ? MHD_HTTP_OK : MHD_HTTP_SERVICE_UNAVAILABLE, "text/plain", r ? "ok\n" : "caches not synced\n",
                     0);
    }
    return reply(conn, MHD_HTTP_NOT_FOUND, "text/plain", "not found: try /metrics, /healthz, /readyz\n", 0);
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
    (void)cls;
    char *msg = NULL;
    if (vasprintf(&msg, fmt, ap) < 0)
        return;
    size_t n = strlen(msg);
    while (n && msg[n - 1] == '\n')
        msg[--n] = 0;
    KLOG_DEBUG("metrics endpoint: %s", msg);
    free(msg);
}

static struct MHD_Daemon *start(struct metrics *m, int port, unsigned family_flag)
{
    return MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL | MHD_USE_ERROR_LOG | family_flag, (uint16_t)port,
                            NULL, NULL, handle, m, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)METRICS_HTTP_TIMEOUT_S,
                            MHD_OPTION_CONNECTION_LIMIT, (unsigned int)METRICS_HTTP_MAX_CONN,
                            MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned int)METRICS_HTTP_MAX_PER_IP,
                            MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)METRICS_HTTP_MEM, MHD_OPTION_EXTERNAL_LOGGER,
                            mhd_log, NULL, MHD_OPTION_END);
}

struct metrics_server *metrics_http_serve(struct metrics *m, int port, char **errmsg)
{
    if (port <= 0 || port > 65535) {
        kube_set_err(errmsg, "--monitoring-port %d: not a port (1-65535)", port);
        return NULL;
    }
    struct metrics_server *s = calloc(1, sizeof *s);
    if (!s) {
        kube_set_err(errmsg, "--monitoring-port %d: out of memory", port);
        return NULL;
    }
    s->m = m;
    s->d = start(m, port, MHD_USE_DUAL_STACK);
    int e = errno;
    if (!s->d && e != EADDRINUSE && e != EACCES)
        s->d = start(m, port, 0); /* no IPv6 here: IPv4 only */
    if (!s->d) {
        kube_set_err(errmsg, "--monitoring-port %d: cannot listen: %s", port, strerror(errno ? errno : e));
        free(s);
        return NULL;
    }
    KLOG_INFO("serving /metrics, /healthz and /readyz on port %d", port);
    return s;
}

void metrics_http_stop(struct metrics_server *s)
{
    if (!s)
        return;
    MHD_stop_daemon(s->d);
    free(s);
}
