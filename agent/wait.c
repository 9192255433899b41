/* wait.c - the bounded, watch-driven wait for the workers: each informer change
 * re-assesses the worker pods; progress is printed when the ready count changes
 * (rate-limited) and periodically; a failed worker ends the wait at once. */
#include "wait.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "podstate.h"
#include "reach_early.h"
#include "kube/json.h"
#include "kube/log.h"
#include "kube/util.h"

#define PROGRESS_MIN_MS 2000   /* at most one progress line per this interval */
#define PROGRESS_IDLE_MS 15000 /* and one at least this often while waiting */
#define WAKE_MAX_MS 1000       /* re-check (in memory) at least this often */

char *agent_unready_report(struct agent_session *s, size_t *nready, int *any_failed)
{
    char *buf = NULL;
    size_t sz = 0;
    FILE *f = open_memstream(&buf, &sz);
    if (!f)
        return NULL;
    *nready = 0;
    *any_failed = 0;
    int64_t now = kube_realtime_ms();
    for (size_t i = 0; i < s->hosts.n; i++) {
        json_t *pod = kube_informer_get(s->inf, s->ns, s->hosts.v[i].pod);
        struct agent_pod_view v;
        if (agent_pod_assess(pod, &v) == 0) {
            /* a worker still being deleted (a restart, a user's kubectl delete) is replaced by
             * the operator: wait for the new one; a deletion overdue (lost node) fails */
            int going = v.verdict == AGENT_POD_FAILED && agent_pod_deletion_in_progress(pod, now);
            if (v.verdict == AGENT_POD_READY)
                (*nready)++;
            else
                fprintf(f, "  %s: phase %s: %s%s%s%s%s\n", s->hosts.v[i].pod, v.phase, v.reason,
                        going ? ", to be replaced" : "", v.node ? " (node " : "", v.node ? v.node : "", v.node ? ")" : "");
            if (v.verdict == AGENT_POD_FAILED && !going)
                *any_failed = 1;
        }
        agent_pod_view_free(&v);
        json_decref(pod);
    }
    if (fclose(f) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

/* Starts the early reachability check of every worker whose pod is Running. */
static void kick_running(struct agent_session *s)
{
    for (size_t i = 0; s->early && i < s->hosts.n; i++) {
        json_t *pod = kube_informer_get(s->inf, s->ns, s->hosts.v[i].pod);
        const char *ph = kube_json_at_str(pod, "status", "phase");
        if (ph && !strcmp(ph, "Running") && !kube_json_at_str(pod, "metadata", "deletionTimestamp"))
            agent_reach_early_kick(s->early, i);
        json_decref(pod);
    }
}

/* A termination signal pending while blocked (mpi-agent run blocks them for its supervisor). */
static int pending_stop_signal(void)
{
    sigset_t p;
    if (sigpending(&p) != 0)
        return 0;
    static const int sigs[] = { SIGTERM, SIGINT, SIGHUP };
    for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
        if (sigismember(&p, sigs[i]) == 1)
            return sigs[i];
    return 0;
}

/* First line of the report (the first unready worker), for progress lines. */
static void first_line(const char *rep, char *out, size_t n)
{
    while (*rep == ' ')
        rep++;
    size_t l = strcspn(rep, "\n");
    snprintf(out, n, "%.*s", (int)(l < n ? l : n - 1), rep);
}

/* Waits for the informer's first list within the deadline; 0 ok, -1 with *errmsg. */
static int wait_synced(struct agent_session *s, int64_t deadline, char **errmsg)
{
    long left = (long)(deadline - kube_now_ms());
    if (kube_informer_wait_synced(s->inf, left > 0 ? left : 0))
        return 0;
    char *le = kube_informer_last_error(s->inf);
    kube_set_err(errmsg, "could not list the worker pods in namespace %s: %s", s->ns, le ? le : "timed out");
    free(le);
    return -1;
}

/* Decides after one assessment: 1 all ready, -1 failed/timed out/signalled (*errmsg), 0 wait on. */
static int wait_decide(struct agent_session *s, const char *rep, size_t nready, int failed, int64_t now, int64_t deadline,
                       double timeout_s, char **errmsg)
{
    size_t total = s->hosts.n;
    if (nready == total) {
        agent_phase_mark(&s->phases, AGENT_PHASE_WORKERS_READY);
        return 1;
    }
    int sig = pending_stop_signal();
    if (failed)
        kube_set_err(errmsg, "worker failed while waiting (%zu/%zu ready):\n%s", nready, total, rep);
    else if (sig)
        kube_set_err(errmsg, "received %s while waiting for workers (%zu/%zu ready):\n%s", strsignal(sig), nready, total,
                     rep);
    else if (now >= deadline)
        kube_set_err(errmsg, "timed out after %.0f s waiting for workers (%zu/%zu ready):\n%s", timeout_s, nready, total,
                     rep);
    else
        return 0;
    return sig ? -1 : -2; /* -2: the workers' verdict (a failed worker, the bound reached) */
}

int agent_wait_workers(struct agent_session *s, double timeout_s, char **errmsg)
{
    int64_t start = kube_now_ms(), deadline = start + (int64_t)(timeout_s * 1000);
    if (agent_watch_start(s, errmsg) < 0 || wait_synced(s, deadline, errmsg) < 0)
        return -1;
    size_t last_ready = (size_t)-1;
    int64_t last_print = 0;
    uint64_t gen = kube_informer_generation(s->inf);
    for (;;) {
        size_t nready;
        int failed;
        char *rep = agent_unready_report(s, &nready, &failed);
        if (!rep)
            return kube_set_err(errmsg, "out of memory");
        kick_running(s);
        int64_t now = kube_now_ms();
        int d = wait_decide(s, rep, nready, failed, now, deadline, timeout_s, errmsg);
        if (d != 0) {
            if (d > 0)
                KLOG_INFO("%zu/%zu workers ready (%.1f s)", nready, s->hosts.n, (now - start) / 1000.0);
            free(rep);
            return d > 0 ? 0 : d;
        }
        if ((nready != last_ready && now - last_print >= PROGRESS_MIN_MS) || now - last_print >= PROGRESS_IDLE_MS) {
            char first[512];
            first_line(rep, first, sizeof(first));
            KLOG_INFO("%zu/%zu workers ready; waiting for %s", nready, s->hosts.n, first);
            last_print = now;
            last_ready = nready;
        }
        free(rep);
        int64_t wake = deadline - now, until_print = last_print + PROGRESS_MIN_MS - now;
        if (until_print > 0 && until_print < wake)
            wake = until_print + 1;
        if (wake > WAKE_MAX_MS)
            wake = WAKE_MAX_MS; /* notice a blocked termination signal within a second */
        gen = kube_informer_wait_change(s->inf, gen, (long)wake);
    }
}
