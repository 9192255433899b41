/* ssh/main.c - mpi-rsh-ssh: mpi-rsh's SSH transport as its own program (mpi-rsh execs it
 * with the same arguments when the transport is ssh; it can also be called directly).
 * `mpi-rsh-ssh [ssh options] HOST COMMAND...` runs COMMAND on HOST's sshd with the job's
 * key pair, verifying the host key (libssh2; lib/ssh_*.c), bridges stdin/stdout/stderr and
 * exits with the remote exit code; 255 on any failure, 128+signal when stopped. Kept apart
 * so the exec transport's process does not load libssh2 and libcrypto (docs/rsh.md). */
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/ssh.h"
#include "../rsh.h"

static int run_ssh(struct rsh_opts *o)
{
    struct kube_ssh_opts s;
    memset(&s, 0, sizeof(s));
    char *idcopy = NULL, *err = NULL;
    s.user = o->user;
    s.port = o->port;
    s.key_dir = o->ssh_dir;
    if (o->identity) {
        idcopy = strdup(o->identity);
        if (idcopy)
            s.key_dir = dirname(idcopy);
    }
    s.connect_timeout_ms = o->connect_timeout_s * 1000;
    s.attempts = o->attempts;
    s.cancel_fd = rsh_sig_pipe[0];
    int code = 255;
    int rc = kube_ssh_run(&s, o->host, o->command, o->no_stdin || rsh_stdin_is_devnull() ? -1 : 0, 1, 2, &code, &err);
    if (rc == KUBE_SSH_ERR_CANCELLED)
        code = 128 + (rsh_got_signal ? rsh_got_signal : SIGTERM);
    else if (rc != 0) {
        fprintf(stderr, "mpi-rsh: ssh: %s\n", err ? err : kube_ssh_stage_name(rc));
        if (code == 0)
            code = 255;
    }
    free(err);
    free(idcopy);
    return code;
}

int main(int argc, char **argv)
{
    struct rsh_opts o;
    int rc = rsh_start(argc, argv, &o, "mpi-rsh-ssh");
    if (rc != RSH_GO_ON)
        return rc;
    int code = run_ssh(&o);
    rsh_mark_end(o.host, code);
    rsh_opts_free(&o);
    return code;
}
