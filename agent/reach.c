/* reach.c - parallel reachability check of the workers through the job's
 * transport: exec transport runs `true` in the worker container over the exec
 * API (the same client mpi-rsh uses); ssh transport does DNS, connect,
 * handshake, host key and auth (kube_ssh_check). Threads, bounded by a deadline. */
#include "reach.h"
#include "mpik8s/contract.h"

#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kube/exec.h"
#include "kube/log.h"
#include "kube/ssh.h"
#include "kube/util.h"

#define REACH_MAX_THREADS 32
#define RETRY_FIRST_MS 200
#define RETRY_MAX_MS 500 /* short: a check that succeeds late must not delay the launch */

struct reach_job {
    struct agent_session *s;
    struct agent_reach_result *res;
    size_t next; /* next worker index to take */
    pthread_mutex_t mu;
    int64_t deadline; /* monotonic ms */
};

static char *tls_dir;
static void tls_dir_init(void)
{
    const char *d = getenv(MPIK8S_RSH_ENV_TLS_CACHE_DIR); /* the directory every mpi-rsh uses */
    tls_dir = !d ? kube_tls_session_dir_default() : *d ? strdup(d) : NULL;
}

/* The TLS session directory shared with mpi-rsh (NULL: none; computed once, kept). */
static const char *reach_tls_dir(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, tls_dir_init);
    return tls_dir;
}

/* One exec of `true`; 0 ok, -1 with *errmsg. */
static int try_exec(struct agent_session *s, const char *pod, int64_t deadline, int cancel_fd, char **errmsg)
{
    struct kube_exec_opts eo;
    kube_exec_opts_default(&eo);
    eo.namespace = s->ns;
    eo.pod = pod;
    eo.container = s->o->container;
    eo.command = "true";
    eo.fd_in = -1;
    eo.capture = 1;
    eo.capture_max = 4096;
    eo.attempts = 1;
    int64_t left = deadline - kube_now_ms();
    eo.connect_timeout_ms = left > 10000 ? 10000 : (left > 1000 ? (int)left : 1000);
    eo.handshake_timeout_ms = eo.connect_timeout_ms;
    eo.linger_ms = 500;
    eo.cancel_fd = cancel_fd;
    eo.tls_session_dir = reach_tls_dir(); /* the reach check's session is resumed by every mpi-rsh */
    struct kube_exec_result r = { 0 };
    int outcome = kube_exec_run(kube_client_config(s->client), &eo, &r), code = r.exit_code;
    int rc = 0;
    if (outcome == KUBE_EXEC_REFUSED) {
        kube_set_err(errmsg, "exec refused: %s", r.message ? r.message : "no reply");
        rc = -1;
    } else if (outcome != KUBE_EXEC_EXITED) {
        kube_set_err(errmsg, "exec stream failed: %s", r.message ? r.message : "no exit status");
        rc = -1;
    } else if (code != 0) {
        kube_set_err(errmsg, "exec `true` exited %d%s%s", code, r.message ? ": " : "",
                     r.message ? r.message : (r.err && *r.err ? r.err : ""));
        rc = -1;
    }
    kube_exec_result_free(&r);
    return rc;
}

int agent_reach_login_elsewhere(const struct agent_opts *o)
{
    return o->launcher_uid > 0 || (o->launcher_uid == 0 && geteuid() != 0);
}

/* One SSH check (up to the host key when the launcher logs in as another user); 0 ok,
 * -1 with *errmsg naming the stage. */
static int try_ssh(struct agent_session *s, const char *host, int64_t deadline, char **errmsg)
{
    struct kube_ssh_opts so = { 0 };
    so.port = s->o->ssh_port;
    so.key_dir = s->o->ssh_dir;
    so.attempts = 1;
    so.no_auth = agent_reach_login_elsewhere(s->o);
    int64_t left = deadline - kube_now_ms();
    so.connect_timeout_ms = left > 10000 ? 10000 : (left > 1000 ? (int)left : 1000);
    char *e = NULL;
    int rc = kube_ssh_check(&so, host, &e);
    if (rc != 0) {
        kube_set_err(errmsg, "ssh %s", e ? e : kube_ssh_stage_name(rc));
        free(e);
        return -1;
    }
    return 0;
}

/* Returns 1 when fd (a pipe's read end, > 0) has been made readable: cancelled. */
static int cancelled(int fd)
{
    struct pollfd p = { fd, POLLIN, 0 };
    return fd > 0 && poll(&p, 1, 0) > 0;
}

void agent_reach_one(struct agent_session *s, size_t i, int64_t deadline, int cancel_fd, struct agent_reach_result *r)
{
    int64_t delay = RETRY_FIRST_MS;
    for (;;) {
        char *err = NULL;
        int64_t t0 = kube_now_ms();
        int rc = s->o->transport == MPIK8S_TRANSPORT_SSH ? try_ssh(s, s->hosts.v[i].host, deadline, &err)
                                                         : try_exec(s, s->hosts.v[i].pod, deadline, cancel_fd, &err);
        r->tries++;
        r->rtt_ms = (double)(kube_now_ms() - t0);
        free(r->error);
        r->error = err;
        if (rc == 0) {
            r->ok = 1;
            return;
        }
        KLOG_DEBUG("%s not reachable yet (try %d): %s", s->hosts.v[i].pod, r->tries, err);
        if (kube_now_ms() + delay >= deadline || cancelled(cancel_fd))
            return;
        struct pollfd p = { cancel_fd, POLLIN, 0 };
        if (cancel_fd > 0 ? poll(&p, 1, (int)delay) > 0 : (kube_sleep_ms(delay), 0))
            return;
        delay = delay * 2 > RETRY_MAX_MS ? RETRY_MAX_MS : delay * 2;
    }
}

static void *worker_thread(void *arg)
{
    struct reach_job *j = arg;
    for (;;) {
        pthread_mutex_lock(&j->mu);
        size_t i = j->next++;
        pthread_mutex_unlock(&j->mu);
        if (i >= j->s->hosts.n)
            return NULL;
        agent_reach_one(j->s, i, j->deadline, -1, &j->res[i]);
    }
}

int agent_reach_all(struct agent_session *s, double deadline_s, struct agent_reach_result **results)
{
    size_t n = s->hosts.n;
    struct reach_job j = { .s = s, .next = 0, .deadline = kube_now_ms() + (int64_t)(deadline_s * 1000) };
    j.res = calloc(n ? n : 1, sizeof(*j.res));
    if (!j.res || pthread_mutex_init(&j.mu, NULL) != 0) {
        free(j.res);
        return -1;
    }
    size_t nt = n < REACH_MAX_THREADS ? n : REACH_MAX_THREADS;
    pthread_t th[REACH_MAX_THREADS];
    size_t started = 0;
    for (; started < nt; started++)
        if (pthread_create(&th[started], NULL, worker_thread, &j) != 0)
            break;
    if (started == 0)
        worker_thread(&j);
    for (size_t t = 0; t < started; t++)
        pthread_join(th[t], NULL);
    pthread_mutex_destroy(&j.mu);
    int bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += !j.res[i].ok;
    *results = j.res;
    return bad;
}

char *agent_reach_report(const struct agent_session *s, const struct agent_reach_result *r)
{
    char *buf = NULL;
    size_t sz = 0;
    FILE *f = open_memstream(&buf, &sz);
    if (!f)
        return NULL;
    for (size_t i = 0; i < s->hosts.n; i++)
        if (!r[i].ok)
            fprintf(f, "  %s: %s (after %d tr%s)\n", s->hosts.v[i].pod, r[i].error ? r[i].error : "unreachable", r[i].tries,
                    r[i].tries == 1 ? "y" : "ies");
    if (fclose(f) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

void agent_reach_results_free(struct agent_reach_result *r, size_t n)
{
    for (size_t i = 0; r && i < n; i++)
        free(r[i].error);
    free(r);
}
