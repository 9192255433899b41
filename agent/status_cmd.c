/* status_cmd.c - `mpi-agent status [-n NS] JOB`: standalone debugging from a laptop
 * (kubeconfig) or inside the launcher: each worker's phase, readiness and reason,
 * a `true` round trip through the job's transport with its time or its error (only
 * to Running pods: the others are listed as skipped, with why),
 * and the hostfile the agent would use. Exit 0 only if every worker is reachable. */
#include "commands.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "podstate.h"
#include "reach.h"
#include "kube/json.h"
#include "kube/log.h"
#include "kube/resource.h"
#include "kube/util.h"

#define STATUS_REACH_S 5.0

/* Prints one row per worker: pod, phase, ready, node, restarts, reason. skip[i] receives why
 * worker i is not checked through the transport (a pod that is not Running has no container
 * to exec into or sshd to answer; new string) or NULL. */
static void print_pods(struct agent_session *s, char **skip)
{
    printf("%-28s %-10s %-6s %-16s %-8s %s\n", "POD", "PHASE", "READY", "NODE", "RESTARTS", "REASON");
    for (size_t i = 0; i < s->hosts.n; i++) {
        struct kube_error ke = KUBE_ERROR_INIT;
        json_t *pod = kube_get(s->client, &KUBE_RES_PODS, s->ns, s->hosts.v[i].pod, &ke);
        struct agent_pod_view v;
        if (!pod && ke.reason != KUBE_NOT_FOUND) {
            printf("%-28s %-10s %-6s %-16s %-8s %s\n", s->hosts.v[i].pod, "?", "?", "?", "?",
                   ke.message ? ke.message : "error");
        } else if (agent_pod_assess(pod, &v) == 0) {
            printf("%-28s %-10s %-6s %-16s %-8d %s\n", s->hosts.v[i].pod, v.phase,
                   v.verdict == AGENT_POD_READY ? "true" : "false", v.node ? v.node : "-", v.restarts,
                   *v.reason ? v.reason : "-");
            if (!pod)
                skip[i] = strdup("pod not found");
            else if (strcmp(v.phase, "Running") != 0)
                skip[i] = kube_strdup_printf("phase %s, not Running%s%s", v.phase, *v.reason ? ": " : "", v.reason);
            agent_pod_view_free(&v);
        }
        kube_error_clear(&ke);
        json_decref(pod);
    }
}

/* Checks the workers not in skip (in parallel, on a session that lists only them) into
 * rr[s->hosts.n]; returns -1 on allocation failure. */
static int reach_running(struct agent_session *s, char **skip, struct agent_reach_result *rr)
{
    struct agent_session sub = *s;
    size_t *idx = calloc(s->hosts.n + 1, sizeof(*idx));
    sub.hosts.v = calloc(s->hosts.n + 1, sizeof(*sub.hosts.v));
    sub.hosts.n = 0;
    if (!idx || !sub.hosts.v) {
        free(idx);
        free(sub.hosts.v);
        return -1;
    }
    for (size_t i = 0; i < s->hosts.n; i++)
        if (!skip[i]) {
            idx[sub.hosts.n] = i;
            sub.hosts.v[sub.hosts.n++] = s->hosts.v[i];
        }
    struct agent_reach_result *sr = NULL;
    int rc = 0;
    if (sub.hosts.n && agent_reach_all(&sub, STATUS_REACH_S, &sr) < 0)
        rc = -1;
    for (size_t k = 0; sr && k < sub.hosts.n; k++)
        rr[idx[k]] = sr[k];
    free(sr); /* the results' strings moved to rr */
    free(idx);
    free(sub.hosts.v);
    return rc;
}

/* Runs the reachability round trip and prints one line per worker; returns failures. */
static int print_reach(struct agent_session *s, char **skip)
{
    struct agent_reach_result *rr = calloc(s->hosts.n + 1, sizeof(*rr));
    if (!rr || reach_running(s, skip, rr) < 0) {
        printf("reachability: out of memory\n");
        free(rr);
        return (int)s->hosts.n;
    }
    printf("\nREACHABILITY (%s `true`)\n", s->o->transport == MPIK8S_TRANSPORT_SSH ? "ssh handshake" : "exec");
    int bad = 0;
    for (size_t i = 0; i < s->hosts.n; i++) {
        bad += !rr[i].ok;
        if (skip[i])
            printf("%-28s SKIPPED %s\n", s->hosts.v[i].pod, skip[i]);
        else if (rr[i].ok)
            printf("%-28s ok      %.1f ms\n", s->hosts.v[i].pod, rr[i].rtt_ms);
        else
            printf("%-28s FAILED  %s\n", s->hosts.v[i].pod, rr[i].error ? rr[i].error : "?");
    }
    agent_reach_results_free(rr, s->hosts.n);
    return bad;
}

/* Finds workers for status: --hostfile, else the job's labels (else MPI_JOB_WORKERS names). */
static int status_workers(struct agent_session *s, char **errmsg)
{
    struct agent_opts *o = s->o;
    if (o->hostfile_given || !o->job)
        return agent_workers_find(s, errmsg);
    json_t *pods = agent_list_worker_pods(s, errmsg);
    if (!pods)
        return -1;
    size_t n = json_array_size(pods);
    json_decref(pods);
    if (n == 0 && o->workers == 0)
        return kube_set_err(errmsg, "job %s/%s: no worker pods (labels mpi_job_name=%s,mpi_role_type=worker)", s->ns, o->job,
                            o->job);
    int saved = o->workers;
    if (n > 0)
        o->workers = 0; /* list by label */
    o->hostfile_given = 0;
    char *hf = o->hostfile;
    o->hostfile = strdup("/nonexistent/mpi-agent-status");
    int rc = agent_workers_find(s, errmsg);
    free(o->hostfile);
    o->hostfile = hf;
    o->workers = saved;
    return rc;
}

int agent_cmd_status(struct agent_opts *o)
{
    if (o->argc > 1) {
        fprintf(stderr, "mpi-agent status: expected one JOB argument, got %d\n", o->argc);
        return 2;
    }
    if (o->argc == 1) {
        free(o->job);
        o->job = strdup(o->argv[0]);
    }
    struct agent_session s = { 0 };
    char *err = NULL;
    int rc = 1;
    if (agent_session_connect(&s, o, &err) < 0 || status_workers(&s, &err) < 0) {
        fprintf(stderr, "mpi-agent status: %s\n", err ? err : "failed");
        goto out;
    }
    printf("JOB %s/%s: %zu worker(s), transport %s\n\n", s.ns, o->job ? o->job : "-", s.hosts.n,
           mpik8s_transport_name(o->transport));
    char **skip = calloc(s.hosts.n + 1, sizeof(*skip));
    if (!skip) {
        fprintf(stderr, "mpi-agent status: out of memory\n");
        goto out;
    }
    print_pods(&s, skip);
    int bad = print_reach(&s, skip);
    for (size_t i = 0; i < s.hosts.n; i++)
        free(skip[i]);
    free(skip);
    char *hf = agent_hostfile_format(&s.hosts, o->mpi, o->slots);
    printf("\nHOSTFILE (%s)\n%s", mpik8s_mpi_flag(o->mpi), hf ? hf : "?\n");
    free(hf);
    printf("\n%s: %d of %zu worker(s) unreachable\n", bad ? "NOT READY" : "OK", bad, s.hosts.n);
    rc = bad ? 1 : 0;
out:
    free(err);
    agent_session_close(&s);
    return rc;
}
