/* run.c - `mpi-agent run -- CMD...`: the launcher's main container wrapper.
 * Waits for the workers in-process unless init already did (--no-wait, or its
 * record DEST/init-ready.json still holds), composes the MPI
 * flavour's launch environment (never overriding the user), prints the rank map
 * and supervises CMD, keeping its output in the ConfigMap <job>-log (joblog.c);
 * exits with CMD's exit code. */
#include "commands.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hostfile.h"
#include "initrecord.h"
#include "joblog.h"
#include "launch_env.h"
#include "logx.h"
#include "supervise.h"
#include "holder.h"
#include "prevrun.h"
#include "ranksup.h"
#include "wait.h"
#include "mpik8s/util.h"
#include "kube/log.h"
#include "kube/util.h"

#define SYNC_BOUND_MS 10000

/* The rsh agent mpirun should call: DEST/mpi-rsh, else mpi-rsh beside this binary. */
static char *find_rsh(const struct agent_opts *o)
{
    char *p = mpik8s_program_at(o->dest, "mpi-rsh");
    if (!p)
        p = mpik8s_sibling("mpi-rsh");
    return p ? p : strdup("mpi-rsh");
}

/* Writes a hostfile for workers found without one; sets o->hostfile to it and *wrote. */
static int ensure_hostfile(struct agent_session *s, int *wrote, char **errmsg)
{
    if (access(s->o->hostfile, R_OK) == 0)
        return 0;
    char *text = agent_hostfile_format(&s->hosts, s->o->mpi, s->o->slots);
    char *path = NULL;
    int rc = text ? agent_hostfile_write(text, &path, errmsg) : -1;
    if (!text)
        kube_set_err(errmsg, "out of memory formatting a hostfile");
    free(text);
    if (rc < 0)
        return -1;
    free(s->o->hostfile);
    s->o->hostfile = path;
    *wrote = 1;
    KLOG_INFO("wrote hostfile %s", path);
    return 0;
}

/* 1 when name is a variable that names the rsh agent or selects the rsh launcher. */
static int is_agent_var(const char *name)
{
    static const char *const vars[] = { MPIK8S_OMPI4_AGENT_VAR,    MPIK8S_OMPI5_AGENT_VAR, MPIK8S_MPICH_AGENT_VAR,
                                        MPIK8S_MPICH_LAUNCHER_VAR, MPIK8S_INTEL_AGENT_VAR, MPIK8S_INTEL_LAUNCHER_VAR };
    for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
        if (strcmp(name, vars[i]) == 0)
            return 1;
    return 0;
}

/* Remembers the first agent variable the user set to a value of their own (the launch watch then
 * trusts their launcher: agent/rshwatch.h). ours: the policy's values, by name. */
static void note_user_agent(struct agent_session *s, const struct agent_env_item *it, const struct mpik8s_launch_env *ours)
{
    if (it->action != AGENT_ENV_KEPT || s->user_rsh_var || !is_agent_var(it->name))
        return;
    for (size_t i = 0; i < ours->n; i++)
        if (strcmp(ours->v[i].name, it->name) == 0 && strcmp(ours->v[i].value, it->value) != 0)
            s->user_rsh_var = kube_strdup_printf("%s=%s", it->name, it->value);
}

/* Composes and applies the launch environment. */
static int set_launch_env(struct agent_session *s, char **errmsg)
{
    char *rsh = find_rsh(s->o);
    struct mpik8s_launch_in in = { s->o->mpi, rsh, s->o->hostfile, (long long)s->hosts.n, s->o->slots };
    struct agent_env_plan plan;
    struct mpik8s_launch_env ours;
    if (mpik8s_launch_env(&in, &ours) < 0) {
        free(rsh);
        return kube_set_err(errmsg, "out of memory");
    }
    int rc = agent_env_plan(&in, agent_getenv_process, NULL, &plan);
    if (rc == 0) {
        for (size_t i = 0; i < plan.n; i++) {
            const struct agent_env_item *it = &plan.v[i];
            if (it->action == AGENT_ENV_RAISED)
                KLOG_WARN("%s raised to %s: a lower value deadlocks an attached launch of %zu "
                          "workers",
                          it->name, it->value, s->hosts.n);
            else
                KLOG_DEBUG("%s=%s (%s)", it->name, it->value, it->action == AGENT_ENV_SET ? "set" : "user's");
            note_user_agent(s, it, &ours);
        }
        rc = agent_env_apply(&plan, errmsg);
        agent_env_plan_free(&plan);
    } else {
        kube_set_err(errmsg, "out of memory");
    }
    mpik8s_launch_env_free(&ours);
    free(s->rsh);
    s->rsh = rsh; /* the launch watch names it */
    return rc;
}

/* Without waiting: start the pod cache so the supervisor can watch the workers. */
static void watch_only(struct agent_session *s)
{
    char *err = NULL;
    if (agent_watch_start(s, &err) < 0 || !kube_informer_wait_synced(s->inf, SYNC_BOUND_MS)) {
        KLOG_WARN("cannot watch the workers: %s", err ? err : "pod list timed out");
        kube_informer_free(s->inf);
        s->inf = NULL;
    }
    free(err);
}

/* After `mpi-agent init`: starts the pod cache and trusts init's record when it still holds
 * (same workers, still Ready, younger than the wait's own bound). 1 trusted, 0 wait here. */
static int init_done(struct agent_session *s)
{
    char *path = kube_strdup_printf("%s/%s", s->o->dest, AGENT_INIT_RECORD);
    int present = path && access(path, F_OK) == 0;
    free(path);
    if (!present)
        return 0; /* standalone run: no init before it */
    watch_only(s);
    char *why = NULL;
    int ok = agent_init_record_trust(s, (int64_t)(s->o->timeout_s * 1000), &why);
    if (ok)
        KLOG_INFO("%zu worker(s) ready and %s as mpi-agent init found them (%s/%s); not waiting "
                  "again",
                  s->hosts.n, s->o->no_reach ? "not checked" : "reachable", s->o->dest, AGENT_INIT_RECORD);
    else
        KLOG_INFO("not using mpi-agent init's record: %s; waiting for the workers", why ? why : "?");
    free(why);
    return ok;
}

int agent_cmd_run(struct agent_opts *o)
{
    if (o->argc < 1) {
        fprintf(stderr, "mpi-agent run: missing command (usage: mpi-agent run [options] -- CMD "
                        "[ARGS...])\n");
        return 2;
    }
    /* before any thread exists, so every thread inherits the mask and signals reach signalfd;
     * a SIGTERM during the wait is then noticed when supervision starts (or on exit) */
    sigset_t set;
    agent_supervise_sigset(&set);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    struct agent_session s = { 0 };
    s.o = o;
    s.allow_no_api = 1;
    char *err = NULL, *summary = NULL;
    json_t *prev = agent_prev_run_load(o->dest); /* before this run saves its own */
    int code = 1, wrote_hostfile = 0;
    /* a restarted container is not Ready before its own ranks are up (agent/ranksup.h) */
    if (agent_ranksup_clear(o->dest, &err) < 0) {
        KLOG_WARN("%s", err);
        free(err);
        err = NULL;
    }
    if (agent_session_connect(&s, o, &err) < 0 || agent_workers_find(&s, &err) < 0)
        goto fail;
    if (o->no_wait && !s.no_api)
        watch_only(&s);
    else if (!init_done(&s) && agent_prepare_workers(&s, &err) < 0)
        goto fail;
    if (ensure_hostfile(&s, &wrote_hostfile, &err) < 0 || set_launch_env(&s, &err) < 0)
        goto fail;
    agent_print_rank_map(&s);
    char **held = agent_holder_wrap(o, o->argv); /* NULL: the command runs as it is */
    if (agent_outbuf_init(&s.output, AGENT_OUTBUF_MAX) < 0)
        KLOG_WARN("not keeping the command's output: out of memory");
    struct agent_joblog *jl = agent_joblog_start(&s);
    code = agent_supervise(&s, held ? held : o->argv, &summary);
    agent_joblog_stop(jl);
    if (held)
        free(held[0]);
    free(held);
    if (code == 0)
        KLOG_INFO("%s", summary);
    else
        KLOG_ERROR("%s", summary);
    if (code != 0) {
        agent_prev_run_save(&s, summary); /* this run's own, for the next rerun */
        summary = agent_prev_run_lead(&s, prev, summary);
    }
    goto done;
fail:
    agent_log_lines(KUBE_LOG_ERROR, err ? err : "failed");
    summary = agent_prev_run_lead(
        &s, prev, kube_strdup_printf("launcher failed before starting %s: %s", o->argv[0], err ? err : "unknown error"));
done:
    if (wrote_hostfile && o->hostfile && unlink(o->hostfile) != 0)
        KLOG_DEBUG("removing %s: %s", o->hostfile, strerror(errno));
    agent_finish(&s, summary ? summary : "run");
    free(summary);
    free(err);
    json_decref(prev);
    agent_session_close(&s);
    return code;
}
