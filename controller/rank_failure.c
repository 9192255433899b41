/* rank_failure.c - the agent's `failure:` line (which rank failed, on which
 * worker pod and node, why; mpik8s/contract.h) in the MPIJob: kept as
 * status.rankFailure (it outlives the launcher pod, as launcherFailure does),
 * reported once the job fails as a RankFailed / RankOOMKilled / WorkerLost
 * Event carrying the last lines of output, and as the failure metric's reason. */
#include "plan.h"
#include "rank_failure.h"
#include "cond.h"
#include "kube/json.h"
#include "kube/util.h"
#include "sync_ctx.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An Event's message: at most this many bytes (the phrase, then the last lines' end). */
#define EVENT_MAX 1024

void rank_failure_remember(struct sync_ctx *c, const json_t *terminated)
{
    json_t *f = mpik8s_termination_failure(kube_json_at_str(terminated, "message"));
    if (!f) {
        json_object_del(c->status, ST_RANK_FAILURE); /* an older attempt's finding is not this one's */
        return;
    }
    if (!json_equal(f, kube_json_at(c->status, ST_RANK_FAILURE)))
        json_object_set(c->status, ST_RANK_FAILURE, f);
    json_decref(f);
}

const char *rank_failure_reason(const json_t *status)
{
    return rank_failure_reason_of(kube_json_at(status, ST_RANK_FAILURE));
}

const char *rank_failure_reason_of(const json_t *failure)
{
    static const char *const known[] = { MPIK8S_FAIL_R_EXIT_CODE, MPIK8S_FAIL_R_SIGNAL, MPIK8S_FAIL_R_OOM,
                                         MPIK8S_FAIL_R_WORKER_LOST };
    const char *r = kube_json_at_str(failure, MPIK8S_FAIL_REASON);
    for (size_t i = 0; r && i < sizeof known / sizeof known[0]; i++)
        if (strcmp(r, known[i]) == 0)
            return known[i];
    return MPIK8S_FAIL_R_UNKNOWN;
}

/* "PHRASE; last lines:\n..." cut to EVENT_MAX (the lines' start goes first); new string. */
static char *event_message(const json_t *f)
{
    const char *phrase = kube_json_at_str(f, MPIK8S_FAIL_MESSAGE);
    const char *lines = kube_json_at_str(f, MPIK8S_FAIL_LAST_LINES);
    char *head = kube_strdup_printf("%s%s", phrase ? phrase : "a rank failed", lines ? "; last lines:\n" : "");
    if (!head || !lines)
        return head;
    size_t hl = strlen(head), ll = strlen(lines), room = hl < EVENT_MAX ? EVENT_MAX - hl : 0;
    const char *tail = ll > room ? lines + ll - room : lines;
    if (tail != lines && strchr(tail, '\n'))
        tail = strchr(tail, '\n') + 1; /* whole lines only */
    char *out = kube_strdup_printf("%s%s", head, tail);
    free(head);
    return out;
}

void rank_failure_report(struct sync_ctx *c)
{
    const json_t *f = kube_json_at(c->status, ST_RANK_FAILURE);
    const char *why = rank_failure_reason(c->status);
    if (!c->p->fail_reason || strcmp(why, MPIK8S_FAIL_R_UNKNOWN) != 0)
        c->p->fail_reason = why;
    if (!f)
        return;
    char *msg = event_message(f);
    const char *reason = strcmp(why, MPIK8S_FAIL_R_OOM) == 0           ? R_RANK_OOM
                         : strcmp(why, MPIK8S_FAIL_R_WORKER_LOST) == 0 ? R_WORKER_LOST
                                                                       : R_RANK_FAILED;
    if (msg)
        plan_event(c->p, "Warning", reason, msg);
    free(msg);
}
