/* metrics_http.c - the monitoring HTTP endpoint: GET /metrics (Prometheus
 * text 0.0.4), /healthz (alive: every watched loop beat within its bound, health.h), /readyz (caches synced, or standing by
 * for the leader lease). One short request per connection, bounded reads. */
#include "metrics.h"
#include "health.h"
#include "kube/json.h"
#include "kube/util.h"
#include "kube/log.h"

#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>


static int lfd = -1, stop_pipe[2] = { -1, -1 };
static pthread_t th;
static int running;

static void reply(int fd, int code, const char *ctype, const char *body)
{
    char *hdr = NULL;
    size_t blen = strlen(body);
    int n = asprintf(&hdr, "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n",
                     code, code == 200 ? "OK" : code == 404 ? "Not Found" : "Service Unavailable", ctype, blen);
    if (n < 0)
        return;
    if (write(fd, hdr, (size_t)n) == n) {
        size_t off = 0;
        while (off < blen) {
            ssize_t w = write(fd, body + off, blen - off);
            if (w <= 0)
                break;
            off += (size_t)w;
        }
    }
    free(hdr);
}

static void serve_one(int fd)
{
    struct timeval tv = { 2, 0 };
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    char req[2048];
    size_t got = 0;
    while (got < sizeof req - 1 && !memmem(req, got, "\r\n\r\n", 4)) {
        ssize_t r = read(fd, req + got, sizeof req - 1 - got);
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    req[got] = 0;
    char path[256] = "";
    if (sscanf(req, "GET %255s", path) != 1) {
        reply(fd, 404, "text/plain", "bad request\n");
        return;
    }
    char *q = strchr(path, '?');
    if (q)
        *q = 0;
    if (strcmp(path, "/metrics") == 0) {
        char *body = metrics_render();
        reply(fd, body ? 200 : 503, "text/plain; version=0.0.4", body ? body : "error\n");
        free(body);
    } else if (strcmp(path, "/healthz") == 0) {
        char *why = NULL;
        if (health_alive(&why)) {
            reply(fd, 200, "text/plain", "ok\n");
        } else {
            char *body = NULL;
            int ok = why && asprintf(&body, "%s\n", why) >= 0;
            reply(fd, 503, "text/plain", ok ? body : "a loop stalled\n");
            free(body);
        }
        free(why);
    } else if (strcmp(path, "/readyz") == 0) {
        int r = metrics_is_ready();
        reply(fd, r ? 200 : 503, "text/plain", r ? "ok\n" : "caches not synced\n");
    } else {
        reply(fd, 404, "text/plain", "not found: try /metrics, /healthz, /readyz\n");
    }
}

static void *loop(void *arg)
{
    (void)arg;
    struct pollfd p[2] = { { lfd, POLLIN, 0 }, { stop_pipe[0], POLLIN, 0 } };
    for (;;) {
        if (poll(p, 2, -1) < 0 && errno != EINTR)
            break;
        if (p[1].revents)
            break;
        if (p[0].revents & POLLIN) {
            int fd = accept(lfd, NULL, NULL);
            if (fd >= 0) {
                serve_one(fd);
                close(fd);
            }
        }
    }
    return NULL;
}

int metrics_serve(int port, char **err)
{
    if (port <= 0)
        return 0;
    lfd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int v6 = 1;
    if (lfd < 0) {
        v6 = 0;
        lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    }
    if (lfd < 0)
        return kube_set_err(err, "--monitoring-port %d: socket: %s", port, strerror(errno));
    int one = 1, zero = 0;
    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    int rc;
    if (v6) {
        setsockopt(lfd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
        struct sockaddr_in6 a = { .sin6_family = AF_INET6, .sin6_port = htons((uint16_t)port), .sin6_addr = in6addr_any };
        rc = bind(lfd, (struct sockaddr *)&a, sizeof a);
    } else {
        struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port), .sin_addr.s_addr = htonl(INADDR_ANY) };
        rc = bind(lfd, (struct sockaddr *)&a, sizeof a);
    }
    if (rc < 0 || listen(lfd, 16) < 0 || pipe(stop_pipe) < 0) {
        int e = errno;
        close(lfd);
        lfd = -1;
        return kube_set_err(err, "--monitoring-port %d: cannot listen: %s", port, strerror(e));
    }
    if (pthread_create(&th, NULL, loop, NULL) != 0)
        return kube_set_err(err, "--monitoring-port %d: cannot start the server thread", port);
    running = 1;
    KLOG_INFO("serving /metrics, /healthz and /readyz on port %d", port);
    return 0;
}

void metrics_stop(void)
{
    if (!running)
        return;
    if (write(stop_pipe[1], "x", 1) < 0)
        KLOG_WARN("metrics: cannot wake the server thread");
    pthread_join(th, NULL);
    close(lfd);
    close(stop_pipe[0]);
    close(stop_pipe[1]);
    running = 0;
}
