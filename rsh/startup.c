/* startup.c - what both mpi-rsh programs (exec: main.c, SSH: ssh/main.c) share about
 * their process: the signal self-pipe set up first (sigpipe.c: a stop closes the stream and
 * the exit code is 128+signal), the command line and environment read (--help, --version
 * and usage errors answered), the log level set, whether stdin is /dev/null (then no stdin is
 * forwarded), and, at the end, a daemon's non-zero end told to mpi-agent's daemon-exit stop. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kube/log.h"
#include "mpik8s/util.h"
#include "rsh.h"

void rsh_mark_end(const char *host, int code)
{
    if (code == 0 || rsh_got_signal) /* mpirun stopped this launch: not the daemon's own end */
        return;
    if (mpik8s_rsh_mark_exit(host, code) < 0)
        KLOG_DEBUG("%s: %s", MPIK8S_RSH_ENV_MARK, strerror(errno));
}

int rsh_stdin_is_devnull(void)
{
    struct stat a, b;
    return fstat(0, &a) == 0 && stat("/dev/null", &b) == 0 && S_ISCHR(a.st_mode) && a.st_rdev == b.st_rdev;
}

/* --help / --version on stdout: 0, or 255 when stdout cannot take it. */
static int print_info(const struct rsh_opts *o, const char *prog)
{
    if (o->info == RSH_INFO_HELP)
        rsh_usage(stdout, prog);
    else
        printf("%s %s\n", prog, RSH_VERSION);
    return fflush(stdout) == 0 && !ferror(stdout) ? 0 : 255;
}

int rsh_start(int argc, char **argv, struct rsh_opts *o, const char *prog)
{
    char *err = NULL;
    kube_log_set_component("mpi-rsh");
    if (rsh_signals_setup() < 0) { /* first, so a signal during start-up is never lost */
        fprintf(stderr, "mpi-rsh: cannot install signal handlers: %s\n", strerror(errno));
        return 255;
    }
    int rc = rsh_parse_args(argc, argv, o, &err);
    if (rc == 0 && o->info) {
        rc = print_info(o, prog);
        rsh_opts_free(o);
        return rc;
    }
    if (rc < 0 || rsh_apply_env(o, &err) < 0) {
        fprintf(stderr, "mpi-rsh: %s\n", err ? err : "bad arguments"); /* both programs' messages say mpi-rsh */
        if (o->usage_error) /* as ssh: the usage follows an unknown option, on stderr, exit 255 */
            rsh_usage(stderr, prog);
        free(err);
        rsh_opts_free(o);
        return 255;
    }
    kube_log_set_level(o->verbose ? KUBE_LOG_INFO + o->verbose : KUBE_LOG_WARN);
    return RSH_GO_ON;
}
