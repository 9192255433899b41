/* main.c - mpi-rsh: the rsh/ssh agent MPI launchers call to start their daemons
 * in worker pods: `mpi-rsh [ssh options] HOST COMMAND...`. Runs COMMAND with
 * /bin/sh -c in pod HOST through the Kubernetes exec API (the SSH transport is
 * the sibling program mpi-rsh-ssh, ssh/main.c, started in its place), bridges
 * stdin/stdout/stderr and exits with the remote exit code; 255 on any failure,
 * 128+signal when stopped by SIGTERM/SIGINT/SIGHUP. See docs/rsh.md. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kube/config.h"
#include "kube/exec.h"
#include "kube/log.h"
#include "kube/util.h"
#include "mpik8s/util.h"
#include "holder_proto.h"
#include "rsh.h"

static void die_msg(const struct rsh_opts *o, const char *pod, const char *msg)
{
    (void)o;
    fprintf(stderr, "mpi-rsh: %s%s%s\n", pod ? pod : "", pod ? ": " : "", msg);
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
    if (!o->namespace)
        o->namespace = fqdn_ns = rsh_host_namespace(o->host);
    if (!o->namespace)
        o->namespace = cfg->namespace ? cfg->namespace : "default";
    int tagged = !o->no_session_tag && rsh_session_tag(tag) == 0;
    cmd = rsh_remote_command(o->command, tagged ? tag : NULL);
    if (!cmd) {
        die_msg(o, pod, "out of memory");
        goto out;
    }
    struct kube_exec_opts x;
    struct kube_exec_result r;
    kube_exec_opts_default(&x);
    if (!o->tls_dir_set)
        o->tls_dir = kube_tls_session_dir_default(); /* NULL (no memory): no files */
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
    int outcome = kube_exec_run(cfg, &x, &r);
    if (outcome == KUBE_EXEC_STREAM_ERROR && r.cut && tagged && o->reattach_s > 0)
        outcome = rsh_reattach(cfg, &x, tag, o->reattach_s, 2, &r);
    code = r.exit_code;
    if (outcome == KUBE_EXEC_CANCELLED) {
        if (tagged)
            rsh_remote_kill(cfg, &x, tag);
        code = 128 + (rsh_got_signal ? rsh_got_signal : SIGTERM);
    } else if (r.message && (outcome != KUBE_EXEC_EXITED || code == 255)) {
        die_msg(o, pod, r.message);
    }
    if (code == 0 && outcome != KUBE_EXEC_EXITED)
        code = 255; /* never 0 without a Success status */
    kube_exec_result_free(&r);
out:
    free(err);
    free(cmd);
    free(fqdn_ns);
    kube_config_free(cfg);
    return code;
}

/* With a stream holder serving this launch ($MPI_RSH_HOLDER) and no configuration of our own
 * given, becomes mpi-rsh-thin (libc only), which hands this stream to the holder. Returns
 * only when that cannot be done (this process then runs the stream itself). */
static void hand_to_holder(const struct rsh_opts *o, const char *pod, int argc, char **argv)
{
    const char *sock = getenv(RSH_HOLDER_ENV);
    if (!sock || !*sock || o->kubeconfig || o->context || !o->command)
        return;
    char *ns = o->namespace ? NULL : rsh_host_namespace(o->host);
    char nums[5][16];
    snprintf(nums[0], sizeof nums[0], "%d", o->proto);
    snprintf(nums[1], sizeof nums[1], "%d", o->ping_ms);
    snprintf(nums[2], sizeof nums[2], "%d", o->attempts);
    snprintf(nums[3], sizeof nums[3], "%d", o->connect_timeout_s);
    const char *f[RSH_HOLDER_NFIELDS] = {
        [RSH_HF_NAMESPACE] = o->namespace ? o->namespace
                             : ns         ? ns
                                          : "",
        [RSH_HF_POD] = pod,
        [RSH_HF_CONTAINER] = o->container ? o->container : "",
        [RSH_HF_COMMAND] = o->command,
        [RSH_HF_STDIN] = o->no_stdin || rsh_stdin_is_devnull() ? "0" : "1",
        [RSH_HF_PROTO] = nums[0],
        [RSH_HF_PING_MS] = nums[1],
        [RSH_HF_ATTEMPTS] = nums[2],
        [RSH_HF_CONNECT_S] = nums[3],
        [RSH_HF_TAG] = o->no_session_tag ? "0" : "1",
    };
    char **av = calloc((size_t)argc + RSH_HOLDER_NFIELDS + 4, sizeof *av);
    if (av) {
        int n = 0;
        av[n++] = "mpi-rsh-thin";
        av[n++] = (char *)sock;
        for (int i = 0; i < RSH_HOLDER_NFIELDS; i++)
            av[n++] = (char *)f[i];
        av[n++] = "--";
        for (int i = 0; i < argc; i++)
            av[n++] = argv[i];
        rsh_exec_sibling("mpi-rsh-thin", av);
        KLOG_INFO("cannot start mpi-rsh-thin (%s): running the stream in this process", strerror(errno));
    }
    free(av);
    free(ns);
}

int main(int argc, char **argv)
{
    struct rsh_opts o;
    char *err = NULL;
    int rc = rsh_start(argc, argv, &o, "mpi-rsh");
    if (rc != RSH_GO_ON)
        return rc;
    /* mpirun called us: mpi-agent's launch watch counts this (docs/agent.md "No rsh call") */
    if (mpik8s_rsh_mark(o.host) < 0)
        KLOG_DEBUG("%s: %s", MPIK8S_RSH_ENV_MARK, strerror(errno));
    if (o.transport == MPIK8S_TRANSPORT_SSH) {
        rsh_opts_free(&o);
        return rsh_exec_ssh_program(argv); /* mpi-rsh-ssh, same arguments */
    }
    char *pod = mpik8s_host_to_pod(o.host, &err);
    if (pod)
        hand_to_holder(&o, pod, argc, argv);
    int code = pod ? run_exec(&o, pod) : 255;
    if (!pod)
        fprintf(stderr, "mpi-rsh: %s\n", err);
    rsh_mark_end(o.host, code);
    free(pod);
    free(err);
    rsh_opts_free(&o);
    return code;
}
