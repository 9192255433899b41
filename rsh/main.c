/* main.c - mpi-rsh: the rsh/ssh agent MPI launchers call to start their daemons
 * in worker pods: `mpi-rsh [ssh options] HOST COMMAND...`. Runs COMMAND with
 * /bin/sh -c in pod HOST through the Kubernetes exec API (the SSH transport is
 * the sibling program mpi-rsh-ssh, ssh/main.c, started in its place), bridges
 * stdin/stdout/stderr and exits with the remote exit code; 255 on any failure,
 * 128+signal when stopped by SIGTERM/SIGINT/SIGHUP. See docs/rsh.md. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kube/config.h"
#include "kube/exec.h"
#include "kube/log.h"
#include "kube/util.h"
#include "rsh.h"

static void die_msg(const struct rsh_opts *o, const char *pod, const char *msg)
{
    (void)o;
    fprintf(stderr, "mpi-rsh: %s%s%s\n", pod ? pod : "", pod ? ": " : "", msg);
}

/* Best-effort: a second exec that signals the session's processes in the pod. */
static void remote_kill(const struct kube_config *cfg, const struct kube_exec_opts *base, const char *tag)
{
    char *script = rsh_kill_script(tag, 1);
    if (!script) return;
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
    KLOG_DEBUG("remote kill of session %s: exit %d%s%s", tag, r.exit_code, r.message ? ": " : "", r.message ? r.message : "");
    kube_exec_result_free(&r);
    free(script);
}

static int run_exec(struct rsh_opts *o, const char *pod)
{
    struct kube_config *cfg = NULL;
    char *err = NULL, *fqdn_ns = NULL, *cmd = NULL, tag[17];
    int code = 255;
    if (kube_config_load(o->kubeconfig, o->context, &cfg, &err) < 0) {
        die_msg(o, pod, err ? err : "cannot load the Kubernetes client configuration");
        goto out;
    }
    if (!o->namespace) o->namespace = fqdn_ns = rsh_host_namespace(o->host);
    if (!o->namespace) o->namespace = cfg->namespace ? cfg->namespace : "default";
    int tagged = !o->no_session_tag && rsh_session_tag(tag) == 0;
    cmd = rsh_remote_command(o->command, tagged ? tag : NULL);
    if (!cmd) { die_msg(o, pod, "out of memory"); goto out; }
    struct kube_exec_opts x;
    struct kube_exec_result r;
    kube_exec_opts_default(&x);
    if (!o->tls_dir_set) o->tls_dir = kube_tls_session_dir_default(); /* NULL (no memory): no files */
    x.namespace = o->namespace;
    x.pod = pod;
    x.container = o->container;
    x.command = cmd;
    x.fd_in = o->no_stdin || rsh_stdin_is_devnull() ? -1 : 0;
    x.proto = o->proto == 5 ? KUBE_EXEC_PROTO_V5 : o->proto == 4 ? KUBE_EXEC_PROTO_V4 : KUBE_EXEC_PROTO_AUTO;
    x.attempts = o->attempts;
    x.connect_timeout_ms = o->connect_timeout_s * 1000;
    x.ping_interval_ms = o->ping_ms;
    x.cancel_fd = rsh_sig_pipe[0];
    x.user_agent = "mpi-rsh/0.1";
    x.tls_session_dir = o->tls_dir;
    code = kube_exec_run(cfg, &x, &r);
    if (r.outcome == KUBE_EXEC_CANCELLED) {
        if (tagged) remote_kill(cfg, &x, tag);
        code = 128 + (rsh_got_signal ? rsh_got_signal : SIGTERM);
    } else if (r.message && (r.outcome != KUBE_EXEC_EXITED || code == 255)) {
        die_msg(o, pod, r.message);
    }
    if (code == 0 && r.outcome != KUBE_EXEC_EXITED) code = 255; /* never 0 without a Success status */
    kube_exec_result_free(&r);
out:
    free(err);
    free(cmd);
    free(fqdn_ns);
    kube_config_free(cfg);
    return code;
}

int main(int argc, char **argv)
{
    struct rsh_opts o;
    char *err = NULL;
    if (rsh_start(argc, argv, &o) != 0) return 255;
    if (o.transport == RSH_SSH) {
        rsh_opts_free(&o);
        return rsh_exec_ssh_program(argv); /* mpi-rsh-ssh, same arguments */
    }
    char *pod = rsh_host_to_pod(o.host, &err);
    int code = pod ? run_exec(&o, pod) : 255;
    if (!pod) fprintf(stderr, "mpi-rsh: %s\n", err);
    free(pod);
    free(err);
    rsh_opts_free(&o);
    return code;
}
