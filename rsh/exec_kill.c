/* exec_kill.c - the best-effort remote kill after a stopped exec stream: a second, short
 * exec that signals every process in the pod carrying the session's tag (rsh_kill_script).
 * Shared by mpi-rsh and the stream holder; kept out of mpi-rsh-ssh (rsh/module.mk), which
 * does not link the exec client. */
#include "rsh.h"

#include <stdlib.h>

#include "kube/exec.h"
#include "kube/log.h"

void rsh_remote_kill(const struct kube_config *cfg, const struct kube_exec_opts *base, const char *tag)
{
    char *script = rsh_kill_script(tag, 1);
    if (!script)
        return;
    struct kube_exec_opts k = *base;
    struct kube_exec_result r;
    k.command = script;
    k.fd_in = -1;
    k.capture = 1;
    k.cancel_fd = 0;
    k.attempts = 2;
    k.retry_budget_ms = 2000;
    k.connect_timeout_ms = 2000;
    k.handshake_timeout_ms = 3000;
    k.timeout_ms = 5000;
    kube_exec_run(cfg, &k, &r);
    KLOG_DEBUG("remote kill of session %s: exit %d%s%s", tag, r.exit_code, r.message ? ": " : "",
               r.message ? r.message : "");
    kube_exec_result_free(&r);
    free(script);
}
