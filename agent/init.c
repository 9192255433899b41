/* init.c - `mpi-agent init`, the launcher pod's init container: deliver the
 * bundle into /opt/kube, find and wait for the workers (bounded, with reasons),
 * check each is reachable through the job's transport, and for SSH write the
 * IP map for images without DNS. The termination message records the outcome, and
 * DEST/init-ready.json what was established, for `mpi-agent run` (initrecord.c). */
#include "commands.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "deliver.h"
#include "initrecord.h"
#include "safefile.h"
#include "logx.h"
#include "podstate.h"
#include "reach.h"
#include "reach_early.h"
#include "wait.h"
#include "kube/json.h"
#include "kube/log.h"
#include "kube/util.h"

#define REACH_MIN_S 30.0 /* the reachability check gets at least this long */

/* Abort check for the reachability phase: a worker that failed (e.g. a crash loop seen Ready
 * for a moment) ends it at once instead of after the deadline. */
struct fail_watch {
    struct agent_session *s;
    uint64_t gen; /* informer generation last assessed */
};

static int worker_failed(void *ud, char **why)
{
    struct fail_watch *fw = ud;
    struct agent_session *s = fw->s;
    uint64_t g = kube_informer_generation(s->inf);
    if (g == fw->gen)
        return 0; /* nothing changed since the last look */
    fw->gen = g;
    size_t nready;
    int failed = 0;
    char *rep = agent_unready_report(s, &nready, &failed);
    if (rep && failed) {
        *why = rep;
        return 1;
    }
    free(rep);
    return 0;
}

/* No-API mode: no pod states to wait on; the workers are ready once each answers SSH,
 * within the usual worker timeout. 0 ok, -2 with *errmsg naming the unreachable workers. */
static int prepare_no_api(struct agent_session *s, char **errmsg)
{
    if (s->o->no_reach) {
        agent_phase_mark(&s->phases, AGENT_PHASE_WORKERS_REACHABLE);
        return 0;
    }
    struct agent_reach_result *rr = NULL;
    int bad = agent_reach_all(s, s->o->timeout_s, &rr);
    if (bad != 0) {
        char *rep = rr ? agent_reach_report(s, rr) : NULL;
        kube_set_err(errmsg,
                     "timed out after %.0f s waiting for workers: %d not reachable through ssh "
                     "(no-API mode):\n%s",
                     s->o->timeout_s, bad, rep ? rep : "");
        free(rep);
        agent_reach_results_free(rr, s->hosts.n);
        return -2;
    }
    agent_reach_results_free(rr, s->hosts.n);
    agent_phase_mark(&s->phases, AGENT_PHASE_WORKERS_READY);
    agent_phase_mark(&s->phases, AGENT_PHASE_WORKERS_REACHABLE);
    KLOG_INFO("%zu/%zu workers reachable through ssh (no-API mode)", s->hosts.n, s->hosts.n);
    return 0;
}

int agent_prepare_workers(struct agent_session *s, char **errmsg)
{
    if (s->no_api)
        return prepare_no_api(s, errmsg);
    int64_t t0 = kube_now_ms();
    int64_t reach_deadline = t0 + (int64_t)((s->o->timeout_s + REACH_MIN_S) * 1000);
    if (!s->o->no_reach && s->o->transport == MPIK8S_TRANSPORT_SSH && agent_reach_login_elsewhere(s->o))
        KLOG_INFO("the launcher runs as uid %d, whose name only its image knows: the SSH check stops "
                  "at the workers' host key; mpirun's connections log in",
                  s->o->launcher_uid);
    if (!s->o->no_reach)
        s->early = agent_reach_early_new(s, reach_deadline); /* NULL: checked after the wait */
    int w = agent_wait_workers(s, s->o->timeout_s, errmsg);
    if (w < 0) {
        agent_reach_early_cancel(s->early);
        s->early = NULL;
        return w;
    }
    if (s->o->no_reach) {
        agent_phase_mark(&s->phases, AGENT_PHASE_WORKERS_REACHABLE);
        return 0;
    }
    struct agent_reach_result *rr = NULL;
    char *why = NULL;
    struct fail_watch fw = { s, 0 };
    int bad = s->early ? agent_reach_early_finish(s->early, worker_failed, &fw, &rr, &why)
                       : agent_reach_all(s, (reach_deadline - kube_now_ms()) / 1000.0, &rr);
    s->early = NULL;
    if (bad == -2) {
        kube_set_err(errmsg, "worker failed while checking reachability:\n%s", why ? why : "");
        free(why);
        return -2;
    }
    if (bad != 0) {
        char *rep = rr ? agent_reach_report(s, rr) : NULL;
        kube_set_err(errmsg, "%d worker(s) Ready but not reachable through %s:\n%s", bad,
                     mpik8s_transport_name(s->o->transport), rep ? rep : "");
        free(rep);
        agent_reach_results_free(rr, s->hosts.n);
        return -1;
    }
    double worst = 0;
    for (size_t i = 0; i < s->hosts.n; i++)
        worst = rr[i].rtt_ms > worst ? rr[i].rtt_ms : worst;
    agent_reach_results_free(rr, s->hosts.n);
    agent_phase_mark(&s->phases, AGENT_PHASE_WORKERS_REACHABLE);
    KLOG_INFO("%zu/%zu workers reachable through %s (slowest %.0f ms, checked while waiting)", s->hosts.n, s->hosts.n,
              mpik8s_transport_name(s->o->transport), worst);
    return 0;
}

void agent_finish(struct agent_session *s, const char *summary)
{
    char *err = NULL;
    if (agent_termination_write(s->o->termination_log, summary, &s->phases, s->failure, &err) < 0) {
        KLOG_WARN("%s", err);
        free(err);
    }
}

/* Writes "<podIP> <host> <pod>" per worker to dest/hosts (unique temp file + rename, mode
 * 0644), for SSH images without DNS, like upstream's kubectl-delivery. 0 ok, -1 with *errmsg. */
static int write_ip_map(struct agent_session *s, char **errmsg)
{
    char *text = NULL;
    size_t sz = 0;
    FILE *f = open_memstream(&text, &sz);
    for (size_t i = 0; f && i < s->hosts.n; i++) {
        json_t *pod = kube_informer_get(s->inf, s->ns, s->hosts.v[i].pod);
        const char *ip = agent_pod_ip(pod, s->o->ip_family);
        if (ip)
            fprintf(f, "%s\t%s %s\n", ip, s->hosts.v[i].host, s->hosts.v[i].pod);
        json_decref(pod);
    }
    char *path = kube_strdup_printf("%s/hosts", s->o->dest);
    int rc = -1;
    if (!f || fclose(f) != 0 || !path)
        kube_set_err(errmsg, "out of memory writing the hosts map");
    else
        rc = agent_replace_file(path, text, 0644, errmsg);
    free(path);
    free(text);
    return rc;
}

/* Removes a record an earlier init left (this one may fail); a missing file is fine. */
static void drop_record(const struct agent_opts *o)
{
    char *path = kube_strdup_printf("%s/%s", o->dest, AGENT_INIT_RECORD);
    if (path && unlink(path) != 0 && errno != ENOENT)
        KLOG_WARN("removing %s: %s", path, strerror(errno));
    free(path);
}

/* Records what init established; `run` then waits again, which is only slower, if this fails. */
static void keep_record(const struct agent_session *s)
{
    char *err = NULL;
    if (agent_init_record_write(s, &err) < 0)
        KLOG_WARN("%s (mpi-agent run will wait for the workers again)", err ? err : "init record");
    else
        KLOG_DEBUG("recorded the workers for mpi-agent run in %s/%s", s->o->dest, AGENT_INIT_RECORD);
    free(err);
}

/* Delivery step; 0 ok, -1 with *errmsg. */
static int deliver_bundle(struct agent_opts *o, char **errmsg)
{
    char *src = agent_bundle_dir(errmsg);
    if (!src)
        return -1;
    int n = 0;
    int rc = agent_deliver(src, o->dest, &n, errmsg);
    free(src);
    return rc;
}

int agent_cmd_init(struct agent_opts *o)
{
    struct agent_session s = { 0 };
    s.o = o;
    s.allow_no_api = 1;
    char *err = NULL, *summary = NULL;
    int rc = 1;
    drop_record(o);
    if (!o->no_deliver && deliver_bundle(o, &err) < 0)
        goto out;
    if (agent_session_connect(&s, o, &err) < 0 || agent_workers_find(&s, &err) < 0)
        goto out;
    KLOG_INFO("waiting up to %.0f s for %zu worker(s) in namespace %s", o->timeout_s, s.hosts.n, s.ns);
    int pw = agent_prepare_workers(&s, &err);
    if (pw < 0) {
        rc = pw == -2 ? AGENT_EXIT_WORKERS_NOT_READY : 1;
        goto out;
    }
    if (o->transport == MPIK8S_TRANSPORT_SSH && !s.no_api && write_ip_map(&s, &err) < 0)
        goto out;
    keep_record(&s);
    summary = kube_strdup_printf("init: %zu worker(s) ready and reachable", s.hosts.n);
    rc = 0;
out:
    if (rc != 0) {
        agent_log_lines(KUBE_LOG_ERROR, err ? err : "failed");
        summary = kube_strdup_printf("init failed: %s", err ? err : "unknown error");
    }
    agent_finish(&s, summary ? summary : "init");
    free(summary);
    free(err);
    agent_session_close(&s);
    return rc;
}
