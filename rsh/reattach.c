/* reattach.c - after an exec stream cut without an exit status (a kubelet restart cuts every
 * stream through it; the exec'd processes live on): reconnect to the same pod and container with
 * the wait script (rsh_wait_script), which waits for the session's tagged processes to be gone and
 * prints the exit code the session's shell left behind. Shared by mpi-rsh and the stream holder;
 * kept out of mpi-rsh-ssh with exec_kill.c (rsh/module.mk). docs/rsh.md "Reattach". */
#include "rsh.h"

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/exec.h"
#include "kube/log.h"
#include "kube/util.h"

#define PAUSE_MS 1000 /* between two tries, after a refusal or a cut */
/* How long a 400/404 refusal is retried: a kubelet that has just restarted answers 404 "pod does
 * not exist" until it has heard of its pods again (measured on the real cluster, docs/reliability.md
 * 16); for a pod that is really gone this is how long the reattach takes to say so. */
#define NOT_FOUND_GRACE_MS 15000

/* Sleeps ms unless cancel_fd becomes readable first; 1 if cancelled. */
static int pause_or_cancel(int cancel_fd, int64_t ms)
{
    if (ms <= 0)
        return 0;
    if (cancel_fd <= 0) {
        kube_sleep_ms(ms);
        return 0;
    }
    struct pollfd p = { .fd = cancel_fd, .events = POLLIN };
    return poll(&p, 1, (int)ms) > 0;
}

/* A refusal that will not change (credentials, RBAC): no retry. */
static int refusal_final(const struct kube_exec_result *r) { return r->http_code == 401 || r->http_code == 403; }

/* The pod or its container not there (yet, after a kubelet restart; or any more). */
static int refusal_not_found(const struct kube_exec_result *r) { return r->http_code == 400 || r->http_code == 404; }

/* One wait exec. 1 when r decided the outcome (*code, or 255 with *msg), 0 to try again (*alive 1
 * when the session was seen running, -1 after a 400/404 refusal), -1 when cancelled. */
static int try_once(const struct kube_config *cfg, const struct kube_exec_opts *w, int *alive, int *code, char **msg,
                    char **last)
{
    struct kube_exec_result r;
    int outcome = kube_exec_run(cfg, w, &r), attached = 0, decided = 1;
    int got = rsh_wait_parse(r.out, &attached, code);
    *alive = attached ? 1 : outcome == KUBE_EXEC_REFUSED && refusal_not_found(&r) ? -1 : 0;
    if (outcome == KUBE_EXEC_CANCELLED) {
        decided = -1;
    } else if (got == RSH_WAITED_EXIT) {
        decided = 1;
    } else if (got == RSH_WAITED_GONE) {
        kube_set_err(msg, "the session's processes are gone and left no exit code (killed, or %s not writable)", RSH_RC_DIR);
    } else if (outcome == KUBE_EXEC_EXITED && attached && r.exit_code == 0) {
        decided = 0; /* the short look: the session runs */
    } else if (outcome == KUBE_EXEC_EXITED) {
        kube_set_err(msg, "the wait in the pod ended with exit %d%s%.*s", r.exit_code, r.err_len ? ": " : "",
                     r.err_len ? (int)strcspn(r.err, "\n") : 0, r.err_len ? r.err : ""); /* its first line */
    } else if ((outcome == KUBE_EXEC_REFUSED && !refusal_final(&r)) || (outcome == KUBE_EXEC_STREAM_ERROR && r.cut)) {
        decided = 0;
        free(*last);
        *last = r.message;
        r.message = NULL;
    } else {
        kube_set_err(msg, "%s", r.message ? r.message : "exec failed");
    }
    if (decided == 1 && got != RSH_WAITED_EXIT)
        *code = 255;
    kube_exec_result_free(&r);
    return decided;
}

int rsh_reattach(const struct kube_config *cfg, const struct kube_exec_opts *base, const char *tag, int bound_s, int fd_err,
                 struct kube_exec_result *r)
{
    char *probe = rsh_wait_script(tag, 0), *follow = rsh_wait_script(tag, 1), *last = NULL, *msg = NULL;
    dprintf(fd_err, "mpi-rsh: %s: %s; reattaching (up to %d s)\n", base->pod,
            r->message ? r->message : "exec stream cut without an exit status", bound_s);
    struct kube_exec_opts w = *base;
    w.fd_in = -1;
    w.capture = 1;
    w.attempts = 1000; /* bounded by the time left */
    int64_t deadline = kube_now_ms() + (int64_t)bound_s * 1000;
    int code = 255, decided = probe && follow ? 0 : 1, tries = 0, said = 0;
    int64_t not_found_since = 0; /* the first of the 400/404 refusals in a row */
    if (decided)
        kube_set_err(&msg, "out of memory");
    while (!decided) {
        int64_t left = deadline - kube_now_ms();
        if (left <= 0)
            break;
        w.retry_budget_ms = left; /* and no one attempt outlasts the bound */
        w.connect_timeout_ms = (int)(left < 10000 ? left : base->connect_timeout_ms);
        w.handshake_timeout_ms = (int)(left < 30000 ? left : base->handshake_timeout_ms);
        w.command = said ? follow : probe; /* first a short look, then the long wait */
        int alive = 0;
        tries++;
        decided = try_once(cfg, &w, &alive, &code, &msg, &last);
        if (alive > 0) /* the session was running: the bound starts again from here */
            deadline = kube_now_ms() + (int64_t)bound_s * 1000;
        not_found_since = alive < 0 ? (not_found_since ? not_found_since : kube_now_ms()) : 0;
        if (!decided && not_found_since && kube_now_ms() - not_found_since >= NOT_FOUND_GRACE_MS) {
            kube_set_err(&msg, "%s (for %d s)", last ? last : "not found", NOT_FOUND_GRACE_MS / 1000);
            decided = 1;
        }
        if (alive > 0 && !said++) {
            dprintf(fd_err, "mpi-rsh: %s: reattached: the session runs on (its output since the cut is lost)\n", base->pod);
            continue;
        }
        if (!decided && pause_or_cancel(w.cancel_fd, PAUSE_MS))
            decided = -1;
    }
    if (!decided)
        kube_set_err(&msg, "no answer within %d s (%d tries): %s", bound_s, tries, last ? last : "none");
    free(r->message);
    r->message = NULL;
    r->exit_code = decided < 0 || msg ? 255 : code;
    r->outcome = decided < 0 ? KUBE_EXEC_CANCELLED : msg ? KUBE_EXEC_STREAM_ERROR : KUBE_EXEC_EXITED;
    r->cut = 0; /* what the cut meant is known now */
    if (msg)
        kube_set_err(&r->message, "exec stream cut without an exit status, and reattach failed: %s", msg);
    else if (decided > 0)
        KLOG_INFO("%s: reattached: the session exited %d", base->pod, code);
    free(msg);
    free(last);
    free(probe);
    free(follow);
    return r->outcome;
}
