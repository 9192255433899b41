/* rshwatch_run.c - the launch watch inside `mpi-agent run` (agent/rshwatch.h): when it is on, the
 * mark mpi-rsh leaves, the clock from the first MPI launcher seen among the command's processes,
 * the launcher's children before its first rsh call, the message when that call did not come, and
 * then the placement check (no rank on the launcher).
 * agent/supervise.c calls it from its event loop. */
#include "rshwatch.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "outbuf.h"
#include "session.h"
#include "kube/log.h"

static const char *env_get(const char *name, void *ud)
{
    (void)ud;
    return getenv(name);
}

/* Why the watch is off for this run, or NULL when it is on. */
static const char *off_because(const struct agent_session *s, char *const *argv)
{
    if (s->o->rsh_timeout_s <= 0)
        return "--rsh-timeout 0";
    if (s->hosts.n == 0)
        return "no workers";
    if (s->launchers_dropped)
        return "the hostfile names the launcher, which may run ranks itself";
    if (s->user_rsh_var)
        return s->user_rsh_var;
    if (agent_rshwatch_informational(argv))
        return "an informational run";
    return NULL;
}

void agent_launchwatch_start(struct agent_launchwatch *lw, struct agent_session *s, char *const *argv, int64_t now)
{
    memset(lw, 0, sizeof(*lw));
    lw->done = 1;
    const char *off = off_because(s, argv);
    if (off) {
        KLOG_DEBUG("launch watch off: %s", off);
        return;
    }
    if (agent_rshwatch_mark_new(&lw->dir, &lw->mark) < 0 || setenv(MPIK8S_RSH_ENV_MARK, lw->mark, 1) != 0) {
        KLOG_WARN("launch watch off: cannot make its mark: %s", strerror(errno));
        agent_launchwatch_end(lw);
        return;
    }
    lw->w.bound_ms = (int64_t)(s->o->rsh_timeout_s * 1000);
    lw->started = now;
    lw->w.seen = argv && argv[0] ? agent_stack_of_program(argv[0]) : AGENT_STACK_NONE;
    lw->w.launcher_at = lw->w.seen != AGENT_STACK_NONE ? now : 0;
    lw->done = 0;
}

/* One look at the launcher's children (foreign: ssh and rsh count, before the first mpi-rsh call):
 * the pid of one that is no launch agent and was the same process under the same name in the last
 * look too (a launcher that starts its agent through `sh -c` shows a shell for the instant before
 * the exec; a rank stays), its launcher's stack in *lst; else 0. */
static pid_t child_look(struct agent_launchwatch *lw, struct agent_session *s, pid_t root, int foreign,
                        enum agent_stack *lst)
{
    char prog[sizeof lw->suspect_comm];
    pid_t pid = agent_rshwatch_local_child(root, s->rsh ? s->rsh : MPIK8S_RSH, foreign, prog, sizeof prog, lst);
    if (!pid || pid != lw->suspect || strcmp(prog, lw->suspect_comm) != 0) {
        lw->suspect = pid;
        snprintf(lw->suspect_comm, sizeof lw->suspect_comm, "%s", pid ? prog : "");
        return 0;
    }
    return pid;
}

/* The failure for pid (its comm in lw->suspect_comm), a rank or Hydra's proxy that the launcher of
 * stack lst started on the launcher, which the hostfile does not name; decides the watch. */
static char *local_failure(struct agent_launchwatch *lw, struct agent_session *s, pid_t pid, enum agent_stack lst,
                           int64_t now)
{
    const char *prog = lw->suspect_comm;
    lw->placing = 0;
    lw->done = lw->failed = 1;
    size_t len = 0;
    char *tail = agent_outbuf_copy(&s->output, &len, NULL);
    enum agent_stack st = agent_stack_better(agent_stack_better(lw->w.seen, lst), agent_stack_of_output(tail, len));
    free(tail);
    int64_t from = lw->w.launcher_at ? lw->w.launcher_at : lw->started;
    return agent_rshwatch_local_message(st, s->o->mpi, prog, (long)pid, (double)(now - from) / 1000.0);
}

/* The placement check's look: a child of the MPI launcher that is no launch agent runs ranks (or
 * Hydra's proxy) on the launcher, which the hostfile does not name. */
static char *placement_look(struct agent_launchwatch *lw, struct agent_session *s, pid_t root, int cmd_done, int64_t now)
{
    if (cmd_done) {
        lw->placing = 0;
        return NULL;
    }
    if (now - lw->last_scan < agent_launchwatch_period_ms(lw, now))
        return NULL;
    lw->last_scan = now;
    enum agent_stack lst = AGENT_STACK_NONE;
    pid_t pid = child_look(lw, s, root, 0, &lst);
    return pid ? local_failure(lw, s, pid, lst, now) : NULL;
}

/* Before the first mpi-rsh call: looks for the launcher (until its stack is known: a generic
 * mpirun may exec prterun) and at its children. One that is no agent of ours, in two looks in a
 * row and with still no mark (mpi-rsh marks before it hands over to ssh), is another way of launch:
 * ssh or rsh (agent_rshwatch.other, decided by agent_rshwatch_decide), or a rank or proxy on the
 * launcher, the placement check's failure (Hydra starts a local proxy before its first remote
 * launch, so which comes first is a matter of timing; the failure is the same). */
static char *launch_look(struct agent_launchwatch *lw, struct agent_session *s, pid_t root, int64_t now)
{
    struct agent_rshwatch *w = &lw->w;
    if (now - lw->last_scan < agent_launchwatch_period_ms(lw, now))
        return NULL;
    lw->last_scan = now;
    if (w->seen == AGENT_STACK_NONE || w->seen == AGENT_STACK_OPENMPI) {
        enum agent_stack st = agent_rshwatch_scan(root);
        if (st != AGENT_STACK_NONE && !w->launcher_at)
            w->launcher_at = now;
        w->seen = agent_stack_better(w->seen, st);
    }
    enum agent_stack lst = AGENT_STACK_NONE;
    pid_t pid = w->launcher_at ? child_look(lw, s, root, 1, &lst) : 0;
    if (!pid || (w->rsh_called = agent_rshwatch_marked(lw->mark)))
        return NULL;
    if (!agent_rshwatch_foreign_agent(lw->suspect_comm))
        return local_failure(lw, s, pid, lst, now);
    w->other = 1;
    w->seen = agent_stack_better(w->seen, lst);
    return NULL;
}

char *agent_launchwatch_step(struct agent_launchwatch *lw, struct agent_session *s, pid_t root, int cmd_done, int exit_code,
                             int64_t now)
{
    if (lw->done)
        return lw->placing ? placement_look(lw, s, root, cmd_done, now) : NULL;
    struct agent_rshwatch *w = &lw->w;
    w->rsh_called = agent_rshwatch_marked(lw->mark);
    if (!cmd_done && !w->rsh_called) {
        char *local = launch_look(lw, s, root, now);
        if (local || lw->done)
            return local;
    }
    enum agent_rshwatch_verdict v = agent_rshwatch_decide(w, now, cmd_done);
    if (v == AGENT_RSHWATCH_WAIT)
        return NULL;
    lw->done = 1;
    size_t len = 0;
    char *tail = v == AGENT_RSHWATCH_FAIL ? agent_outbuf_copy(&s->output, &len, NULL) : NULL;
    if (v == AGENT_RSHWATCH_FAIL && cmd_done && !w->other && !agent_rshwatch_ended_badly(exit_code, tail, len)) {
        KLOG_DEBUG("launch watch: the launcher failed before any launch; its own account stands");
        v = AGENT_RSHWATCH_OK;
    }
    if (v == AGENT_RSHWATCH_OK) {
        free(tail);
        lw->placing = w->rsh_called && !cmd_done;
        lw->suspect = 0;
        lw->suspect_comm[0] = '\0';
        return NULL;
    }
    lw->failed = 1;
    enum agent_stack st = agent_stack_better(w->seen, agent_stack_of_output(tail, len));
    free(tail);
    struct agent_rshwatch_how how = { cmd_done, w->other ? lw->suspect_comm : NULL, (long)lw->suspect };
    return agent_rshwatch_message(st, s->o->mpi, s->rsh ? s->rsh : MPIK8S_RSH, (double)(now - w->launcher_at) / 1000.0, &how,
                                  env_get, NULL);
}

int agent_launchwatch_period_ms(const struct agent_launchwatch *lw, int64_t now)
{
    if (lw->done && !lw->placing)
        return -1;
    if (now - lw->started >= AGENT_RSHWATCH_FAST_MS)
        return 1000;
    return lw->placing ? 250 : 100;
}

void agent_launchwatch_end(struct agent_launchwatch *lw)
{
    if (lw->mark && unsetenv(MPIK8S_RSH_ENV_MARK) != 0)
        KLOG_DEBUG("unsetenv: %s", strerror(errno));
    agent_rshwatch_mark_free(lw->dir, lw->mark);
    lw->dir = lw->mark = NULL;
}
